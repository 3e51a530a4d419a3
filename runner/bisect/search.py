"""Which environment facts make a run fail: delta debugging over sets of fact keys.

The search is pure: it knows candidate keys, their stage and cost, and a `test`
callback that applies a subset of them to the good environment and says how the
run ended. It finds a 1-minimal failing set with ddmin (Zeller & Hildebrandt,
"Simplifying and Isolating Failure-Inducing Input", 2002): applying the set fails
the recorded way, and removing any one member does not.

Cost awareness: candidates are ordered cheap first (run-time facts change only the
`docker run`; build-time facts need a variant image), a two-way split falls on the
run/build boundary whenever that keeps the worst case at one halving per level, a
mixed set is cut in three (the run-time part's halves, then the build-time part) when
that keeps it too (the two cheap halves then run together), and a small all-run-time
set is tried one fact at a time. Each choice is made only when it cannot cost more
trials than plain halving's bound, so a single culprit among N costs at most
2*ceil(log2 N) + 2 trials (the two ends included).

Every subset is tested once (memoised). With jobs > 1 the next trials of a round run
together; the answer is the one the sequential search gives, because the first
failing subset in a fixed order wins, whatever finished first.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Literal

from ..codec import encode
from .facts import Stage
from .trial import Observation, Role, Trial, said, trial

Status = Literal["found", "baseline fails", "not-reproduced", "no culprit"]
Keys = frozenset[str]

# The largest all-run-time set tried one fact at a time: N singletons cost no more than
# halving's worst case 2*ceil(log2 N) only up to N = 6.
SINGLETONS_UP_TO = max(n for n in range(2, 64) if n <= 2 * math.ceil(math.log2(n)))


@dataclass(frozen=True)
class Candidate:
    """One fact that differs: the bad value, applied to the good environment."""

    key: str
    stage: Stage
    cost: int
    good: str | None = None  # as shown; None: absent there
    bad: str | None = None


@dataclass(frozen=True)
class NotVaried:
    key: str
    good: str | None
    bad: str | None
    reason: str


@dataclass(frozen=True)
class BisectResult:
    status: Status
    candidates: tuple[Candidate, ...]
    minimal: tuple[str, ...]
    trials: tuple[Trial, ...]
    not_varied: tuple[NotVaried, ...] = ()
    also_failing: tuple[Trial, ...] = ()  # failed, but not the recorded way
    notes: tuple[str, ...] = ()

    @property
    def found(self) -> bool:
        return self.status == "found"

    @property
    def variant_builds(self) -> int:
        """Images built for a subset with build-time facts (the good image not counted)."""
        return sum(1 for t in self.trials if t.built and t.image_keys)


def result_data(result: BisectResult) -> dict[str, Any]:
    data: dict[str, Any] = encode(result)
    data["also_failing"] = [t.number for t in result.also_failing]  # the trials are listed once
    data["variant_builds"] = result.variant_builds
    return data


# --- the search -----------------------------------------------------------------------

TestFn = Callable[[tuple[str, ...]], Observation]


class _Search:
    def __init__(self, candidates: Sequence[Candidate], test: TestFn, jobs: int, pool: ThreadPoolExecutor) -> None:
        self.order = tuple(sorted(candidates, key=lambda c: (c.cost, c.key)))
        self.by_key = {c.key: c for c in self.order}
        self.rank = {c.key: i for i, c in enumerate(self.order)}
        self.test, self.jobs, self.pool = test, max(1, jobs), pool
        self.memo: dict[Keys, Trial] = {}
        self.trials: list[Trial] = []
        self.images: set[Keys] = set()  # build-time key sets that have an image already

    def keys(self, subset: Keys) -> tuple[str, ...]:
        return tuple(sorted(subset, key=self.rank.__getitem__))

    def image_keys(self, subset: Keys) -> Keys:
        return frozenset(k for k in subset if self.by_key[k].stage == "build")

    def price(self, subset: Keys) -> int:
        """Static cost (never the memo's state, so the order, hence the answer, is fixed)."""
        return sum(self.by_key[k].cost for k in self.image_keys(subset))

    def run(self, batch: Sequence[Keys], role: Role | Sequence[Role] = "search") -> None:
        roles = [role] * len(batch) if isinstance(role, str) else list(role)
        seen = list(self.pool.map(self.test, [self.keys(s) for s in batch]))
        for subset, obs, r in zip(batch, seen, roles):
            t = trial(len(self.trials) + 1, r, obs, keys=self.keys(subset),
                      image_keys=self.keys(self.image_keys(subset)))
            self.memo[subset] = t
            self.trials.append(t)
            self.images.add(self.image_keys(subset))

    def needs_build(self, subset: Keys) -> bool:
        return self.image_keys(subset) not in self.images

    def batch(self, todo: Sequence[Keys]) -> list[Keys]:
        """The next trials to run together, in order. A build is never started on
        speculation behind a cheap trial whose result could make it unnecessary."""
        out: list[Keys] = []
        for s in todo:
            if len(out) == self.jobs:
                break
            if s in self.memo or s in out:
                continue
            if out and self.needs_build(s) and not all(self.needs_build(b) for b in out):
                break
            out.append(s)
        return out

    def first_failing(self, subsets: Sequence[Keys]) -> Keys | None:
        """The first subset, in this order, that fails the recorded way."""
        i = 0
        while i < len(subsets):
            s = subsets[i]
            if s not in self.memo:
                self.run(self.batch(subsets[i:]))
            elif self.memo[s].verdict == "reproduced":
                return s
            else:
                i += 1
        return None

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

    def ddmin(self) -> Keys:
        c = [x.key for x in self.order]
        n = self.start(c)
        while len(c) >= 2:
            parts = self.split(c, n)
            hit = self.first_failing(sorted(parts, key=self.price))
            if hit is not None:
                c = [k for k in c if k in hit]
                n = self.start(c)
                continue
            if n > 2:  # with two parts the complements are the parts themselves
                whole = frozenset(c)
                hit = self.first_failing(sorted((whole - p for p in parts), key=self.price))
                if hit is not None:
                    c, n = [k for k in c if k in hit], max(n - 1, 2)
                    continue
            if n >= len(c):
                break
            n = min(2 * n, len(c))
        return frozenset(c)


def search(candidates: Sequence[Candidate], test: TestFn, *, jobs: int = 1) -> BisectResult:
    """Check both ends, then find a 1-minimal failing subset of the candidates."""
    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="bisect") as pool:
        s = _Search(candidates, test, jobs, pool)
        status, notes = _ends(s)
        minimal: Keys = frozenset()
        if status == "found":
            minimal = s.ddmin()
            notes += _minimality_notes(s, minimal)
        return BisectResult(
            status=status, candidates=s.order, minimal=s.keys(minimal), trials=tuple(s.trials),
            also_failing=tuple(t for t in s.trials if t.verdict == "different-failure"), notes=tuple(notes),
        )


