"""A fake replayer for the --commits and --sweep tests: the world's behaviour injected
as a function of the plan, every build and run recorded."""
from __future__ import annotations

import dataclasses
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from runner.capsules.model import Capsule, Command, Failure, Format, FrozenMap, Provenance
from runner.engine import Mount
from runner.errors import BuildFailed, CapsuleError
from runner.build.plan import BaseImage, Plan, Runtime, Source, Tool
from runner.verdict.judge import classify
from runner.build.images import ImageBank
from runner.replay import Attempt, BuiltImage, Expected

RECORDED = "exit1:0aee0834ac9c4d2d"
OTHER = "exit2:1111111111111111"
BOOKWORM = BaseImage("debian", "bookworm", "12", "2.36", "3.11")
Outcome = Literal["recorded", "pass", "other"]


def capsule(path: str, failed: bool) -> Capsule:
    cmd = Command(argv=("npm", "test"), cwd=".", exit_code=1 if failed else 0, outcome="fail" if failed else "pass",
                  failure=Failure(RECORDED, ("FAIL test/time.test.ts",)) if failed else None)
    return Capsule(Provenance(Format.TWIN, "1", path), cmd)


def plan(commit: str | None = "a" * 40, diff: str = "", node: str = "22.11.0", npm: str = "10.9.0",
         six: str | None = None, lodash: str = "4.17.21", remote: str | None = "https://example.org/r.git") -> Plan:
    return Plan(title="t", capsule_id="c0ffee00", base=BOOKWORM, argv=("npm", "test"),
                runtimes=(Runtime("node", node, node, "nodejs.org", True),), tools=(Tool("npm", npm),),
                node_pins=FrozenMap({"lodash": lodash}),
                python_pins=FrozenMap({"six": six} if six else {}),
                source=Source(remote, commit, diff) if commit else None)


class FakeProgress:
    def __init__(self) -> None:
        self.said: list[str] = []

    def say(self, text: str) -> None:
        self.said.append(text)

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        self.said.append(name)
        yield


Rule = Callable[[Plan, int], tuple[int, str]]  # (plan, attempt number for that plan) -> exit code, signature


class RuleReplayer:
    """The Replayer API, with the world's behaviour injected: what fails, what cannot build."""

    def __init__(self, capsules: dict[str, tuple[Capsule, Plan]], rule: Rule,
                 broken: Callable[[Plan], bool] = lambda p: False,
                 broken_message: Callable[[Plan], str] = lambda p: "no such release") -> None:
        self.capsules = capsules
        self.rule, self.broken, self.broken_message = rule, broken, broken_message
        self.built: list[Plan] = []
        self.ran: list[Plan] = []
        self.mounts: list[tuple[Mount, ...]] = []
        self.keep_asked: list[bool | None] = []  # each attempt's keep (--keep: the bad end's may be kept)
        self.fill_go: list[bool] = []  # each attempt's fill_go (a trial between the ends: False)
        self.tries: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.closed = False
        self._bank: ImageBank[BuiltImage] = ImageBank(self.image)  # the image service's build-once, as Replayer.fetch

    def fetch(self, p: Plan) -> tuple[BuiltImage, bool]:
        return self._bank.fetch(p)

    def load(self, path: Path) -> tuple[Capsule, Plan]:
        if str(path) not in self.capsules:
            raise CapsuleError(path, "no such file")
        return self.capsules[str(path)]

    def image(self, p: Plan) -> BuiltImage:
        with self.lock:
            self.built.append(p)
        if self.broken(p):
            raise BuildFailed(self.broken_message(p))
        return BuiltImage(f"img{len(self.built)}", True, 2.0)

    def attempt(self, p: Plan, image: BuiltImage, expected: Expected | None = None, *,
                mounts: tuple[Mount, ...] = (), keep: bool | None = None, fill_go: bool = True) -> Attempt:
        with self.lock:
            self.ran.append(p)
            self.fill_go.append(fill_go)
            self.keep_asked.append(keep)
            self.mounts.append(mounts)
            self.tries[repr(p)] += 1
            n = self.tries[repr(p)]
        code, sig = self.rule(p, n)
        att = Attempt(code, None, sig, (), 0.5)
        return dataclasses.replace(att, classification=classify(expected, att)) if expected is not None else att

    def close(self) -> None:
        self.closed = True


_ENDS = {"recorded": (1, RECORDED), "pass": (0, "exit0:0000000000000000"), "other": (2, OTHER)}


class FakeReplayer(RuleReplayer):
    """Outcomes named per plan ("recorded", "pass", "other")."""

    def __init__(self, good: Plan, bad: Plan, outcome: Callable[[Plan], Outcome],
                 broken: Callable[[Plan], bool] = lambda p: False, bad_capsule: Capsule | None = None) -> None:
        super().__init__({"good.json": (capsule("good.json", False), good),
                          "bad.json": (bad_capsule or capsule("bad.json", True), bad)},
                         lambda p, n: _ENDS[outcome(p)], broken)


def commit_of(p: Plan) -> str:
    assert p.source is not None and p.source.commit is not None
    return p.source.commit


def node_of(p: Plan) -> str:
    rt = p.runtime("node")
    assert rt is not None
    return rt.version
