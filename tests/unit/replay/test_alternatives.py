"""Ambiguous capsules are tried every way (issue 30): a node package recorded at two versions whose
top-level copy is not recorded; the plan's own choice does not bring the failure back, the other does."""
from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from runner.build.plan import PlanOptions
from runner.capsules import read_capsule
from runner.config import Settings
from runner.build.planner import make_plan
from runner.engine import BuildEvent, RunResult, RunSpec
from runner.replay import Progress, ReplayOptions, replay_capsule
from runner.report import from_json, to_json
from tests.examples import BUNDLE, TZ_CAPSULE, json_variant
from tests.unit.fake_engine import FakeEngine

RECORDED_OUTPUT = json.loads(TZ_CAPSULE.read_text())["command"]["failure"]["outputTail"]


def two_copies(tmp_path: Path) -> Path:
    """No lockfile installs it: the plan puts the newest at the top level; the failure needs 2.1.2."""
    def change(d: dict) -> None:  # type: ignore[type-arg]
        d["resolved"] = {"node": {"ms": ["2.1.2", "2.1.3"]}}
        d["packageManagers"] = []
    return json_variant(TZ_CAPSULE, tmp_path, change)


class Pinned(FakeEngine):
    """Fails as recorded only on an image whose top-level ms is 2.1.2 (read from the context it built)."""

    def __init__(self) -> None:
        self.top: dict[str, str] = {}
        super().__init__(build=self._built, run=self._ran, images=["replay-base/debian:bookworm"])

    def _built(self, ctx: Path, tag: str, labels: Mapping[str, str]) -> Iterator[BuildEvent]:
        pins = json.loads((ctx / "node-pins.json").read_text())
        self.top[tag] = pins["ms"] if isinstance(pins["ms"], str) else pins["ms"][-1]
        yield BuildEvent("done", image_id="sha256:1", steps_run=1)

    def _ran(self, spec: RunSpec) -> RunResult:
        if spec.argv[:2] == ("sh", "-c"):  # the image-facts probe
            return RunResult(0, b"2.36\n---\n{}", b"2.36\n---\n{}", 0.1)
        if self.top.get(spec.image) == "2.1.2":
            return RunResult(1, RECORDED_OUTPUT.encode(), RECORDED_OUTPUT.encode(), 0.2)
        return RunResult(0, b"ok\n", b"ok\n", 0.2)


def test_the_plan_names_each_other_placement(tmp_path: Path) -> None:
    plan = make_plan(read_capsule(two_copies(tmp_path)), Settings(), PlanOptions(repo=str(BUNDLE)))
    assert plan.node_pins["ms"] == "2.1.3"
    assert [(a.what, a.node_pins["ms"]) for a in plan.alternatives] == [("ms 2.1.2 at the top level", "2.1.2")]


@pytest.mark.usefixtures("offline_registry")
def test_an_alternative_that_brings_the_failure_back_is_said(tmp_path: Path) -> None:
    engine = Pinned()
    report = replay_capsule(two_copies(tmp_path), ReplayOptions(plan=PlanOptions(repo=str(BUNDLE))), Progress(),
                            engine=engine)
    assert report.verdict == "reproduced" and report.alternative == "ms 2.1.2 at the top level"
    assert report.alternatives_tried == ("ms 2.1.2 at the top level: reproduced",)
    assert any("it came back with ms 2.1.2 at the top level" in n for n in report.notes)
    assert sorted(engine.top.values()) == ["2.1.2", "2.1.3"]  # each environment's image built once
    assert from_json(to_json(report)) == report


@pytest.mark.usefixtures("offline_registry")
def test_no_alternatives_keeps_the_plans_own(tmp_path: Path) -> None:
    engine = Pinned()
    report = replay_capsule(two_copies(tmp_path), ReplayOptions(plan=PlanOptions(repo=str(BUNDLE)),
                                                                alternatives=False), Progress(), engine=engine)
    assert report.verdict == "not-reproduced" and report.alternative is None and report.alternatives_tried == ()
    assert list(engine.top.values()) == ["2.1.3"]