def _ends(s: _Search) -> tuple[Status, list[str]]:
    everything = frozenset(s.by_key)
    if not everything:
        s.run([frozenset()], "both ends")
        only = s.memo[frozenset()]
        if only.verdict == "reproduced":
            return "no culprit", ["no fact that can be varied differs, yet the good environment fails the recorded "
                                  "way here: the cause is among what is not varied"]
        return "not-reproduced", [f"nothing to vary, and the run does not fail the recorded way here ({only.verdict})"]
    s.run([frozenset(), everything], ["good end", "bad end"])
    good, bad = s.memo[frozenset()], s.memo[everything]
    notes = []
    if good.verdict != "not-reproduced":
        notes.append(f"the good environment does not pass here ({said(good)}): nothing to bisect against")
    if bad.verdict != "reproduced":
        notes.append(f"the bad environment does not fail the recorded way here ({said(bad)})")
    if good.verdict != "not-reproduced":
        return "baseline fails", notes
    return ("found" if bad.verdict == "reproduced" else "not-reproduced"), notes


def _minimality_notes(s: _Search, minimal: Keys) -> list[str]:
    notes = []
    if len(minimal) > 1:
        notes.append(f"interaction: the failure needs these {len(minimal)} facts together")
    for key in s.keys(minimal):
        without = s.memo.get(minimal - {key})
        if without is not None and without.verdict != "not-reproduced":
            notes.append(f"without {key} the run did not fail the recorded way but did not pass either "
                         f"({said(without)})")
    return notes


def with_context(result: BisectResult, not_varied: Sequence[NotVaried], notes: Sequence[str]) -> BisectResult:
    """The search's result with what the session knows besides (notes first)."""
    return replace(result, not_varied=tuple(not_varied), notes=(*notes, *result.notes))
