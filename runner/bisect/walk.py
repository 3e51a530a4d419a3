"""The linear walk, shared by `--commits` and `--sweep`: along a line of items from the
good end (excluded) to the bad end (included), the first that fails the recorded way,
by bisection. Like `git bisect`, it assumes the failure, once in, stays in
(monotonic). A trial that fails another way, or cannot be judged, is skipped as `git
bisect skip` does: the open item nearest the middle is tried instead, and skipped
items left between the last pass and the first failure are named, since the change
may be any of them.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from .trial import Observation, Role, Trial, said, trial

WalkStatus = Literal["found", "baseline fails", "not-reproduced"]
MONOTONIC = "bisection assumes the failure, once in, stays in (monotonic), as git bisect does"


@dataclass(frozen=True)
class Walk:
    status: WalkStatus
    good: str
    line: tuple[str, ...]  # after the good end, the bad end last
    first_failing: str | None
    last_passing: str | None
    trials: tuple[Trial, ...]
    notes: tuple[str, ...] = ()

    @property
    def found(self) -> bool:
        return self.status == "found"

    def trial(self, item: str) -> Trial | None:
        return next((t for t in self.trials if t.item == item), None)


TestFn = Callable[[str], Observation]


class _Walker:
    def __init__(self, items: Sequence[str], test: TestFn, jobs: int, pool: ThreadPoolExecutor) -> None:
        self.items, self.test, self.jobs, self.pool = tuple(items), test, max(1, jobs), pool
        self.seen: dict[int, Trial] = {}
        self.trials: list[Trial] = []

    def run(self, positions: Sequence[int]) -> None:
        observed = list(self.pool.map(self.test, [self.items[p] for p in positions]))
        for p, obs in zip(positions, observed):
            role: Role = "good end" if p == 0 else "bad end" if p == len(self.items) - 1 else "search"
            t = trial(len(self.trials) + 1, role, obs, item=self.items[p], position=p)
            self.seen[p] = t
            self.trials.append(t)

    def bounds(self) -> tuple[int, int]:
        """(last pass before the first recorded failure, first recorded failure)."""
        hi = min(p for p, t in self.seen.items() if t.verdict == "reproduced")
        lo = max((p for p, t in self.seen.items() if t.verdict == "not-reproduced" and p < hi), default=0)
        return lo, hi

    def search(self) -> tuple[int, int]:
        while True:
            lo, hi = self.bounds()
            todo = [p for p in range(lo + 1, hi) if p not in self.seen]
            if not todo:
                return lo, hi
            self.run(picks(todo, lo, hi, self.jobs))


def picks(todo: Sequence[int], lo: int, hi: int, jobs: int) -> list[int]:
    """Up to `jobs` open positions nearest the points cutting (lo, hi) into equal parts:
    one job halves the line, k jobs cut it k+1 ways in one round."""
    k = min(jobs, len(todo))
    left, out = list(todo), []
    for i in range(1, k + 1):
        target = lo + (hi - lo) * i / (k + 1)
        best = min(left, key=lambda p: (abs(p - target), p))
        left.remove(best)
        out.append(best)
    return sorted(out)


def walk(good: str, line: Sequence[str], test: TestFn, jobs: int = 1) -> Walk:
    """Check both ends, then bisect the line for its first recorded failure."""
    if not line:
        raise ValueError("an empty line: nothing after the good end")
    items = (good, *line)
    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="bisect") as pool:
        w = _Walker(items, test, jobs, pool)
        w.run([0, len(line)])
        if w.seen[0].verdict != "not-reproduced":
            return Walk("baseline fails", good, tuple(line), None, None, tuple(w.trials))
        if w.seen[len(line)].verdict != "reproduced":
            return Walk("not-reproduced", good, tuple(line), None, None, tuple(w.trials))
        lo, hi = w.search()
    return Walk("found", good, tuple(line), items[hi], items[lo], tuple(w.trials), tuple(_walk_notes(w, lo, hi)))


def _walk_notes(w: _Walker, lo: int, hi: int) -> list[str]:
    notes = [MONOTONIC]
    skipped = [w.seen[p] for p in sorted(w.seen) if lo < p < hi]
    if skipped:
        notes.append(f"{len(skipped)} item(s) between the last pass and the first failure could not be judged "
                     f"({', '.join(_short(t) for t in skipped)}): the change may be in any of them")
    later = [w.seen[p] for p in sorted(w.seen) if p > hi and w.seen[p].verdict == "not-reproduced"]
    if later:
        notes.append(f"not monotonic: {', '.join((t.item or '')[:12] for t in later)} passed after {w.items[hi][:12]} "
                     "failed; the first failure found is reported")
    return notes


def _short(t: Trial) -> str:
    return f"{(t.item or '')[:12]}: {said(t)}"
