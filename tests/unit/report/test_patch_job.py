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
@pytest.mark.parametrize(("unpatched_fails", "patched_fails", "verdict", "baseline"), [
    (True, False, "fixed", "reproduced"),
    (False, False, "inconclusive", "not-reproduced"),  # a placebo patch on a failure that does not come back
    (True, True, "not-fixed", "reproduced"),
])
def test_both_runs_are_judged(comment_patch: str, unpatched_fails: bool, patched_fails: bool, verdict: str,
                              baseline: str) -> None:
    fake, images = engine(unpatched_fails, patched_fails)
    opts = ReplayOptions(attempts=2, plan=PlanOptions(repo=str(BUNDLE), patch=comment_patch))
    report = replay_capsule(TZ_CAPSULE, opts, Progress(), engine=fake)
    assert report.baseline is not None
    assert (report.verdict, report.baseline.verdict) == (verdict, baseline)
    assert len(report.attempts) == len(report.baseline.attempts) == 2
    assert len(fake.builds) == 2 and len(images) == 2  # two images: unpatched and patched
    assert report.summary.startswith(verdict.upper() + ": ")
    assert from_json(to_json(report)) == report


@pytest.mark.usefixtures("offline_registry")
def test_without_a_patch_there_is_no_baseline() -> None:
    fake, _ = engine(True, True)
    report = replay_capsule(TZ_CAPSULE, ReplayOptions(attempts=1, plan=PlanOptions(repo=str(BUNDLE))), Progress(),
                            engine=fake)
    assert report.baseline is None and report.verdict == "reproduced" and len(fake.builds) == 1
    assert to_json(report)["baseline"] is None
