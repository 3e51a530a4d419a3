"""The farm judges on runs, not nights: nights of a seeded stand-in for the runs (each attempt
fails as recorded with a fixed probability), stopped by the farm's own sampling at its defaults
and decided by its own verdict code, then read night by night as "since last night"."""
from __future__ import annotations

import random

from runner.farm.history import transitions
from runner.farm.model import AttemptRecord, CapsuleResult, Night
from runner.farm.options import FarmOptions
from runner.farm.verdict import decide
from runner.verdict.facts import Classification
from runner.verdict.judge import Expected

EXPECTED = Expected(True, 1, None, "exit1:aaaa")
NIGHTS = 10


def _night_result(rng: random.Random, p_fail: float, night_id: str) -> CapsuleResult:
    sampling = FarmOptions().sampling  # the defaults: 3 runs, more while they disagree, up to 10
    kinds: list[Classification] = []
    while sampling.series_next(kinds) is not None:
        kinds.append("recorded" if rng.random() < p_fail else "pass")
    records = [AttemptRecord(f"{night_id}-{i}", night_id, "c", "recorded", i + 1, "finished", "2026-12-01T00:00:00Z",
                             exit_code=1 if k == "recorded" else 0, classification=k,
                             signature="exit1:aaaa" if k == "recorded" else "exit0:bbbb")
               for i, k in enumerate(kinds)]
    d = decide(EXPECTED, records)
    return CapsuleResult(night_id, "c", "caps/c.json", "twin", None, None, d.verdict, d.signature, d.signatures,
                         rate=d.rate, replay_version="0.1.0")


def _news(seed: int, rates: list[float]) -> list[tuple[int, str, str, str]]:
    """(night, kind, before, after) of each night's recorded-side transitions, one rate per night."""
    rng = random.Random(seed)
    nights: list[Night] = []
    out = []
    for i, p in enumerate(rates):
        nights.append(Night(f"n{i}", f"2026-12-{i + 1:02d}T03:00:00Z", "x", results=(_night_result(rng, p, f"n{i}"),)))
        out += [(i, t.kind, str(t.before), t.after) for t in transitions(nights)]
    return out


def test_a_flaky_capsule_over_ten_nights_makes_no_flip_flop_news() -> None:
    flips = {}
    for p in (0.2, 0.35, 0.5, 0.65, 0.8):
        for seed in range(20):
            later = [(kind, before, after) for i, kind, before, after in _news(seed, [p] * NIGHTS) if i]
            # once its runs first show both a failure and a pass it is flaky, and stays flaky
            if later and later != [("flaky", later[0][1], "flaky")]:
                flips[(p, seed)] = later
    assert flips == {}


def test_a_flaky_capsules_night_that_failed_three_of_three_is_no_news_nor_the_next() -> None:
    # the stand-in's draws, seeded: find nights that failed every run after the capsule stood as flaky
    for seed in range(200):
        news = _news(seed, [0.5] * NIGHTS)
        rng = random.Random(seed)
        verdicts = [_night_result(rng, 0.5, f"n{i}").verdict for i in range(NIGHTS)]
        runs = [i for i in range(2, NIGHTS - 1) if verdicts[i] == verdicts[i + 1] == "reproduced"
                and "flaky" in verdicts[:i]]
        if runs:
            at = runs[0]
            assert not [n for n in news if n[0] in (at, at + 1)], (seed, verdicts, news)
            return
    raise AssertionError("no seed gave two nights in a row that failed every run")


def test_a_real_fix_is_still_news() -> None:
    # a failure that comes back every run, fixed after 6 nights: news on the 3rd night without it
    news = _news(1, [1.0] * 6 + [0.0] * 6)
    assert [(i, kind) for i, kind, _, _ in news] == [(0, "new"), (8, "no-longer-reproducing")]
    # a flaky one (half of the runs), fixed after 6 nights: news once the passes are beyond luck
    found = []
    for seed in range(20):
        gone = [i for i, kind, before, _ in _news(seed, [0.5] * 6 + [0.0] * 10)
                if kind == "no-longer-reproducing" and before == "flaky"]
        found.append(gone[0] - 5 if gone else None)
    assert all(n is None or n >= 3 for n in found)  # never before --fixed-after nights
    assert sum(n is not None for n in found) >= 18, found  # within 10 nights
