"""The one rate model: Wilson intervals, their sentences, and the fix rule."""
from __future__ import annotations

import pytest

from runner.verdict.rate import PRIOR, Rate, all_pass, below, passes_for, passes_to_decide, wilson, z_of


def test_wilson_matches_the_textbook_values() -> None:
    assert wilson(5, 11) == pytest.approx((0.2127, 0.7199), abs=1e-4)  # the FLAKY 5/11 example
    assert wilson(3, 3) == pytest.approx((0.4385, 1.0), abs=1e-4)
    assert wilson(0, 30) == pytest.approx((0.0, 0.1135), abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)


def test_a_wider_confidence_gives_a_wider_interval() -> None:
    lo95, hi95 = wilson(4, 10, 0.95)
    lo99, hi99 = wilson(4, 10, 0.99)
    assert lo99 < lo95 < hi95 < hi99
    assert z_of(0.95) == pytest.approx(1.95996, abs=1e-4)


@pytest.mark.parametrize("confidence", [0.2, 1.0, 1.5])
def test_a_confidence_out_of_range_is_refused(confidence: float) -> None:
    with pytest.raises(ValueError, match="confidence"):
        wilson(1, 2, confidence)


def test_phrases_say_what_the_runs_allow_and_no_more() -> None:
    assert Rate.of(5, 11).phrase() == "fails in 21–72 % of runs (95 %)"
    assert Rate.of(3, 3).phrase() == "fails in at least 44 % of runs (95 %)"
    assert Rate.of(0, 3).phrase() == "fails in at most 56 % of runs (95 %)"
    assert Rate.of(0, 3, 0.99).phrase().endswith("(99 %)")


def test_a_fix_needs_the_patched_rate_below_the_baseline() -> None:
    deterministic = Rate.of(3, 3)
    assert passes_to_decide(deterministic, Rate.of(0, 0)) == 5
    assert below(Rate.of(0, 5), deterministic) and not below(Rate.of(0, 4), deterministic)
    half = Rate.of(5, 11)  # a flaky baseline needs many more straight passes
    assert passes_to_decide(half, Rate.of(0, 0)) == 15
    assert passes_to_decide(Rate.of(0, 3), Rate.of(0, 0)) is None  # no failure shown: nothing to fix
    assert below(Rate.of(1, 40), Rate.of(3, 3))  # rarer, not gone: the caller decides whether that is a fix


def test_passes_for_counts_the_straight_passes_that_make_luck_unlikely() -> None:
    flaky = PRIOR.flaky()
    # a deterministic-looking failure seen failing twice: 7 passes in all; three times: 5; four: 4
    assert [passes_for(f, 0, 0, 0.05, flaky) for f in (2, 3, 4)] == [7, 5, 4]
    assert passes_for(2, 0, 3, 0.05, flaky) == 4  # three of them already run
    assert passes_for(2, 0, 7, 0.05, flaky) == 0
    assert passes_for(2, 0, 0, 0.05, flaky, most=3) == 3  # capped
    for f, p in ((2, 0), (5, 3), (1, 4)):
        n = passes_for(f, p, 0, 0.05, flaky)
        assert all_pass(f, p, n, flaky) <= 0.05 < all_pass(f, p, n - 1, flaky)
