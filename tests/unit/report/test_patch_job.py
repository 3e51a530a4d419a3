"""`--patch` as a use case on the fake engine: the unpatched source is replayed too, in its
own image (the patched one differs in the source only), and both runs are judged."""
from __future__ import annotations

import json
import subprocess

import pytest

from runner.engine import RunResult, RunSpec
from runner.build.plan import PlanOptions
from runner.replay import Progress, ReplayOptions, replay_capsule
from runner.report import from_json, to_json

from tests.examples import BUNDLE, TZ_CAPSULE
from tests.unit.fake_engine import FakeEngine

RECORDED_OUTPUT = json.loads(TZ_CAPSULE.read_text())["command"]["failure"]["outputTail"]


@pytest.fixture(scope="module")
def comment_patch(tmp_path_factory: pytest.TempPathFactory) -> str:
    clone = tmp_path_factory.mktemp("clone") / "tz-clock"
    subprocess.run(["git", "clone", "-q", str(BUNDLE), str(clone)], check=True)
    dates = clone / "src" / "dates.js"
    dates.write_text(dates.read_text().replace("Bug:", "Known bug:"))
    return subprocess.run(["git", "diff", "HEAD"], cwd=clone, capture_output=True, text=True, check=True).stdout


def engine(unpatched_fails: bool, patched_fails: bool) -> tuple[FakeEngine, list[str]]:
    """The first image built is the unpatched source's (replay judges the baseline first)."""
    images: list[str] = []

    def run(spec: RunSpec) -> RunResult:
        if spec.argv[:2] == ("sh", "-c"):  # the image-facts probe
            return RunResult(0, b"2.36\n---\n{}", b"2.36\n---\n{}", 0.1)
        if spec.image not in images:
            images.append(spec.image)
        fails = unpatched_fails if spec.image == images[0] else patched_fails
        out = RECORDED_OUTPUT if fails else "all good\n"
        return RunResult(1 if fails else 0, out.encode(), out.encode(), 0.5)
    return FakeEngine(run=run, images=["replay-base/debian:bookworm"]), images


@pytest.mark.usefixtures("offline_registry")
@pytest.mark.parametrize(("unpatched_fails", "patched_fails", "verdict", "baseline", "runs"), [
    (True, False, "fixed", "reproduced", (3, 5)),  # 5 straight passes put the rate below 3/3's low bound
    (False, False, "inconclusive", "not-reproduced", (3, 0)),  # nothing to fix here: no run with the patch
    (True, True, "not-fixed", "reproduced", (3, 1)),  # the first failure as recorded decides
])
def test_both_runs_are_judged(comment_patch: str, unpatched_fails: bool, patched_fails: bool, verdict: str,
                              baseline: str, runs: tuple[int, int]) -> None:
    fake, images = engine(unpatched_fails, patched_fails)
    opts = ReplayOptions(plan=PlanOptions(repo=str(BUNDLE), patch=comment_patch))
    report = replay_capsule(TZ_CAPSULE, opts, Progress(), engine=fake)
    assert report.baseline is not None and report.fix is not None
    assert (report.verdict, report.baseline.verdict) == (verdict, baseline)
    assert (len(report.baseline.attempts), len(report.attempts)) == runs
    assert len(fake.builds) == 2  # two images: unpatched and patched (built for the report even when unused)
    assert report.summary.startswith(verdict.upper() + ": ")
    assert from_json(to_json(report)) == report


@pytest.mark.usefixtures("offline_registry")
def test_exactly_n_attempts_runs_n_on_each_side(comment_patch: str) -> None:
    """--attempts 2: two runs each, whatever they say; two passes cannot outweigh two failures."""
    fake, _ = engine(True, False)
    opts = ReplayOptions(attempts=2, plan=PlanOptions(repo=str(BUNDLE), patch=comment_patch))
    report = replay_capsule(TZ_CAPSULE, opts, Progress(), engine=fake)
    assert report.baseline is not None and report.fix is not None
    assert (len(report.baseline.attempts), len(report.attempts), report.verdict) == (2, 2, "inconclusive")
    assert report.fix.more_passes == 6 and "6 more passing run(s) would decide" in report.summary


@pytest.mark.usefixtures("offline_registry")
def test_without_a_patch_there_is_no_baseline() -> None:
    fake, _ = engine(True, True)
    report = replay_capsule(TZ_CAPSULE, ReplayOptions(plan=PlanOptions(repo=str(BUNDLE))), Progress(),
                            engine=fake)
    assert report.baseline is None and report.verdict == "reproduced" and len(fake.builds) == 1
    assert len(report.attempts) == 3 and report.rate is not None and report.rate.always  # runs that agree: 3
    assert to_json(report)["baseline"] is None
