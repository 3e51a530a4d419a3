"""--watch: a saved change is seen (once per save, when it was saved), and each verdict is one line."""
from __future__ import annotations

import json
import subprocess
import os
from pathlib import Path

import pytest

from runner.build.plan import PlanOptions
from runner.engine import RunResult, RunSpec
from runner.replay import Progress, ReplayOptions
from runner.replay.watch import changes, snapshot, verdict_line, watch
from runner.verdict.judge import Attempt, Expected

from tests.examples import BUNDLE, TZ_CAPSULE
from tests.unit.fake_engine import FakeEngine


def test_a_saved_change_is_yielded_with_when_it_was_saved(tmp_path: Path) -> None:
    (tmp_path / "a.js").write_text("1")
    (tmp_path / "node_modules").mkdir()
    seen = changes(tmp_path, last=snapshot(tmp_path))
    (tmp_path / "node_modules" / "x.js").write_text("ignored")
    (tmp_path / "a.js").write_text("22")
    os.utime(tmp_path / "a.js", (1_000_000, 1_000_000))
    assert next(seen) == 1_000_000


def test_it_stops_when_asked(tmp_path: Path) -> None:
    calls: list[int] = []
    assert list(changes(tmp_path, lambda: bool(calls.append(1)) or len(calls) > 2)) == []


def test_the_verdict_line_says_what_came_back_and_how_soon() -> None:
    failed = Expected(True, 1, None, "exit1:abc")
    att = Attempt(0, None, "", (), 1.3, False, b"", "", classification="pass")
    assert verdict_line(2, failed, att, 1.5) == "run 2: passes (the recorded failure is gone) (exit 0, 1.3 s, 1.5 s after the save)"
    rec = Attempt(1, None, "exit1:abc", (), 0.5, False, b"", "", classification="recorded")
    assert verdict_line(1, failed, rec, None) == "run 1: fails as recorded (exit 1, 0.5 s)"


@pytest.mark.usefixtures("offline_registry")
def test_ctrl_c_ends_the_watch_with_the_last_runs_answer(tmp_path: Path) -> None:
    """Ctrl-C is how a watch ends: its exit code is the last run's (0 as recorded), never 130."""
    def run(spec: RunSpec) -> RunResult:
        if spec.argv[:2] == ("sh", "-c"):  # the image-facts probe
            return RunResult(0, b"2.36\n---\n{}", b"2.36\n---\n{}", 0.1)
        out = json.loads(TZ_CAPSULE.read_text())["command"]["failure"]["outputTail"].encode()
        return RunResult(1, out, out, 0.5)

    def interrupt() -> bool:
        raise KeyboardInterrupt

    said: list[str] = []
    checkout = tmp_path / "checkout"  # a checkout of the recorded repository, as --workdir takes
    subprocess.run(["git", "clone", "-q", str(BUNDLE), str(checkout)], check=True, capture_output=True)
    opts = ReplayOptions(workdir=str(checkout), plan=PlanOptions(repo=str(BUNDLE)))
    engine = FakeEngine(run=run, images=["replay-base/debian:bookworm"])
    assert watch(TZ_CAPSULE, opts, Progress(), said.append, interrupt, engine=engine) == 0
    assert said[-2].startswith("run 1: fails as recorded") and said[-1] == "stopped watching"
