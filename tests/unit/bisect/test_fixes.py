"""--commits --fixed-at: the commit after the recorded one where the recorded failure is gone (the
mirrored walk on a fake replayer, seeded stand-ins for flaky failures), and the CLI."""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

import runner.cli.bisect as cli
from runner.bisect.fixes import FixResult, find_fix
from runner.bisect.trial import BisectSettings
from runner.build.plan import Plan, Source
from runner.cli.main import main
from runner.errors import UsageError
from tests.envelope import result_of
from tests.unit.bisect.fakes import FakeProgress, FakeReplayer, Outcome, commit_of, plan

RECORDED = "a" * 40
LINE = [c * 40 for c in "bcdef"]  # after the recorded commit, FIXED_AT (f…) last
SUBJECTS = ["add tests", "fix rounding", "docs", "refactor", "release 2.1"]
CAPSULE = plan(commit=RECORDED, diff="diff --git a/x b/x\n")


def history(source: Source, recorded: str) -> list[tuple[str, str]]:
    order = [RECORDED, *LINE]
    assert source.commit is not None
    upto = next(i for i, sha in enumerate(order) if sha.startswith(source.commit))
    return list(zip(LINE, SUBJECTS))[order.index(recorded):upto]


def fixed_from(sha: str, rate: float = 1.0, seed: int = 0) -> Any:
    """Fails the recorded way (at `rate`) before `sha`, passes from it on."""
    order, rng = [RECORDED, *LINE], random.Random(seed)

    def outcome(p: Plan) -> Outcome:
        return "recorded" if order.index(commit_of(p)) < order.index(sha) and rng.random() < rate else "pass"
    return outcome


def fix(fake: FakeReplayer, fixed_at: str = LINE[-1], **settings: Any) -> FixResult:
    return find_fix(fake, fake, Path("bad.json"), fixed_at, BisectSettings(**settings), FakeProgress(), history)


@pytest.mark.parametrize("fixing", range(len(LINE)))
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_deterministic_fix_is_found_at_every_place(fixing: int, jobs: int) -> None:
    fake = FakeReplayer(plan(), CAPSULE, fixed_from(LINE[fixing]))
    result = fix(fake, jobs=jobs)
    assert (result.walk.status, result.fixing) == ("found", result.commits[fixing])
    assert result.fixing is not None and result.fixing.subject == SUBJECTS[fixing]
    assert result.walk.confidence >= 0.95 and result.walk.trials[0].item == LINE[-1]  # the fixed end first
    assert all(p.source is not None and not p.source.diff for p in fake.ran)  # at each commit, without the diff
    assert result.fix_candidates[0].item == LINE[fixing]
    assert any("assumes the fix, once in, stays in" in n for n in result.walk.notes)


@pytest.mark.parametrize("rate", [0.5, 1.0])
def test_a_flaky_fix_is_found_for_these_seeds(rate: float) -> None:
    # a recorded failure rules the fix out at once; a pass before the fix is luck the walk weighs
    for seed in range(6):
        result = fix(FakeReplayer(plan(), CAPSULE, fixed_from(LINE[2], rate, seed)))
        assert (result.walk.status, result.fixing and result.fixing.sha) == ("found", LINE[2]), seed
        assert result.walk.rate is not None and result.walk.rate.failed >= 2  # the recorded commit's rate first


def test_still_failing_at_fixed_at_is_not_fixed() -> None:
    result = fix(FakeReplayer(plan(), CAPSULE, lambda p: "recorded"))
    assert (result.walk.status, result.fixing, result.found) == ("baseline fails", None, False)
    assert any("still comes back at ffffffffffff (--fixed-at): not fixed there" in n for n in result.walk.notes)


def test_an_abbreviated_fixed_at_is_followed_to_its_commit() -> None:
    result = fix(FakeReplayer(plan(), CAPSULE, fixed_from(LINE[1])), fixed_at=LINE[3][:9])
    assert [c.sha for c in result.commits] == LINE[:4] and result.fixing is not None and result.fixing.sha == LINE[1]


@pytest.mark.parametrize(("fixed_at", "capsule", "message"), [
    ("not-a-sha", CAPSULE, "--fixed-at 'not-a-sha': not a commit id"),
    (RECORDED, CAPSULE, "bad.json: no commit leads from the recorded aaaaaaaaaaaa to --fixed-at"),
    (LINE[-1], plan(commit=None), "bad.json: the capsule records no commit"),
])
def test_usage_errors(fixed_at: str, capsule: Plan, message: str) -> None:
    with pytest.raises(UsageError) as e:
        fix(FakeReplayer(plan(), capsule, lambda p: "pass"), fixed_at)
    assert e.value.message.startswith(message)


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")


def use(monkeypatch: pytest.MonkeyPatch, fake: FakeReplayer) -> None:
    monkeypatch.setattr(cli, "Replayer", lambda *a, **k: fake)
    monkeypatch.setattr(cli, "Loader", lambda options: fake)  # the fake loads the capsules too
    monkeypatch.setattr(cli, "git_history", history)


def test_cli_names_the_fixing_commit(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                     wide: None) -> None:
    use(monkeypatch, FakeReplayer(plan(), CAPSULE, fixed_from(LINE[1])))
    assert main(["bisect", "bad.json", "--commits", "--fixed-at", LINE[-1], "--json"]) == 0
    data = result_of(capsys.readouterr().out)
    assert (data["mode"], data["good"], data["fixing"]) == ("fix", None, {"sha": LINE[1], "subject": "fix rounding"})
    assert main(["bisect", "bad.json", "--commits", "--fixed-at", LINE[-1]]) == 0
    out = capsys.readouterr().out
    assert f"{LINE[-1][:12]} release 2.1 (fixed end)" in out and f"{RECORDED[:12]} (recorded) (recorded)" not in out
    # the table's last column: how likely each commit is the first fixed one (the fixing commit's row)
    assert "fixed first" in out and any(row.startswith(f"{LINE[1][:12]} fix rounding") and row.rstrip().endswith(
        "≥ 0.99") for row in out.splitlines())
    assert out.rstrip().endswith(f"fixed by commit: {LINE[1]} fix rounding (probability ≥ 0.99, asked 0.95)")


@pytest.mark.parametrize(("argv", "message"), [
    (["--fixed-at", LINE[-1]], "--fixed-at finds the commit that fixed BAD's failure: give it with --commits"),
    (["--commits", "--fixed-at", LINE[-1], "--good", "good.json"], "--fixed-at bisects BAD alone: drop --good"),
    (["--commits"], "--good GOOD is missing"),
])
def test_cli_usage(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str],
                   message: str) -> None:
    use(monkeypatch, FakeReplayer(plan(), CAPSULE, lambda p: "pass"))
    assert main(["bisect", "bad.json", *argv]) == 2
    assert message in capsys.readouterr().err
