"""A seeded stand-in for a farm capsule's runs (each attempt fails as recorded with a fixed
probability), stopped by the farm's own sampling at its defaults and decided by its own verdict
code, read night by night as "since last night" (tests/unit/farm/test_nights.py and
scripts/bench_farm_noise.py)."""
from __future__ import annotations

import random
from collections.abc import Sequence

from runner.farm.history import transitions
from runner.farm.records import AttemptRecord, CapsuleResult, Night
from runner.farm.night_options import FarmOptions
from runner.farm.verdict import decide
from runner.verdict.vocabulary import Classification
from runner.verdict.judge import Expected

EXPECTED = Expected(True, 1, None, "exit1:aaaa")


def night_result(rng: random.Random, p_fail: float, night_id: str) -> CapsuleResult:
    """One night of one capsule: attempts drawn until the farm's sampling stops, then decided."""
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


def news(seed: int, rates: Sequence[float]) -> list[tuple[int, str, str, str]]:
    """(night, kind, before, after) of each night's transitions, one failure rate per night."""
    rng = random.Random(seed)
    nights: list[Night] = []
    out = []
    for i, p in enumerate(rates):
        nights.append(Night(f"n{i}", f"2026-12-{i + 1:02d}T03:00:00Z", "x", results=(night_result(rng, p, f"n{i}"),)))
        out += [(i, t.kind, str(t.before), t.after) for t in transitions(nights)]
    return out


def flip_flops(seed: int, p_fail: float, nights: int = 10) -> list[tuple[str, str, str]]:
    """The news after a flaky capsule's first night beyond its first `flaky` (once its runs first
    show both a failure and a pass it is flaky, and stays flaky): empty when it made none."""
    later = [(kind, before, after) for i, kind, before, after in news(seed, [p_fail] * nights) if i]
    return [] if not later or later == [("flaky", later[0][1], "flaky")] else later


def nights_to_news(seed: int, p_fail: float, fixed_at: int = 6, nights: int = 16) -> int | None:
    """A failure at `p_fail` fixed after `fixed_at` nights: on which night without it "no longer
    reproducing" came (None: not within the nights)."""
    gone = [i for i, kind, _, _ in news(seed, [p_fail] * fixed_at + [0.0] * (nights - fixed_at))
            if kind == "no-longer-reproducing"]
    return gone[0] - fixed_at + 1 if gone else None
