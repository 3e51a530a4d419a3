"""Noise-aware answers end to end, with real containers whose outcome the test decides run by
run: the capsule's command reads `/schedule/plan` (one word a run: fail or pass) and counts its
runs in `/schedule/count`, a folder of the test's mounted into every container of the replay.

Replay stops at 3 runs when they agree, goes on when they disagree (saying why), and a
placebo patch on a flaky failure is not FIXED however lucky its first passes are.
"""
from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from runner.build.plan import PlanOptions
from runner.engine import DockerEngine, Mount, RunResult, RunSpec
from runner.replay import Progress, ReplayOptions, replay_capsule
from runner.report import ReplayReport, to_json

from tests.integration.helpers import git, git_repo, repo_fact, twin_capsule, write_json

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # ~30 container runs

CHECK = """\
import pathlib, sys
d = pathlib.Path('/schedule')
n = int((d / 'count').read_text()) if (d / 'count').exists() else 0
(d / 'count').write_text(str(n + 1))
plan = (d / 'plan').read_text().split()
if plan[min(n, len(plan) - 1)] == 'fail':
    print('FAIL: the answer is 41')
    sys.exit(1)
print('ok')
"""


class Scheduled(DockerEngine):
    """The real engine; every container it runs also gets the test's schedule folder."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder

    def run(self, spec: RunSpec, on_output: Callable[[bytes], None] | None = None) -> RunResult:
        spec = dataclasses.replace(spec, mounts=(*spec.mounts, Mount(str(self.folder), "/schedule", False)))
        return super().run(spec, on_output)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("noise")
    repo = root / "repo"
    commit = git_repo(repo, {"check.py": CHECK})
    capsule = twin_capsule(["python3", "check.py"], "FAIL: the answer is 41\n", 1, python="3.11.2",
                           repo=repo_fact(str(repo), commit))
    write_json(root / "capsule.json", capsule)
    (repo / "check.py").write_text(CHECK + "# a comment: this patch changes nothing\n")
    placebo = git(repo, "diff", "HEAD")
    git(repo, "checkout", "-q", "--", "check.py")
    return {"capsule": str(root / "capsule.json"), "placebo": placebo, "repo": str(repo)}


@pytest.fixture()
def replay_with(tmp_path: Path) -> Iterator[Callable[..., tuple[ReplayReport, list[str]]]]:
    labels: list[str] = []
    engines: list[Scheduled] = []

    def run(project: dict[str, str], plan: list[str], patch: bool = False,
            **options: object) -> tuple[ReplayReport, list[str]]:
        folder = tmp_path / f"schedule-{len(labels)}"
        folder.mkdir()
        (folder / "plan").write_text(" ".join(plan))
        label = f"test-noise-{uuid.uuid4().hex[:8]}"
        labels.append(label)
        engine = Scheduled(folder)
        engines.append(engine)
        said: list[str] = []

        class Console:
            def print(self, text: str, **kw: object) -> None:
                said.append(text)

        plan_options = PlanOptions(repo=project["repo"], patch=project["placebo"] if patch else "")
        report = replay_capsule(project["capsule"], ReplayOptions(label=label, plan=plan_options, **options),  # type: ignore[arg-type]
                                Progress(Console()), engine=engine)
        ran = int((folder / "count").read_text())
        assert ran == len(report.attempts) + (len(report.baseline.attempts) if report.baseline else 0)
        return report, said

    yield run
    for engine, label in zip(engines, labels):
        engine.cleanup(label)


def test_runs_that_agree_stop_at_three(project: dict[str, str], replay_with: Callable[..., tuple[ReplayReport, list[str]]]) -> None:
    report, said = replay_with(project, ["fail"])
    assert (report.verdict, len(report.attempts)) == ("reproduced", 3)
    assert report.summary.endswith("fails in at least 44 % of runs (95 %).")
    assert not any("runs disagree" in line for line in said)


def test_runs_that_disagree_go_on_and_say_why(project: dict[str, str],
                                             replay_with: Callable[..., tuple[ReplayReport, list[str]]]) -> None:
    report, said = replay_with(project, ["fail", "pass"] * 10, max_attempts=8)
    assert (report.verdict, len(report.attempts)) == ("flaky", 8)  # ±25 points needs 12: the budget ends it
    assert [a.classification for a in report.attempts] == ["recorded", "pass"] * 4
    assert "replay: runs disagree: attempt 4 of up to 8 …" in said
    rate = to_json(report)["rate"]
    assert (rate["failed"], rate["runs"], rate["confidence"]) == (4, 8, 0.95)
    assert report.summary.endswith(f"fails in {round(rate['low'] * 100)}–{round(rate['high'] * 100)} % of runs (95 %).")


def test_a_placebo_patch_on_a_flaky_failure_is_not_fixed(project: dict[str, str],
                                                         replay_with: Callable[..., tuple[ReplayReport, list[str]]]) -> None:
    """Unpatched: fail, pass, ... (8 runs, the budget); with the placebo, 8 passes in a row:
    with the old rule (every patched attempt passed) this was FIXED after 3."""
    schedule = ["fail", "pass"] * 4 + ["pass"] * 8
    report, said = replay_with(project, schedule, patch=True, max_attempts=8)
    assert report.baseline is not None and report.fix is not None
    assert (report.baseline.verdict, len(report.baseline.attempts)) == ("flaky", 8)
    assert (report.verdict, len(report.attempts)) == ("inconclusive", 8)
    assert report.exit_code == 1 and report.fix.more_passes == 7
    assert "7 more passing run(s) would decide" in report.summary
    data = to_json(report)
    assert data["fix"]["more_passes"] == 7 and data["baseline"]["rate"]["failed"] == 4
    assert any(line.startswith("replay: with the patch: attempt 1 of up to 8") for line in said)
    json.dumps(data)  # the whole report is JSON


def test_a_change_that_stops_a_deterministic_failure_is_fixed_after_three_and_five_runs(
        project: dict[str, str], replay_with: Callable[..., tuple[ReplayReport, list[str]]]) -> None:
    """The schedule makes every run after the unpatched three pass, as a real fix would."""
    report, _ = replay_with(project, ["fail"] * 3 + ["pass"] * 10, patch=True)
    assert report.baseline is not None
    assert (report.verdict, len(report.baseline.attempts), len(report.attempts)) == ("fixed", 3, 5)
