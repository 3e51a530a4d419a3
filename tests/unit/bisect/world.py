"""The world of the fact-bisect tests: two capsules (a failing one in New York on node 20 with
lodash 4.17.20 and CI=true, a passing one in UTC), their plans, and a fake replayer whose runs
fail as the test's rule says; shared by the bisect, CLI and table tests."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from runner.bisect.env import bisect_capsules
from runner.bisect.trial import BisectSettings
from runner.build.plan import BaseImage, EnvSetting, Plan, Runtime, Source
from runner.capsules.model import Capsule, Command, EnvFact, Failure, Format, FrozenMap, Provenance
from runner.replay import Progress, ReplayOptions

from tests.unit.bisect.fakes import FakeProgress, Rule, RuleReplayer

RECORDED = "exit1:0aee0834ac9c4d2d"
BOOKWORM = BaseImage("debian", "bookworm", "12", "2.36", "3.11")
GOOD_COMMIT, BAD_COMMIT = "a" * 40, "b" * 40


def capsule(path: str, failed: bool, env: dict[str, EnvFact] | None = None, arch: str | None = None) -> Capsule:
    from runner.capsules.model import Platform

    cmd = Command(argv=("npx", "jest"), cwd=".", exit_code=1 if failed else 0, outcome="fail" if failed else "pass",
                  failure=Failure(RECORDED, ("FAIL test/time.test.ts",)) if failed else None)
    return Capsule(Provenance(Format.TWIN, "1", path), cmd, platform=Platform(os="linux", arch=arch),
                   env=FrozenMap(env or {}))


def plan(tz: str = "UTC", node: str = "22.11.0", lodash: str = "4.17.21", ci: str | None = None,
         commit: str = GOOD_COMMIT, diff: str = "", argv: tuple[str, ...] = ("npx", "jest"),
         lang: str | None = None) -> Plan:
    env = {"TZ": EnvSetting("set", tz)}
    if ci is not None:
        env["CI"] = EnvSetting("set", ci)
    if lang is not None:
        env["LANG"] = EnvSetting("set", lang)
    return Plan(title="t", capsule_id=commit[:8], base=BOOKWORM, argv=argv,
                runtimes=(Runtime("node", node, node, "nodejs.org", True),),
                node_pins=FrozenMap({"lodash": lodash}), source=Source("https://example.org/r.git", commit, diff),
                env=FrozenMap(sorted(env.items())), locales=(lang,) if lang else ())


GOOD = plan()
BAD = plan(tz="America/New_York", node="20.18.0", lodash="4.17.20", ci="true", commit=BAD_COMMIT)


def tz_of(p: Plan) -> str:
    return p.env["TZ"].value


def node_of(p: Plan) -> str:
    rt = p.runtime("node")
    assert rt is not None
    return rt.version


def fails_when(pred: Callable[[Plan], bool]) -> Rule:
    return lambda p, n: (1, RECORDED) if pred(p) else (0, "exit0:0000000000000000")


class FakeReplayer(RuleReplayer):
    """The two capsules of these tests, with the world's behaviour as a rule."""

    def __init__(self, rule: Rule, good: Capsule | None = None, bad: Capsule | None = None,
                 good_plan: Plan = GOOD, bad_plan: Plan = BAD,
                 broken: Callable[[Plan], bool] = lambda p: False) -> None:
        super().__init__({"good.json": (good or capsule("good.json", False), good_plan),
                          "bad.json": (bad or capsule("bad.json", True), bad_plan)},
                         rule, broken, lambda p: f"node {node_of(p)}: no such release")


def run(fake: FakeReplayer, attempts: int | None = None, jobs: int = 1):  # type: ignore[no-untyped-def]
    return bisect_capsules(fake, fake, Path("bad.json"), Path("good.json"), BisectSettings(attempts, jobs), FakeProgress())


def tz_rule() -> Rule:
    return fails_when(lambda p: tz_of(p) == "America/New_York")


def use(monkeypatch: pytest.MonkeyPatch, fake: FakeReplayer) -> list[ReplayOptions]:
    """`replay bisect` in-process with this fake as its replayer; the options it was made with."""
    import runner.cli.bisect as cli

    seen: list[ReplayOptions] = []

    def make(options: ReplayOptions, progress: Progress) -> FakeReplayer:
        seen.append(options)
        return fake

    monkeypatch.setattr(cli, "Replayer", make)

    monkeypatch.setattr(cli, "Loader", lambda options: fake)  # the fake loads the capsules too
    return seen
