"""--commits: the pure walk, the session on a fake replayer, the CLI, and listing commits."""
from __future__ import annotations

import math
import random
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import runner.cli.bisect as cli
from runner.bisect.trial import Observation
from runner.bisect.commits import CommitsResult
from runner.bisect.rules import RATE_FIRST, Rules
from runner.bisect.posterior import Line
from runner.bisect.walk import _later_passes, _Walker, candidates_said, walk
from runner.verdict.rate import PRIOR, all_pass
from runner.bisect.commits import bisect_commits as run_commits
from runner.bisect.trial import BisectSettings
from runner.cli.main import main
from runner.config import Settings
from runner.errors import NeedsInput, UsageError
from runner.build.plan import Plan, Source
from runner.build.sources.repo import commits_between
from tests.integration.helpers import git, git_repo

from tests.unit.bisect.fakes import FakeProgress, FakeReplayer, Outcome, commit_of, node_of, plan
from tests.envelope import result_of

GOOD_SHA = "a" * 40
LINE = [c * 40 for c in "bcdef"]  # five commits after the good one, the bad one (f…) last
SUBJECTS = ["add tests", "refactor clock", "round start of day", "docs", "release 2.0"]
HISTORY = list(zip(LINE, SUBJECTS))


KIND = {"reproduced": "recorded", "not-reproduced": "pass", "different-failure": "other"}


def obs(verdict: str) -> Observation:
    """One run's observation."""
    return Observation(verdict, "exit1:x" if verdict != "not-reproduced" else None,  # type: ignore[arg-type]
                       attempts=(KIND[verdict],))  # type: ignore[arg-type]


def from_(first: int, items: list[str]) -> Any:
    """A test failing the recorded way from items[first] on (items[0] is the good end)."""
    return lambda item: obs("reproduced" if items.index(item) >= first else "not-reproduced")


# --- the walk ---------------------------------------------------------------------------


# the passes the last pass's check asks for when the bad end's RATE_FIRST failures are all that is known
CHECK_MOST = next(m for m in range(1, 100) if all_pass(RATE_FIRST, 0, m, PRIOR.flaky()) <= 0.05)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13])
@pytest.mark.parametrize("jobs", [1, 3])
def test_walk_finds_every_transition_of_a_deterministic_failure(n: int, jobs: int) -> None:
    items = [f"v{i}" for i in range(n + 1)]
    for first in range(1, n + 1):
        result = walk(items[0], items[1:], from_(first, items), jobs)
        assert (result.status, result.first_failing, result.last_passing) == ("found", items[first], items[first - 1])
        assert [p.role for p in result.trials[:2]] == ["good end", "bad end"]
        assert result.confidence >= 0.95 and result.candidates[0].item == items[first]
        assert result.rate is not None and result.rate.always
        tried = {t.item for t in result.trials}
        if jobs == 1:  # the items bisection tries (images built): as many as git bisect's
            assert len(tried) <= 2 + math.ceil(math.log2(n)) if n > 1 else len(tried) == 2
        # besides them: the bad end's rate and the last pass's check, which needs the most passes when
        # only the bad end's failures tell the rate (a batch of --jobs may run past it)
        assert sum(len(t.attempts) for t in result.trials) <= len(tried) + RATE_FIRST - 1 + CHECK_MOST + jobs - 1


def test_a_deterministic_failure_runs_the_bad_end_for_its_rate_and_checks_the_last_pass() -> None:
    items = [f"v{i}" for i in range(9)]
    result = walk(items[0], items[1:], from_(5, items))
    bad = [t.attempts for t in result.trials if t.role == "bad end"]
    assert bad == [("recorded",)] * RATE_FIRST
    last_pass = [t.attempts for t in result.trials if t.item == "v4"]
    assert len(last_pass) > 1 and all(a == ("pass",) for a in last_pass)
    assert (result.status, result.first_failing) == ("found", "v5")


def test_the_last_pass_check_stops_once_a_flaky_look_alike_is_unlikely_at_every_rate() -> None:
    # good end and bad end only: a failure of any rate from 0.2 up that also fails at the good end would
    # give these very runs at most 1 time in 20
    result = walk("g", ["bad"], from_(1, ["g", "bad"]))
    assert (result.status, result.first_failing) == ("found", "bad")
    runs = {item: [a for t in result.trials if t.item == item for a in t.attempts] for item in ("g", "bad")}
    assert runs == {"g": ["pass"] * 2, "bad": ["recorded"] * 3}, runs
    line = Line(1)
    for position, failed in ((0, False), (0, False), (1, True), (1, True), (1, True)):
        line.record(position, failed)
    assert line.lookalike(1) <= 0.05
    line.failed[1] -= 1  # one run fewer: at 0.6 a look-alike would be likelier than 1 in 20
    assert line.lookalike(1) > 0.05 and 0.6 ** 2 * 0.4 ** 2 > 0.05
    # the same check at rate 0.3 only would need no more runs than the bad end's own
    assert all_pass(RATE_FIRST, 0, 2, PRIOR.flaky()) > 0.05  # the rate-blind check asked for 5 passes


