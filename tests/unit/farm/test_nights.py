"""The farm judges on runs, not nights: nights of a seeded stand-in for the runs (each attempt fails
as recorded with a fixed probability), stopped by the farm's own sampling at its defaults and
decided by its own verdict code, then read night by night as "since last night"
(tests/unit/farm/standin.py)."""
from __future__ import annotations

import random

from tests.unit.farm.standin import flip_flops, news, night_result, nights_to_news

NIGHTS = 10


def test_a_flaky_capsule_over_ten_nights_makes_no_flip_flop_news() -> None:
    flips = {(p, seed): later for p in (0.2, 0.35, 0.5, 0.65, 0.8) for seed in range(20)
             if (later := flip_flops(seed, p, NIGHTS))}
    assert flips == {}


def test_a_flaky_capsules_night_that_failed_three_of_three_is_no_news_nor_the_next() -> None:
    # the stand-in's draws, seeded: find nights that failed every run after the capsule stood as flaky
    for seed in range(200):
        said = news(seed, [0.5] * NIGHTS)
        rng = random.Random(seed)
        verdicts = [night_result(rng, 0.5, f"n{i}").verdict for i in range(NIGHTS)]
        runs = [i for i in range(2, NIGHTS - 1) if verdicts[i] == verdicts[i + 1] == "reproduced"
                and "flaky" in verdicts[:i]]
        if runs:
            at = runs[0]
            assert not [n for n in said if n[0] in (at, at + 1)], (seed, verdicts, said)
            return
    raise AssertionError("no seed gave two nights in a row that failed every run")


def test_a_real_fix_is_still_news() -> None:
    # a failure that comes back every run, fixed after 6 nights: news on the 3rd night without it
    assert [(i, kind) for i, kind, _, _ in news(1, [1.0] * 6 + [0.0] * 6)] == [(0, "new"), (8, "no-longer-reproducing")]
    assert nights_to_news(1, 1.0) == 3
    # a flaky one (half of the runs), fixed after 6 nights: news once the passes are beyond luck
    found = [nights_to_news(seed, 0.5) for seed in range(20)]
    assert all(n is None or n >= 3 for n in found)  # never before --fixed-after nights
    assert sum(n is not None for n in found) >= 18, found  # within 10 nights


def test_a_deterministic_regression_after_a_long_pass_is_news_at_once() -> None:
    # 10 nights passing every run, then failing every run: reproduced on its first night, not flaky
    # until --fixed-after more nights (the passes were never the failure's)
    assert news(1, [0.0] * 10 + [1.0] * 3) == [(0, "new", "new", "not-reproduced"),
                                               (10, "newly-reproducing", "not-reproduced", "reproduced")]


def test_a_failure_back_after_its_fix_is_news_at_once_and_its_next_fix_is_judged_on_its_own_runs() -> None:
    said = [(i, kind) for i, kind, _, _ in news(1, [1.0] * 6 + [0.0] * 4 + [1.0] * 3 + [0.0] * 4)]
    # fixed on the 3rd night without it; back the first night it fails every run; fixed again on the
    # 3rd night without it (its 9 of 9 runs since it came back, not the fix's passes, are the baseline)
    assert said == [(0, "new"), (8, "no-longer-reproducing"), (10, "newly-reproducing"), (15, "no-longer-reproducing")]
