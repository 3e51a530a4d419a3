"""A replay's series stopped and judged (replay/decide.py), driven by a stand-in for the
containers whose outcomes the test scripts run by run: the same stopping rule and judgements
`replay CAPSULE` drives."""
from __future__ import annotations

from collections.abc import Iterator, Sequence

from runner.replay import ReplayOptions
from runner.replay.decide import Until, fix_checked, replayed
from runner.verdict.judge import Attempt, Classification, Expected
from runner.verdict.rate import Rate

FAILED = Expected(True, 1, None, "exit1:aaaa", ("FAIL",))
ADAPTIVE = ReplayOptions().sampling


def attempt(kind: Classification) -> Attempt:
    return Attempt(0 if kind == "pass" else 1, None, "exit0:bbbb" if kind == "pass" else "exit1:aaaa", (), 1.0,
                   kind == "inconclusive", classification=kind)


class Scripted:
    """One series' runs: each next outcome from the script (its last one repeats), each step's
    name kept as the progress would say it."""

    def __init__(self, *script: Classification) -> None:
        self.script = script
        self.steps: list[str] = []

    def outcomes(self) -> Iterator[Classification]:
        yield from self.script
        while True:
            yield self.script[-1]

    def __call__(self, until: Until, side: str) -> list[Attempt]:
        out: list[Attempt] = []
        outcomes = self.outcomes()
        while (name := until(out, float(len(out)))) is not None:
            self.steps.append(f"{side}: {name}" if side else name)
            out.append(attempt(next(outcomes)))
        return out


def kinds(attempts: Sequence[Attempt]) -> list[str]:
    return [a.classification for a in attempts]


def test_a_deterministic_failure_costs_three_runs_as_it_always_did() -> None:
    run = Scripted("recorded")
    outcome = replayed(FAILED, ADAPTIVE, run)
    assert (outcome.verdict, len(outcome.attempts), outcome.rate) == ("reproduced", 3, Rate.of(3, 3))
    assert run.steps == ["attempt 1/3", "attempt 2/3", "attempt 3/3"]


def test_runs_that_disagree_go_on_and_say_why() -> None:
    run = Scripted(*(["recorded", "pass"] * 10))
    outcome = replayed(FAILED, ADAPTIVE, run)
    assert (outcome.verdict, len(outcome.attempts), outcome.rate) == ("flaky", 12, Rate.of(6, 12))
    assert run.steps[3] == "runs disagree: attempt 4 of up to 20"


def test_exactly_n_attempts() -> None:
    outcome = replayed(FAILED, ReplayOptions(attempts=7).sampling, Scripted("recorded"))
    assert len(outcome.attempts) == 7


def test_a_fix_of_a_deterministic_failure_needs_five_straight_passes() -> None:
    before, after = Scripted("recorded"), Scripted("pass")
    outcome = fix_checked(FAILED, ADAPTIVE, before, after)
    assert outcome.baseline is not None and outcome.fix is not None
    assert (outcome.verdict, len(outcome.baseline.attempts), len(outcome.attempts)) == ("fixed", 3, 5)
    assert outcome.baseline.rate == Rate.of(3, 3) and outcome.rate == Rate.of(0, 5)
    assert after.steps[0] == "with the patch: attempt 1 of up to 20 (5 more passing would decide)"
    assert before.steps[0] == "the unpatched source: attempt 1/3"


def test_a_placebo_on_a_flaky_failure_is_not_fixed_by_a_lucky_streak() -> None:
    """The baseline fails half the time; with the placebo, five passes in a row (which used to
    be FIXED after three), then the failure again."""
    before = Scripted(*(["recorded", "pass"] * 10))
    after = Scripted("pass", "pass", "pass", "pass", "pass", "recorded")
    outcome = fix_checked(FAILED, ADAPTIVE, before, after)
    assert outcome.verdict == "not-fixed" and kinds(outcome.attempts) == ["pass"] * 5 + ["recorded"]


def test_at_the_budget_a_fix_check_says_how_many_more_passes_would_decide() -> None:
    before = Scripted(*(["recorded", "pass"] * 10))
    outcome = fix_checked(FAILED, ReplayOptions(max_attempts=8).sampling, before, Scripted("pass"))
    assert outcome.baseline is not None and outcome.baseline.rate == Rate.of(4, 8)
    assert (outcome.verdict, len(outcome.attempts)) == ("inconclusive", 8)
    assert outcome.fix is not None and outcome.fix.more_passes == 7
    assert "8/8 attempts with the patch passed" in outcome.fix.why


def test_no_run_with_the_change_when_the_failure_never_came_back() -> None:
    after = Scripted("pass")
    outcome = fix_checked(FAILED, ADAPTIVE, Scripted("pass"), after)
    assert (outcome.verdict, outcome.attempts, after.steps) == ("inconclusive", (), [])


def test_a_recorded_pass_checked_at_a_ref_has_no_baseline() -> None:
    passed = Expected(False, 0, None, None)
    outcome = fix_checked(passed, ADAPTIVE, None, Scripted("recorded"), ("the recorded commit", "at abc1234"))
    assert (outcome.verdict, outcome.baseline, len(outcome.attempts)) == ("fixed", None, 3)
