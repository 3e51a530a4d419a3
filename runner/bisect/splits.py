"""Where ddmin cuts a set of facts, cost-aware.

Candidates are ordered cheap first (run-time facts change only the `docker run`; build-time
facts need a variant image). A two-way split falls on the run/build boundary whenever that
keeps the worst case at one halving per level, a mixed set is cut in three (the run-time
part's halves, then the build-time part) when that keeps it too (the two cheap halves then run
together), and a small all-run-time set is tried one fact at a time. Each choice is made only
when it cannot cost more trials than plain halving's bound, so a single culprit among N costs
at most 2*ceil(log2 N) + 2 decisions (the two ends included).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Protocol

from .variation import Stage

Keys = frozenset[str]

# The largest all-run-time set tried one fact at a time: N singletons cost no more than
# halving's worst case 2*ceil(log2 N) only up to N = 6.
SINGLETONS_UP_TO = max(n for n in range(2, 64) if n <= 2 * math.ceil(math.log2(n)))


class Staged(Protocol):
    @property
    def stage(self) -> Stage: ...

    @property
    def cost(self) -> int: ...


class Cutter:
    def __init__(self, by_key: Mapping[str, Staged]) -> None:
        self.by_key = by_key

    def start(self, c: Sequence[str]) -> int:
        """Granularity: one fact at a time for a small all-run-time set, three parts for a
        mixed set whose run-time part halves within the bound, else halves."""
        if len(c) <= SINGLETONS_UP_TO and all(self.by_key[k].stage == "run" for k in c):
            return max(2, len(c))
        return 3 if self.run_halves(c) else 2

    def run_halves(self, c: Sequence[str]) -> int | None:
        """Where a mixed set's run-time facts (first in the cheap-first order) end, when the set
        is best cut in three: both halves of the run-time part, then the build-time part. The
        two cheap parts can then run together and the culprit's half goes one fact at a time;
        taken only when the worst case stays within halving's 2*ceil(log2 N)."""
        r = next((i for i, k in enumerate(c) if self.by_key[k].stage == "build"), len(c))
        b = len(c) - r
        if r < 4 or b < 1 or any(self.by_key[k].stage == "run" for k in c[r:]):
            return None  # halves of fewer than two facts: the run-time part whole, then its facts, is cheaper
        second = r - r // 2  # the larger half, tried second
        if second > SINGLETONS_UP_TO:
            return None
        worst_run = 2 + second  # both halves, then the second's facts
        worst_build = 3 + (2 * math.ceil(math.log2(b)) if b > 1 else 0)  # three parts, then halving
        return r if max(worst_run, worst_build) <= 2 * math.ceil(math.log2(len(c))) else None

    def split(self, c: Sequence[str], n: int) -> list[Keys]:
        r = self.run_halves(c) if n == 3 else None
        if r is not None:
            cuts = [r // 2, r]
        elif n == 2:
            cuts = [self.cut2(c)]
        else:
            cuts = [len(c) * i // n for i in range(1, n)]
        bounds = [0, *cuts, len(c)]
        return [frozenset(c[a:b]) for a, b in zip(bounds, bounds[1:])]

    def cut2(self, c: Sequence[str]) -> int:
        """Where to halve: each part at most 2**(ceil(log2 |c|) - 1) long, so the
        level count stays ceil(log2 N); within that, on the run/build boundary, else
        on a cost boundary nearest the middle, else in the middle."""
        limit = 2 ** (math.ceil(math.log2(len(c))) - 1)
        lo, hi, mid = len(c) - limit, limit, len(c) // 2
        allowed = range(max(1, lo), min(len(c) - 1, hi) + 1)
        stages = [p for p in allowed if self.by_key[c[p - 1]].stage != self.by_key[c[p]].stage]
        if stages:
            return stages[0]
        costs = [p for p in allowed if self.by_key[c[p - 1]].cost != self.by_key[c[p]].cost]
        return min(costs, key=lambda p: (abs(p - mid), p)) if costs else mid

