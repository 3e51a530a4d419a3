"""--commits: the pure walk, the session on a fake replayer, the CLI, and listing commits."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

import runner.cli.bisect as cli
from runner.bisect.trial import Observation
from runner.bisect.commits import CommitsResult
from runner.bisect.walk import picks, walk
from runner.bisect.commits import bisect_commits as run_commits
from runner.bisect.trial import BisectSettings
from runner.cli.main import main
from runner.config import Settings
from runner.errors import NeedsInput, UsageError
from runner.build.plan import Plan, Source
from runner.build.source import commits_between
from tests.integration.helpers import git, git_repo

from tests.unit.bisect.fakes import FakeProgress, FakeReplayer, Outcome, commit_of, node_of, plan
from tests.envelope import result_of

GOOD_SHA = "a" * 40
LINE = [c * 40 for c in "bcdef"]  # five commits after the good one, the bad one (f…) last
SUBJECTS = ["add tests", "refactor clock", "round start of day", "docs", "release 2.0"]
HISTORY = list(zip(LINE, SUBJECTS))


def obs(verdict: str) -> Observation:
    return Observation(verdict, "exit1:x" if verdict != "not-reproduced" else None)  # type: ignore[arg-type]


def from_(first: int, items: list[str]) -> Any:
    """A test failing the recorded way from items[first] on (items[0] is the good end)."""
    return lambda item: obs("reproduced" if items.index(item) >= first else "not-reproduced")


# --- the walk ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13])
@pytest.mark.parametrize("jobs", [1, 3])
def test_walk_finds_every_transition_within_the_bisection_bound(n: int, jobs: int) -> None:
    items = [f"v{i}" for i in range(n + 1)]
    for first in range(1, n + 1):
        result = walk(items[0], items[1:], from_(first, items), jobs)
        assert (result.status, result.first_failing, result.last_passing) == ("found", items[first], items[first - 1])
        assert [p.role for p in result.trials[:2]] == ["good end", "bad end"]
        if jobs == 1:
            assert len(result.trials) <= 2 + math.ceil(math.log2(n)) if n > 1 else len(result.trials) == 2
        assert len({p.item for p in result.trials}) == len(result.trials)  # each item tried once


def test_parallel_picks_cut_the_line_evenly() -> None:
    assert picks(list(range(1, 12)), 0, 12, 1) == [6]
    assert picks(list(range(1, 12)), 0, 12, 3) == [3, 6, 9]
    assert picks([1, 2], 0, 3, 5) == [1, 2]


def test_an_item_failing_another_way_is_skipped_and_named_when_it_may_hold_the_change() -> None:
    items = ["g", "a", "b", "c", "d", "bad"]
    verdicts = {"g": "not-reproduced", "a": "not-reproduced", "b": "different-failure", "c": "reproduced", "d": "reproduced", "bad": "reproduced"}
    result = walk("g", items[1:], lambda i: obs(verdicts[i]))
    assert (result.first_failing, result.last_passing) == ("c", "a")
    assert any("could not be judged (b: different-failure, exit1:x)" in n for n in result.notes)


def test_the_ends_decide_first() -> None:
    assert walk("g", ["a", "b"], lambda i: obs("reproduced")).status == "baseline fails"
    result = walk("g", ["a", "b"], lambda i: obs("different-failure" if i == "b" else "not-reproduced"))
    assert (result.status, result.first_failing, len(result.trials)) == ("not-reproduced", None, 2)


def test_a_pass_after_the_first_failure_is_reported_as_not_monotonic() -> None:
    verdicts = {"g": "not-reproduced", "a": "reproduced", "b": "not-reproduced", "c": "reproduced"}
    result = walk("g", ["a", "b", "c"], lambda i: obs(verdicts[i]), jobs=3)
    assert result.first_failing == "a"
    assert any(n.startswith("not monotonic: b passed after a failed") for n in result.notes)


# --- the session ------------------------------------------------------------------------


GOOD_PLAN = plan(commit=GOOD_SHA, node="22.11.0")
BAD_PLAN = plan(commit=LINE[-1], node="20.18.0", diff="diff --git a/x b/x\n")


def fails_from(sha: str, node: str = "20.18.0") -> Any:
    """Fails the recorded way at `sha` and later, in the bad environment only."""
    order = [GOOD_SHA, *LINE]

    def outcome(p: Plan) -> Outcome:
        return "recorded" if node_of(p) == node and order.index(commit_of(p)) >= order.index(sha) else "pass"
    return outcome


def session(fake: FakeReplayer, jobs: int = 1) -> tuple[CommitsResult, list[tuple[Source, str]]]:
    asked: list[tuple[Source, str]] = []

    def history(source: Source, good: str) -> list[tuple[str, str]]:
        asked.append((source, good))
        return HISTORY

    result = run_commits(fake, Path("bad.json"), Path("good.json"), BisectSettings(1, jobs), FakeProgress(), history)
    return result, asked


def test_the_first_failing_commit_is_found_in_the_bad_environment_without_the_diff() -> None:
    fake = FakeReplayer(GOOD_PLAN, BAD_PLAN, fails_from(LINE[2]))
    result, asked = session(fake)
    assert result.found and result.first_failing is not None
    assert (result.first_failing.sha, result.first_failing.subject) == (LINE[2], "round start of day")
    assert result.walk.last_passing == LINE[1]
    assert [(s.commit, s.remote, g) for s, g in asked] == [(LINE[-1], "https://example.org/r.git", GOOD_SHA)]
    # every trial: the bad plan (node 20), at the trial's commit, without the recorded diff
    assert {node_of(p) for p in fake.ran} == {"20.18.0"}
    assert all(p.source is not None and p.source.diff == "" for p in fake.ran)
    assert [commit_of(p) for p in fake.ran] == [t.item for t in result.walk.trials]
    assert len(result.walk.trials) <= 2 + math.ceil(math.log2(len(LINE)))
    assert any("without the bad capsule's uncommitted diff" in n for n in result.walk.notes)


def test_the_good_commit_failing_in_the_bad_environment_is_said() -> None:
    result, _ = session(FakeReplayer(GOOD_PLAN, BAD_PLAN, fails_from(GOOD_SHA)))
    assert (result.walk.status, result.first_failing) == ("baseline fails", None)
    assert any(n.startswith(f"the good commit {GOOD_SHA[:12]} already fails in the bad environment (reproduced")
               for n in result.walk.notes)


def test_a_failure_that_needs_the_diff_is_not_reproduced_at_the_bad_commit() -> None:
    result, _ = session(FakeReplayer(GOOD_PLAN, BAD_PLAN, lambda p: "pass"))
    assert result.walk.status == "not-reproduced"
    assert any(n.startswith(f"the bad commit {LINE[-1][:12]} without its diff does not fail")
               for n in result.walk.notes)


def test_a_commit_that_cannot_be_built_is_skipped() -> None:
    fake = FakeReplayer(GOOD_PLAN, BAD_PLAN, fails_from(LINE[2]), broken=lambda p: commit_of(p) == LINE[1])
    result, _ = session(fake, jobs=2)
    assert result.first_failing is not None and result.first_failing.sha == LINE[2]
    skipped = result.walk.trial(LINE[1])
    assert skipped is not None and (skipped.verdict, skipped.signature) == ("inconclusive", "build failed: no such release")


@pytest.mark.parametrize(("good", "bad", "message"), [
    (plan(commit=LINE[-1]), BAD_PLAN, f"bad.json: both capsules are at commit {LINE[-1][:12]}: no commits to bisect"),
    (plan(commit=None), BAD_PLAN, "good.json: the capsule records no commit; --commits needs both"),
    (GOOD_PLAN, plan(commit=LINE[-1], remote=None), "bad.json: the capsule records no remote"),
])
def test_usage_errors(good: Plan, bad: Plan, message: str) -> None:
    with pytest.raises(UsageError) as e:
        session(FakeReplayer(good, bad, lambda p: "pass"))
    assert e.value.message.startswith(message)


# --- the CLI ----------------------------------------------------------------------------


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")


def use(monkeypatch: pytest.MonkeyPatch, fake: FakeReplayer) -> None:
    monkeypatch.setattr(cli, "Replayer", lambda options, progress: fake)
    monkeypatch.setattr(cli, "_history", lambda source, good: HISTORY)


def test_cli_json_and_exit_codes(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], wide: None) -> None:
    fake = FakeReplayer(GOOD_PLAN, BAD_PLAN, fails_from(LINE[3]))
    use(monkeypatch, fake)
    assert main(["bisect", "bad.json", "--good", "good.json", "--commits", "--json"]) == 0
    data = result_of(capsys.readouterr().out)
    assert (data["mode"], data["first_failing"]) == ("commits", {"sha": LINE[3], "subject": "docs"})
    assert data["walk"]["status"] == "found" and data["walk"]["trials"][0]["role"] == "good end"
    assert fake.closed
    use(monkeypatch, FakeReplayer(GOOD_PLAN, BAD_PLAN, fails_from(GOOD_SHA)))
    assert main(["bisect", "bad.json", "--good", "good.json", "--commits"]) == 1
    assert "baseline fails: the good commit does not pass in the bad environment" in capsys.readouterr().out


def test_cli_table_names_the_commit_and_its_subject(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str], wide: None) -> None:
    use(monkeypatch, FakeReplayer(GOOD_PLAN, BAD_PLAN, fails_from(LINE[2])))
    assert main(["bisect", "bad.json", "--good", "good.json", "--commits"]) == 0
    out = capsys.readouterr().out
    assert f"{LINE[1][:12]} refactor clock" in out and f"{GOOD_SHA[:12]} (good end)" in out
    assert out.rstrip().endswith(f"first failing commit: {LINE[2]} round start of day")


def test_cli_equal_commits_exit_2_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    use(monkeypatch, FakeReplayer(plan(commit=LINE[-1]), BAD_PLAN, lambda p: "pass"))
    assert main(["bisect", "bad.json", "--good", "good.json", "--commits"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1


def test_without_commits_the_note_offers_them(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                              wide: None) -> None:
    use(monkeypatch, FakeReplayer(GOOD_PLAN, BAD_PLAN, lambda p: "recorded" if node_of(p) == "20.18.0" else "pass"))
    assert main(["bisect", "bad.json", "--good", "good.json", "--json"]) == 0
    notes = result_of(capsys.readouterr().out)["notes"]
    assert "run with --commits to bisect the commits in the bad environment" in notes


# --- listing the commits ----------------------------------------------------------------


@pytest.fixture
def history_repo(tmp_path: Path) -> tuple[Path, list[str]]:
    """main: init, one, a merge of a side branch (two commits), three: first parents are
    init, one, merge, three."""
    repo = tmp_path / "repo"
    shas = [git_repo(repo, {"f": "0"})]
    (repo / "f").write_text("one")
    git(repo, "commit", "-qam", "one")
    shas.append(git(repo, "rev-parse", "HEAD").strip())
    git(repo, "checkout", "-qb", "side")
    for name in ("side 1", "side 2"):
        (repo / "g").write_text(name)
        git(repo, "add", "g")
        git(repo, "commit", "-qm", name)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    shas.append(git(repo, "rev-parse", "HEAD").strip())
    (repo / "f").write_text("three")
    git(repo, "commit", "-qam", "three\x1b[31m")  # a subject is free text
    shas.append(git(repo, "rev-parse", "HEAD").strip())
    return repo, shas


def test_commits_between_follows_first_parents_oldest_first(tmp_path: Path,
                                                            history_repo: tuple[Path, list[str]]) -> None:
    repo, (init, one, merge, three) = history_repo
    settings = Settings(cache_dir=tmp_path / "cache")
    assert commits_between(settings, str(repo), True, init, three) == [
        (one, "one"), (merge, "merge side"), (three, "three\x1b[31m")]
    assert commits_between(settings, str(repo), True, merge, three) == [(three, "three\x1b[31m")]
    with pytest.raises(UsageError, match="is not an ancestor"):
        commits_between(settings, str(repo), True, three, one)
    with pytest.raises(NeedsInput, match="not a network URL"):
        commits_between(settings, str(repo), False, init, three)  # a capsule's own local remote