@pytest.mark.parametrize("n", [1, 5, 16, 64])
def test_runs_go_together_only_where_a_single_worker_would_run_them_too(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    items = [f"v{i}" for i in range(n + 1)]
    batches: list[int] = []
    run = _Walker.run

    def counted(self: _Walker, positions: list[int]) -> None:
        batches.append(len(positions))
        run(self, positions)

    monkeypatch.setattr(_Walker, "run", counted)
    for first in range(1, n + 1):
        cost = {}
        for jobs in (1, 2):
            batches.clear()
            result = walk(items[0], items[1:], from_(first, items), jobs)
            assert result.first_failing == items[first]
            cost[jobs] = (sum(batches), sum(-(-b // jobs) for b in batches))  # runs, rounds on `jobs` workers
        assert cost[2][0] == cost[1][0] and cost[2][1] < cost[1][1], (first, cost)


def test_the_bad_ends_second_run_goes_beside_the_searchs_first(monkeypatch: pytest.MonkeyPatch) -> None:
    items = [f"v{i}" for i in range(17)]
    batches: list[list[int]] = []
    run = _Walker.run

    def logged(self: _Walker, positions: list[int]) -> None:
        batches.append(list(positions))
        run(self, positions)

    monkeypatch.setattr(_Walker, "run", logged)
    walk(items[0], items[1:], from_(5, items), 1)
    alone, batches[:] = list(batches), []
    walk(items[0], items[1:], from_(5, items), 2)
    assert alone[:3] == [[0, 16], [16], [alone[2][0]]]  # -j 1: the ends, the bad end again, then the search
    assert batches[:2] == [[0, 16], [16, alone[2][0]]]  # -j 2: the bad end again and that same first search run


def test_an_item_failing_another_way_is_skipped_and_the_answer_names_both() -> None:
    items = ["g", "a", "b", "c", "d", "bad"]
    verdicts = {"g": "not-reproduced", "a": "not-reproduced", "b": "different-failure", "c": "reproduced",
                "d": "reproduced", "bad": "reproduced"}
    result = walk("g", items[1:], lambda i: obs(verdicts[i]))
    # b tells nothing of the recorded failure (git bisect skip): the change is in b or in c
    assert (result.status, result.first_failing, result.skipped) == ("undecided", None, ("b",))
    assert [(c.item, c.probability) for c in result.candidates] == [("b", 0.5), ("c", 0.5)]
    assert sum(1 for t in result.trials if t.item == "b") == 1  # never tried again
    assert any("skipped, as git bisect skip does" in n and "b: different-failure" in n and "may be any of b" in n
               for n in result.notes)
    assert candidates_said(result, str) == "likeliest first: b (0.50), c (0.50)"


def test_the_ends_decide_first() -> None:
    assert walk("g", ["a", "b"], lambda i: obs("reproduced")).status == "baseline fails"
    result = walk("g", ["a", "b"], lambda i: obs("different-failure" if i == "b" else "not-reproduced"))
    assert (result.status, result.first_failing) == ("not-reproduced", None)
    assert [t.item for t in result.trials] == ["g"] + ["b"] * 14  # until a 1-in-5 failure would have shown


def test_a_pass_after_the_first_failure_is_noted() -> None:
    # a deterministic-looking search never goes back before a pass; these runs come from a search that did
    verdicts = {"g": "not-reproduced", "a": "reproduced", "b": "not-reproduced", "c": "reproduced"}
    with ThreadPoolExecutor(max_workers=1) as pool:
        w = _Walker(("g", "a", "b", "c"), lambda i: obs(verdicts[i]), Rules(), 1, pool, time.monotonic)
        w.run([0, 3, 3, 2, 1, 0, 0])
        assert _later_passes(w, 1) == ["b never failed the recorded way in its 1 run(s), after a failed: the "
                                       "failure is not monotonic, or comes and goes"]
        verdicts["c"] = "not-reproduced"
        w.run([3])  # the failure comes and goes after the answer too: flaky, not worth a note
    assert _later_passes(w, 1) == []


# --- flaky failures (seeded stand-ins) ----------------------------------------------------


def flaky_line(n: int, first: int, rate: float, seed: int) -> tuple[list[str], Any]:
    rng = random.Random(seed)
    items = [f"c{i:02d}" for i in range(n + 1)]
    return items, lambda item: obs("reproduced" if items.index(item) >= first and rng.random() < rate
                                   else "not-reproduced")


@pytest.mark.parametrize("seed", range(4))
def test_a_flaky_culprit_is_found_with_its_probability(seed: int) -> None:
    items, test = flaky_line(24, 9, 0.5, seed)
    result = walk(items[0], items[1:], test)
    assert (result.status, result.first_failing, result.last_passing) == ("found", "c09", "c08")
    assert result.confidence >= 0.95
    assert [c.item for c in result.candidates][0] == "c09" or result.candidates[0].probability < 0.05
    ran_twice = {t.item for t in result.trials if sum(1 for u in result.trials if u.item == t.item) > 1}
    assert ran_twice  # points are tested again
    assert result.rate is not None and result.rate.runs >= 2


def test_the_budget_ends_a_flaky_walk_undecided_with_each_candidates_probability() -> None:
    items, test = flaky_line(24, 9, 0.3, 5)
    result = walk(items[0], items[1:], test, rules=Rules(max_runs=14))
    assert result.status == "undecided" and result.first_failing is None
    assert sum(len(t.attempts) for t in result.trials) == 14
    assert result.confidence < 0.95
    assert sum(c.probability for c in result.candidates) >= 0.94  # they hold the confidence together
    said = candidates_said(result, str)
    likeliest = sorted(result.candidates, key=lambda c: -c.probability)
    assert said.startswith(f"likeliest first: {likeliest[0].item} ({likeliest[0].probability:.2f}), ")
    assert said.endswith(f", and {len(likeliest) - 6} more (each {likeliest[6].probability:.2f} or less)")
    assert any("run budget (14 runs) is spent" in n for n in result.notes)


def test_a_time_budget_ends_the_walk() -> None:
    items, test = flaky_line(24, 9, 0.5, 1)
    ticks = iter(range(10_000))
    result = walk(items[0], items[1:], test, rules=Rules(seconds=6), clock=lambda: float(next(ticks)))
    assert result.status == "undecided"
    assert any("time budget (6 s) is spent" in n for n in result.notes)


def test_a_failure_of_another_kind_is_never_the_recorded_one() -> None:
    # c05.. fail the recorded way half the time; c03 and c04 fail another way every time
    rng = random.Random(2)
    items = [f"c{i:02d}" for i in range(13)]

    def test(item: str) -> Observation:
        i = items.index(item)
        if i in (3, 4):
            return obs("different-failure")
        return obs("reproduced" if i >= 5 and rng.random() < 0.5 else "not-reproduced")

    result = walk(items[0], items[1:], test)
    assert set(result.skipped) <= {"c03", "c04"}
    assert all(t.verdict != "reproduced" for t in result.trials if t.item in ("c03", "c04"))
    if result.found:
        assert result.first_failing == "c05"
    else:  # the skipped items border the answer: each keeps its probability
        assert {c.item for c in result.candidates} <= {"c03", "c04", "c05"}


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

    result = run_commits(fake, fake, Path("bad.json"), Path("good.json"), BisectSettings(None, jobs), FakeProgress(), history)
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
    assert len(fake.built) == len({t.item for t in result.walk.trials}) <= 2 + math.ceil(math.log2(len(LINE)))
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


def test_a_commit_that_cannot_be_built_is_skipped_and_named() -> None:
    fake = FakeReplayer(GOOD_PLAN, BAD_PLAN, fails_from(LINE[2]), broken=lambda p: commit_of(p) == LINE[1])
    result, _ = session(fake, jobs=2)
    skipped = result.walk.trial(LINE[1])
    assert skipped is not None and (skipped.verdict, skipped.signature) == ("inconclusive", "build failed: no such release")
    # the change is in the commit that cannot be built or in the next: exit 1, both named
    assert (result.walk.status, result.first_failing, result.walk.skipped) == ("undecided", None, (LINE[1],))
    assert [c.item for c in result.walk.candidates] == [LINE[1], LINE[2]]


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
    monkeypatch.setattr(cli, "Loader", lambda options: fake)  # the fake loads the capsules too
    monkeypatch.setattr(cli, "git_history", lambda source, good: HISTORY)


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
    assert out.rstrip().endswith(f"first failing commit: {LINE[2]} round start of day (probability ≥ 0.99, asked 0.95)")


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
