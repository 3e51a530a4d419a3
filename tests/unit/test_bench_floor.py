"""scripts/bench_noise_bisect.py's floor(): the fewest runs a deterministic failure can cost a walk
that searches as today's bisect and checks only at its ends, for a stated accuracy on flaky ones."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import bench_noise_bisect as bench  # noqa: E402


def test_with_no_accuracy_asked_the_floor_is_todays_bisect() -> None:
    # every wrong answer allowed: no check is added, and the search is today's (8 runs measured on main 5407fee)
    assert bench.floor(allowed=1.0) == bench.TODAY["commits"]
    assert bench.floor(allowed=1.0, good_end=False) == bench.TODAY["commits"] - 1


def test_asking_for_fewer_wrong_answers_costs_more_runs() -> None:
    costs = [bench.floor(allowed=a) for a in (0.2, 0.1, 0.05, 0.02)]
    assert costs == sorted(costs) and costs[0] < costs[-1]


def test_one_wrong_answer_in_20_at_rates_03_and_05_is_out_of_reach_of_todays_cost_plus_10_percent() -> None:
    # why the bench's "deterministic cost vs today" row misses: even with no good end run
    assert bench.floor(good_end=False) > 1.1 * bench.TODAY["commits"]
