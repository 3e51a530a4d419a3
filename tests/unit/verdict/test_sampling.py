"""The one stopping rule: runs that agree stop at the minimum, runs that disagree go on until the
rate is known or the budget ends, a fix check's runs go on until decided against the baseline."""
from __future__ import annotations

from collections.abc import Sequence

import pytest

from runner.verdict.vocabulary import Classification
from runner.verdict.rate import Rate
from runner.verdict.sampling import Sampling, change_rate, series_rate

ADAPTIVE = Sampling(least=3, most=20, precision=0.25)


def run_until_done(policy: Sampling, outcomes: Sequence[Classification], seconds: float = 1.0) -> list[Classification]:
    """Feed the rule the given outcomes one by one (each attempt taking `seconds`) until it stops."""
    done: list[Classification] = []
    while policy.series_next(done, seconds * len(done)) is not None:
        done.append(outcomes[len(done)])
    return done


@pytest.mark.parametrize("kind", ["recorded", "pass", "other", "inconclusive"])
def test_runs_that_agree_stop_at_the_minimum(kind: Classification) -> None:
    assert run_until_done(ADAPTIVE, [kind] * 50) == [kind] * 3


def test_runs_that_disagree_go_on_until_the_rate_is_known() -> None:
    half = ["recorded", "pass"] * 25
    done = run_until_done(ADAPTIVE, half)  # type: ignore[arg-type]
    rate = series_rate(done)
    assert len(done) == 12 and rate.half_width <= 0.25  # 6/12: 25–75 %
    assert series_rate(done[:-1]).half_width > 0.25  # and not one run earlier
    assert ADAPTIVE.series_next(done[:3]) == "runs disagree: attempt 4 of up to 20"


def test_a_timeout_disagrees_but_is_no_run_of_the_rate() -> None:
    done = run_until_done(ADAPTIVE, ["recorded", "inconclusive"] + ["recorded"] * 30)  # type: ignore[list-item]
    assert len(done) == 5 and series_rate(done) == Rate.of(4, 4)  # 4/4 runs: known to ±25 points


def test_the_budget_of_runs_and_of_time_ends_a_series() -> None:
    half: list[Classification] = ["recorded", "pass"] * 25
    assert len(run_until_done(Sampling(least=3, most=7, precision=0.1), half)) == 7
    timed = Sampling(least=3, most=20, precision=0.1, budget_s=10.0)
    assert len(run_until_done(timed, half, seconds=2.0)) == 5  # a 6th at the 2 s mean would end at 12 s
    assert len(run_until_done(Sampling(least=3, most=20, precision=0.1, budget_s=1.0), half, 2.0)) == 3  # the minimum


def test_exactly_n_means_n_whatever_they_say() -> None:
    exact = Sampling(least=3, most=20, precision=0.25, exactly=5)
    assert run_until_done(exact, ["recorded"] * 10) == ["recorded"] * 5
    assert exact.fix_next(Rate.of(3, 3), ["recorded"]) == "attempt 2/5"  # a fix check's side too


def test_a_fix_check_stops_when_decided_against_the_baseline() -> None:
    base = Rate.of(3, 3)
    assert ADAPTIVE.fix_next(base, []) == "attempt 1 of up to 20 (5 more passing would decide)"
    assert ADAPTIVE.fix_next(base, ["pass"] * 4) is not None
    assert ADAPTIVE.fix_next(base, ["pass"] * 5) is None  # fixed
    assert ADAPTIVE.fix_next(base, ["pass", "pass", "recorded"]) is None  # not fixed
    assert ADAPTIVE.fix_next(base, ["other"] * 3) is None  # another failure every time
    assert ADAPTIVE.fix_next(Rate.of(0, 3), []) is None  # nothing shown to fix: no run at all
    assert ADAPTIVE.fix_next(Rate.of(6, 12), ["pass"] * 11) is not None  # a flaky baseline needs more
    assert ADAPTIVE.fix_next(Rate.of(6, 12), ["pass"] * 12) is None
    assert ADAPTIVE.fix_next(Rate.of(1, 20), ["pass"] * 20) is None  # the budget ends it undecided
    assert change_rate(["pass", "other", "inconclusive"]) == Rate.of(1, 2)


def test_the_farm_sends_the_fewest_runs_that_could_decide_at_once() -> None:
    assert ADAPTIVE.series_batch([]) == 3
    assert ADAPTIVE.series_batch(["recorded"] * 3) == 0
    more = ADAPTIVE.series_batch(["recorded", "pass", "recorded"])
    assert more == 4  # 4 more failures would put 6/7 within ±25 points; fewer could not
    assert ADAPTIVE.series_next(["recorded", "pass", "recorded"] + ["recorded"] * 3) is not None  # type: ignore[operator]


def test_a_fix_checks_baseline_goes_on_until_a_fix_could_be_decided_within_the_budget() -> None:
    low = ["recorded", "pass", "pass"] * 10  # 4/12 would need 24 passes: more than a side's 20
    series = run_until_done(ADAPTIVE, low)  # type: ignore[arg-type]
    done: list[Classification] = []
    while ADAPTIVE.baseline_next(done) is not None:
        done.append(low[len(done)])  # type: ignore[arg-type]
    assert len(series) < len(done) <= 20
    assert ADAPTIVE.baseline_next(done[:len(series)]) == f"the fix needs a surer baseline: attempt {len(series) + 1} of up to 20"
    assert ADAPTIVE.baseline_next(["recorded"] * 3) is None  # agreeing runs: the same 3 as a replay
    assert ADAPTIVE.baseline_next(["pass", "other", "pass", "pass"]) is None  # never as recorded: nothing to fix
