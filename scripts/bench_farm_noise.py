"""The farm judges on runs, not nights (issue 37), rows of scripts/bench.py: counts over seeded
trials of the farm's own sampling, verdicts and standing (tests/unit/farm/standin.py stands in
for the containers: each attempt fails as recorded with a fixed probability), at the defaults
(3 attempts, up to 10 while they disagree; --fixed-after 3, --window 14, confidence 0.95):
  flip-flop news      flaky capsules at rates 0.1-0.9, 10 nights each: news after the first
                      `flaky` (target: none, at most 1 in 100)
  a fixed failure     a failure that came back every run, fixed after 6 nights: the night
                      without it that says "no longer reproducing" (target: the 3rd, --fixed-after)
  a fixed flaky one   the same for a 0.5 and a 0.3 flaky failure: fixes named within 10 nights
                      (0.5 target >= 90 of 100; 0.3 printed: its passes are what luck often gives)
Runs on its own too: `.venv/bin/python scripts/bench_farm_noise.py`.
"""
from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RATES = (0.1, 0.2, 0.3, 0.5, 0.7, 0.9)
TRIALS = 100

Row = Callable[[str, str, str, bool | None], None]


def run(tmp: Path, env: dict[str, str], warm_s: float, row: Row) -> None:
    """`tmp`, `env` and `warm_s` are bench.py's; nothing here runs a container."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.unit.farm.standin import flip_flops, nights_to_news

    flips = {p: sum(bool(flip_flops(seed, p)) for seed in range(TRIALS)) for p in RATES}
    total = sum(flips.values())
    row(f"farm noise: flip-flop news, {len(RATES) * TRIALS} flaky x 10 nights",
        f"{total} ({', '.join(f'{p}: {n}' for p, n in flips.items())})", f"<= {len(RATES)}",
        total <= len(RATES))
    det = [nights_to_news(seed, 1.0) for seed in range(TRIALS)]
    row("farm noise: fixed deterministic failure", f"news on night {sorted(set(map(str, det)))} without it",
        "the 3rd", set(det) == {3})
    for p, target in ((0.5, 90), (0.3, None)):
        found = [n for seed in range(TRIALS) if (n := nights_to_news(seed, p)) is not None]
        early = sum(n < 3 for n in found)
        median = sorted(found)[len(found) // 2] if found else None
        row(f"farm noise: fixed {p} flaky failure, named in 10 nights", f"{len(found)}/{TRIALS} (median night "
            f"{median}, {early} before the 3rd)", f">= {target}/{TRIALS}" if target else "-",
            (len(found) >= target and not early) if target else None)


if __name__ == "__main__":
    from benchrow import row

    with tempfile.TemporaryDirectory(prefix="replay-bench-farm-noise-") as t:
        run(Path(t), dict(os.environ), float("nan"), row)
