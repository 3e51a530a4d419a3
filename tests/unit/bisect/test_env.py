"""bisect_session: two capsules -> ends checked -> the search, on a fake replayer."""
from __future__ import annotations

from pathlib import Path

import pytest

from runner.bisect.env import at_bad_commit, bisect_capsules, shown
from runner.bisect.rules import RATE_FIRST
from runner.bisect.trial import BisectSettings
from runner.capsules.model import EnvFact
from runner.errors import BuildFailed, CapsuleError, UsageError
from runner.build.plan import EnvSetting, Plan, Runtime

from tests.unit.bisect.fakes import FakeProgress
from tests.unit.bisect.world import (BAD_COMMIT, GOOD_COMMIT, RECORDED, FakeReplayer, capsule,
                                     fails_when, node_of, plan, run, tz_of)

CANDIDATES = ["env:CI", "env:TZ", "pin:node:lodash", "runtime:node"]


def test_run_time_culprit_builds_nothing_beyond_the_ends() -> None:
    fake = FakeReplayer(fails_when(lambda p: tz_of(p) == "America/New_York"))
    result = run(fake)
    assert result.status == "found"
    assert result.minimal == ("env:TZ",)
    assert sorted(c.key for c in result.candidates) == CANDIDATES
    tz = next(c for c in result.candidates if c.key == "env:TZ")
    assert (tz.stage, tz.good, tz.bad) == ("run", "UTC", "America/New_York")
    assert len(fake.built) == 2  # the good end's image and the bad end's, nothing else
    assert result.variant_builds == 1
    assert all(tz_of(p) == "UTC" and "CI" not in p.env for p in fake.built)  # run-time facts never rebuild


def test_build_time_culprit_and_images_built_once() -> None:
    for jobs in (1, 4):
        fake = FakeReplayer(fails_when(lambda p: node_of(p).startswith("20.")))  # a bisect's own replayer and images
        result = run(fake, jobs=jobs)
        assert result.minimal == ("runtime:node",)
        assert len({repr(p) for p in fake.built}) == len(fake.built)  # never the same image twice
        assert len(fake.built) == len({t.image_keys for t in result.trials})
        assert sum(t.built for t in result.trials) == len(fake.built)


def test_interaction_of_a_run_time_and_a_build_time_fact() -> None:
    fake = FakeReplayer(fails_when(lambda p: tz_of(p) == "America/New_York" and node_of(p).startswith("20.")))
    result = run(fake)
    assert set(result.minimal) == {"env:TZ", "runtime:node"}
    assert any("interaction" in n for n in result.notes)


def test_trials_run_at_the_bad_commit_with_the_good_command() -> None:
    fake = FakeReplayer(fails_when(lambda p: tz_of(p) == "America/New_York"),
                        bad_plan=plan(tz="America/New_York", commit=BAD_COMMIT, argv=("npm", "test")))
    result = run(fake)
    assert {p.source.commit for p in fake.ran if p.source} == {BAD_COMMIT}
    assert {p.argv for p in fake.ran} == {("npx", "jest")}
    assert any("different commits" in n and "bad commit" in n for n in result.notes)
    nv = {n.key: n for n in result.not_varied}
    assert (nv["source:commit"].good, nv["source:commit"].bad) == (GOOD_COMMIT, BAD_COMMIT)
    assert (nv["command:argv"].good, nv["command:argv"].bad) == ("npx jest", "npm test")
    assert "env:TZ" not in nv


def test_same_commit_says_nothing_about_commits() -> None:
    fake = FakeReplayer(fails_when(lambda p: tz_of(p) == "America/New_York"),
                        bad_plan=plan(tz="America/New_York"))
    result = run(fake)
    assert result.minimal == ("env:TZ",)
    assert not any("commit" in n for n in result.notes)
    assert result.not_varied == ()


def test_the_good_diff_stays_a_fact_on_the_bad_commit() -> None:
    good = plan(diff="--- a/x\n+++ b/x\n")
    bad = plan(commit=BAD_COMMIT, diff="--- a/y\n+++ b/y\n@@\n")
    base = at_bad_commit(good, bad)
    assert base.source is not None and base.source.commit == BAD_COMMIT and base.source.diff == good.source.diff  # type: ignore[union-attr]
    fake = FakeReplayer(fails_when(lambda p: bool(p.source and "b/y" in p.source.diff)), good_plan=good, bad_plan=bad)
    result = run(fake)
    assert result.minimal == ("source:diff",)
    diff = result.candidates[0]
    assert diff.bad is not None and diff.bad.startswith("4 lines")
    assert any("uncommitted diff" in n for n in result.notes)


def test_the_bad_locales_are_generated_in_every_image() -> None:
    fake = FakeReplayer(fails_when(lambda p: "LANG" in p.env), bad_plan=plan(lang="de_DE.UTF-8"))
    result = run(fake)
    assert result.minimal == ("env:LANG",)
    assert all(p.locales == ("de_DE.UTF-8",) for p in fake.built)
    assert len(fake.built) == 1  # LANG stayed a run-time fact
    assert any("locales" in n for n in result.notes)


