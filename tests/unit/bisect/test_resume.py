"""Undecided answers that help: the runs a sure answer likely still needs, the command that asks for
them, and --resume taking a bisect's kept outcomes instead of running them again (seeded stand-ins)."""
from __future__ import annotations

import hashlib
import json
import random
import re
import stat
from pathlib import Path
from typing import Any

import pytest

import runner.cli.bisect as cli
import runner.bisect.resume as resume
from runner.bisect.resume import TrialLog, run_context
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


@pytest.fixture(autouse=True)
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Each test's own cache: the outcomes kept and the machine's key."""
    monkeypatch.setenv("REPLAY_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def use(monkeypatch: pytest.MonkeyPatch, fake: FakeReplayer) -> None:
    monkeypatch.setattr(cli, "Replayer", lambda options, progress: fake)
    monkeypatch.setattr(cli, "Loader", lambda options: fake)  # the fake loads the capsules too
    monkeypatch.setattr(cli, "fill_only_of", lambda paths, trust, supplied: frozenset())  # no capsule files here
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


TOKEN, RIGHT = "tok-wrong-1d2c3b4a", "tok-right-9f8e7d6c"


def test_a_rerun_with_another_env_value_reuses_nothing(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The plan holds a supplied variable by name only: its value is part of the question another way."""
    rc, first, _ = bisect(monkeypatch, capsys, 3, "--max-runs", "12", "--env", f"TOKEN={TOKEN}")
    assert (rc, first["walk"]["status"]) == (1, "undecided")
    rc, again, fake = bisect(monkeypatch, capsys, 3, "--max-runs", "12", "--env", f"TOKEN={RIGHT}", "--resume")
    assert len(fake.ran) == 12 and not any("taken from the outcomes" in n for n in again["walk"]["notes"])
    # the same value again: the outcomes kept with it are taken
    rc, again, fake = bisect(monkeypatch, capsys, 3, "--max-runs", "24", "--env", f"TOKEN={TOKEN}", "--resume")
    assert any(n.startswith(f"{len(first['walk']['trials'])} trial(s), 12 run(s), taken from")
               for n in again["walk"]["notes"])


def test_a_rerun_with_another_timeout_reuses_nothing(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    bisect(monkeypatch, capsys, 3, "--max-runs", "12", "--timeout", "60")
    rc, again, fake = bisect(monkeypatch, capsys, 3, "--max-runs", "12", "--timeout", "90", "--resume")
    assert len(fake.ran) == 12 and not any("taken from the outcomes" in n for n in again["walk"]["notes"])


def test_the_runs_context_changes_with_the_values_the_timeout_and_the_version(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    at = run_context(tmp_path, [("TOKEN", TOKEN)], 600.0)
    assert run_context(tmp_path, [("TOKEN", TOKEN)], 600.0) == at  # the same question asked again
    assert run_context(tmp_path, [("TOKEN", RIGHT)], 600.0) != at
    assert run_context(tmp_path, [("TOKEN", RIGHT), ("TOKEN", TOKEN)], 600.0) == at  # the last value is the one run
    assert run_context(tmp_path, [("TOKEN", TOKEN)], 60.0) != at
    assert run_context(tmp_path, [("TOKEN", TOKEN)], 600) == at  # a whole number of seconds is the same timeout
    monkeypatch.setattr(resume, "__version__", "99.0.0")
    assert run_context(tmp_path, [("TOKEN", TOKEN)], 600.0) != at


def test_the_machine_key_is_made_once_readable_by_its_owner_only(tmp_path: Path) -> None:
    key = resume.machine_key(tmp_path / "trials")
    path = tmp_path / "trials" / resume.KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and len(key) >= 32
    assert resume.machine_key(tmp_path / "trials") == key and sorted(p.name for p in path.parent.iterdir()) == ["key"]


def test_the_files_kept_hold_no_supplied_value_nor_a_plain_hash_of_it(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cache: Path) -> None:
    bisect(monkeypatch, capsys, 3, "--max-runs", "12", "--env", f"TOKEN={TOKEN}")
    kept = [p for p in cache.rglob("*") if p.is_file()]
    assert any(p.suffix == ".json" for p in kept)
    plain = {hashlib.sha256(text.encode()).hexdigest()[:16] for text in (TOKEN, f"TOKEN={TOKEN}")}
    for p in kept:
        data = p.read_bytes() + str(p.relative_to(cache)).encode()
        assert TOKEN.encode() not in data and not any(h.encode() in data for h in plain), p
