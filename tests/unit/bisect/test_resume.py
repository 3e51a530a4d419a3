"""Undecided answers that help: the runs a sure answer likely still needs, the command that asks for
them, and --resume taking a bisect's kept outcomes instead of running them again (seeded stand-ins)."""
from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

import runner.cli.bisect as cli
from runner.bisect.resume import TrialLog
from runner.bisect.trial import Observation
from runner.build.plan import Plan
from runner.cli.main import main
from tests.envelope import result_of
from tests.unit.bisect.fakes import FakeReplayer, Outcome, commit_of, plan

GOOD = "0" * 40
LINE = [f"{i:040x}" for i in range(1, 17)]  # 16 commits after the good one, the bad one last
CULPRIT = 9


def flaky(seed: int) -> Any:
    rng, order = random.Random(seed), {sha: i for i, sha in enumerate(LINE)}

    def outcome(p: Plan) -> Outcome:
        sha = commit_of(p)
        return "recorded" if sha != GOOD and order[sha] >= CULPRIT and rng.random() < 0.5 else "pass"
    return outcome


def use(monkeypatch: pytest.MonkeyPatch, fake: FakeReplayer) -> None:
    monkeypatch.setattr(cli, "Replayer", lambda options, progress: fake)
    monkeypatch.setattr(cli, "git_history", lambda source, good: [(sha, f"change {i}") for i, sha in enumerate(LINE)])


def bisect(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], seed: int,
           *args: str) -> tuple[int, dict[str, Any], FakeReplayer]:
    fake = FakeReplayer(plan(commit=GOOD), plan(commit=LINE[-1]), flaky(seed))
    use(monkeypatch, fake)
    rc = main(["bisect", "bad.json", "--good", "good.json", "--commits", "-j", "1", *args, "--json"])
    return rc, result_of(capsys.readouterr().out), fake


def test_an_undecided_bisect_says_the_runs_it_likely_needs_and_resume_goes_on_from_there(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    rc, first, fake = bisect(monkeypatch, capsys, 3, "--max-runs", "12")
    assert (rc, first["walk"]["status"], len(fake.ran)) == (1, "undecided", 12)
    more = first["walk"]["more_runs"]
    assert more is not None and more > 0 and first["walk"]["spent"] == 12
    step = first["next"]
    assert step["argv"] == ["replay", "bisect", "bad.json", "--good", "good.json", "--jobs", "1", "--commits",
                            "--max-runs", str(12 + more), "--resume"]
    assert step["command"] == " ".join(step["argv"]) and f"about {more} more run(s) would likely decide" in step["why"]
    # the command it gives: the 12 runs are taken again, not run again; the bisect goes on from there
    fake = FakeReplayer(plan(commit=GOOD), plan(commit=LINE[-1]), flaky(4))
    use(monkeypatch, fake)
    rc = main([*step["argv"][1:], "--json"])
    again = result_of(capsys.readouterr().out)
    assert rc == 0 and again["walk"]["status"] == "found" and again["walk"]["first_failing"] == LINE[CULPRIT]
    assert [t["attempts"] for t in again["walk"]["trials"][:len(first["walk"]["trials"])]] == \
        [t["attempts"] for t in first["walk"]["trials"]]
    assert again["totals"]["attempts"] == 12 + len(fake.ran)  # the kept 12 were not run again
    assert any(n.startswith(f"{len(first['walk']['trials'])} trial(s), 12 run(s), taken from the outcomes an earlier")
               for n in again["walk"]["notes"])


def test_without_resume_a_bisect_starts_over(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    bisect(monkeypatch, capsys, 3, "--max-runs", "12")
    rc, again, fake = bisect(monkeypatch, capsys, 3, "--max-runs", "12")
    assert len(fake.ran) == 12 and not any("taken from the outcomes" in n for n in again["walk"]["notes"])


def test_the_text_names_the_likeliest_commits_with_subjects_and_the_next_command(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    use(monkeypatch, FakeReplayer(plan(commit=GOOD), plan(commit=LINE[-1]), flaky(3)))
    assert main(["bisect", "bad.json", "--good", "good.json", "--commits", "-j", "1", "--max-runs", "12"]) == 1
    out = capsys.readouterr().out
    answer = next(line for line in out.splitlines() if line.startswith("undecided, likeliest first: "))
    chances = [float(c) for c in re.findall(r"\((?:≥ )?(\d\.\d\d)\)", answer)]
    assert chances == sorted(chances, reverse=True) and " change " in answer
    assert "next: about " in out and "--max-runs" in out and out.rstrip().endswith("--resume")


def test_an_unreadable_log_starts_over_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "q.json").write_text("{not json")
    log = TrialLog(tmp_path, "q", resume=True)
    assert log.take("k") is None
    log.keep("k", Observation("reproduced", "exit1:x", attempts=("recorded",)))
    assert json.loads((tmp_path / "q.json").read_text())["trials"][0]["attempts"] == ["recorded"]
    assert log.notes() == ["the trial outcomes kept could not be read: this bisect started over"]
    again = TrialLog(tmp_path, "q", resume=True)
    assert again.take("k") == Observation("reproduced", "exit1:x", attempts=("recorded",)) and again.take("k") is None