def test_env_facts_without_a_value_are_not_varied() -> None:
    good = capsule("good.json", False, env={"TOKEN": EnvFact("TOKEN", "set")})
    bad = capsule("bad.json", True, env={"TOKEN": EnvFact("TOKEN", "absent")})
    fake = FakeReplayer(fails_when(lambda p: tz_of(p) == "America/New_York"), good=good, bad=bad)
    nv = {n.key: n for n in run(fake).not_varied}
    assert nv["env:TOKEN"].good == "(value not recorded)" and nv["env:TOKEN"].bad == "(absent)"
    assert "not recorded" in nv["env:TOKEN"].reason


def test_platform_differences_are_not_varied() -> None:
    fake = FakeReplayer(fails_when(lambda p: tz_of(p) == "America/New_York"),
                        good=capsule("good.json", False, arch="arm64"), bad=capsule("bad.json", True, arch="x64"))
    nv = {n.key: n for n in run(fake).not_varied}
    assert (nv["platform:arch"].good, nv["platform:arch"].bad) == ("arm64", "x64")


def test_bad_end_that_recorded_a_pass_is_a_usage_error() -> None:
    fake = FakeReplayer(fails_when(lambda p: True), bad=capsule("bad.json", False))
    with pytest.raises(UsageError, match=r"^bad\.json: the bad capsule recorded a pass"):
        run(fake)
    assert fake.ran == []


def test_good_end_that_recorded_a_failure_is_a_usage_error() -> None:
    fake = FakeReplayer(fails_when(lambda p: True), good=capsule("good.json", True))
    with pytest.raises(UsageError, match=r"^good\.json: the good capsule \(--good\) recorded a failure"):
        run(fake)


def test_baseline_fails_when_the_good_end_fails_here() -> None:
    fake = FakeReplayer(fails_when(lambda p: True))
    result = run(fake)
    assert result.status == "baseline fails"
    assert len(result.trials) == 2 and result.minimal == ()


def test_not_reproduced_when_the_bad_end_passes_here() -> None:
    fake = FakeReplayer(fails_when(lambda p: False))
    result = run(fake)
    assert result.status == "not-reproduced"


def test_a_variant_that_cannot_build_is_inconclusive() -> None:
    fake = FakeReplayer(fails_when(lambda p: node_of(p).startswith("20.")),
                        broken=lambda p: p.node_pins["lodash"] == "4.17.20" and not node_of(p).startswith("20."))
    result = run(fake)
    assert result.minimal == ("runtime:node",)
    broken = [t for t in result.trials if t.signature and t.signature.startswith("build failed")]
    assert broken and all(t.verdict == "inconclusive" for t in broken)


def test_an_end_that_cannot_build_is_an_environment_failure() -> None:
    fake = FakeReplayer(fails_when(lambda p: True), broken=lambda p: node_of(p).startswith("20."))
    with pytest.raises(BuildFailed):
        run(fake)


def test_a_flaky_failure_is_found_and_attempts_still_caps_the_runs() -> None:
    # the recorded failure shows on every second run of a plan with TZ=America/New_York
    def rule(p: Plan, n: int) -> tuple[int, str]:
        return (1, RECORDED) if tz_of(p) == "America/New_York" and n % 2 == 0 else (0, "exit0:x")

    result = run(FakeReplayer(rule))
    assert (result.status, result.minimal) == ("found", ("env:TZ",))
    bad_end = [k for t in result.trials if t.role == "bad end" for k in t.attempts]
    assert bad_end == ["pass", "recorded"] * RATE_FIRST  # its rate first: until it failed the recorded way so often
    assert result.rate is not None and (result.rate.failed, result.rate.runs) == (RATE_FIRST, 2 * RATE_FIRST)
    assert result.confidence >= 0.95 and result.removals[0].key == "env:TZ"
    capped = run(FakeReplayer(rule), attempts=1)  # --attempts 1: one run a trial, as asked
    assert capped.status == "not-reproduced" and [t.attempts for t in capped.trials] == [("pass",), ("pass",)]


def test_failing_another_way_is_reported_separately() -> None:
    def rule(p: Plan, n: int) -> tuple[int, str]:
        if node_of(p).startswith("20."):
            return 1, RECORDED
        if p.node_pins["lodash"] == "4.17.20":
            return 2, "exit2:1111111111111111"
        return 0, "exit0:x"

    result = run(FakeReplayer(rule))
    assert result.minimal == ("runtime:node",)
    assert result.also_failing and {t.signature for t in result.also_failing} == {"exit2:1111111111111111"}
    assert all("runtime:node" not in t.keys for t in result.also_failing)


def test_jobs_give_the_same_answer() -> None:
    rule = fails_when(lambda p: tz_of(p) == "America/New_York" and p.node_pins["lodash"] == "4.17.20")
    assert run(FakeReplayer(rule), jobs=1).minimal == run(FakeReplayer(rule), jobs=4).minimal


def test_missing_capsule_is_a_capsule_error() -> None:
    fake = FakeReplayer(fails_when(lambda p: True))
    with pytest.raises(CapsuleError, match="nope.json"):
        bisect_capsules(fake, fake, Path("nope.json"), Path("good.json"), BisectSettings(), FakeProgress())


@pytest.mark.parametrize(("value", "text"), [
    (None, None), (EnvSetting("empty"), "(empty)"), (EnvSetting("set", "x"), "x"),
    (Runtime("node", "20", "20.18.0", "nodejs.org", True), "node 20.18.0"), ("4.17.21", "4.17.21"),
    ("x" * 500, "x" * 119 + "…"),
])
def test_shown(value: object, text: str | None) -> None:
    assert shown(value) == text
