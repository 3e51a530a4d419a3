"""A capsule that admits several environments is tried every way: when the plan's own does not
bring the recorded failure back, each alternative the plan names (build/pins.py: a package
recorded at several versions whose top-level copy is not recorded) is replayed in turn, cheapest
first, each image built once, until one reproduces or the budget ends. The report says which one
did, and what was tried."""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..build.plan import Alternative, Plan
from ..verdict.vocabulary import REPRODUCES
from ..verdict.judge import Expected
from ..verdict.sampling import Sampling
from .decide import Outcome, Run, replayed


@dataclass(frozen=True)
class Tried:
    outcome: Outcome
    series: Run
    plan: Plan
    said: tuple[str, ...]  # each alternative tried and its verdict
    chosen: Alternative | None  # the one that brought the failure back


def try_alternatives(plan: Plan, expected: Expected, sampling: Sampling, first: Outcome, first_series: Run,
                     series_of: Callable[[Plan], Run], say: Callable[[str], None]) -> Tried:
    """The first outcome stands when it reproduces, when the plan names no alternative, or when
    none of them does better; the runs across alternatives are bounded as one series' are
    (--max-attempts, --budget)."""
    said: list[str] = []
    runs, start = 0, time.monotonic()
    if first.verdict in REPRODUCES or not expected.failed:
        return Tried(first, first_series, plan, (), None)
    for alt in plan.alternatives:
        if runs >= sampling.most or (sampling.budget_s is not None and time.monotonic() - start >= sampling.budget_s):
            said.append(f"{alt.what}: not tried (the attempts' budget is spent)")
            continue
        say(f"the recorded environment did not bring the failure back ({first.verdict}): trying {alt.what}")
        alt_plan = dataclasses.replace(plan, node_pins=alt.node_pins, alternatives=())
        series = series_of(alt_plan)
        outcome = replayed(expected, sampling, series)
        runs += len(outcome.attempts)
        said.append(f"{alt.what}: {outcome.verdict}")
        if outcome.verdict in REPRODUCES:
            return Tried(outcome, series, alt_plan, tuple(said), alt)
    return Tried(first, first_series, plan, tuple(said), None)
