"""The walk along a line, shared by `--commits` and `--sweep`: from the good end (position 0)
to the bad end (the last item), which item is the first bad one, by probabilistic bisection
(posterior.py). Like `git bisect`, it assumes the failure, once in, stays in (monotonic); unlike
it, one pass proves nothing about a failure that comes back only some of the time.

Both ends run first. The good end must pass (a recorded failure there: baseline fails); the bad
end runs until it fails the recorded way, or until so many runs did not that the failure is
called not reproduced here (rules.RAREST). Then every run goes where it tells most, until one
item holds the confidence (found, exit 0) or the budget is spent (undecided, exit 1, with the
likeliest items and their probabilities). A run that fails another way is no recorded
failure: its item is skipped, as `git bisect skip` does, and named.
"""
from __future__ import annotations

import dataclasses
import math
import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from ..verdict.rate import DEFAULT_CONFIDENCE, Rate, all_pass, passes_for, percent
from .posterior import Belief, Line, pick
from .rules import RAREST, RATE_FIRST, Rules, Spending, rate_known
from .trial import Observation, Role, Trial, said, trial

WalkStatus = Literal["found", "baseline fails", "not-reproduced", "undecided"]
MONOTONIC = "bisection assumes the failure, once in, stays in (monotonic), as git bisect does"
SHOWN = 6  # candidates named in a sentence
AHEAD = 20  # continuations drawn to say how many more runs an undecided walk likely needs


@dataclass(frozen=True)
class Chance:
    """How likely one item is to be the first bad one."""

    item: str
    probability: float


@dataclass(frozen=True)
class Walk:
    status: WalkStatus
    good: str
    line: tuple[str, ...]  # after the good end, the bad end last
    first_failing: str | None
    last_passing: str | None
    trials: tuple[Trial, ...]
    notes: tuple[str, ...] = ()
    confidence: float = 0.0  # the answer's probability (the likeliest item's, when undecided)
    target: float = DEFAULT_CONFIDENCE  # the confidence asked for (--confidence)
    candidates: tuple[Chance, ...] = ()  # the fewest items holding `target` of the belief, in line order
    rate: Rate | None = None  # the bad end's runs: how often the failure came back there
    skipped: tuple[str, ...] = ()  # items that failed another way or could not be built
    more_runs: int | None = None  # undecided by the run budget: the runs a sure answer would likely still need
    spent: int = 0  # the runs spent (both ends included)

    @property
    def found(self) -> bool:
        return self.status == "found"

    def trial(self, item: str) -> Trial | None:
        return next((t for t in self.trials if t.item == item), None)

    def good_end(self) -> Trial | None:
        """The good end's trial that did not pass, else its first."""
        mine = [t for t in self.trials if t.role == "good end"]
        return next((t for t in mine if t.verdict != "not-reproduced"), mine[0] if mine else None)


TestFn = Callable[[str], Observation]  # one run of an item


class _Walker:
    def __init__(self, items: Sequence[str], test: TestFn, rules: Rules, jobs: int, pool: ThreadPoolExecutor,
                 clock: Callable[[], float]) -> None:
        self.items, self.test, self.rules, self.jobs, self.pool = tuple(items), test, rules, max(1, jobs), pool
        self.n = len(self.items) - 1
        self.line = Line(self.n, rules.prior)
        self.spending = Spending(rules, clock)
        self.trials: list[Trial] = []
        self.runs = [0] * (self.n + 1)
        self.untold = [0] * (self.n + 1)  # trials that told nothing: failed another way, could not be built

    @property
    def skipped(self) -> set[int]:
        """Items skipped as git bisect skip does (never the bad end: it is known to fail)."""
        return {p for p in range(self.n) if self.untold[p] and not self.line.failed[p]}

    def run(self, positions: Sequence[int]) -> None:
        observed = list(self.pool.map(self.test, [self.items[p] for p in positions]))
        for p, obs in zip(positions, observed):
            role: Role = "good end" if p == 0 else "bad end" if p == self.n else "search"
            self.trials.append(trial(len(self.trials) + 1, role, obs, item=self.items[p], position=p))
            self.spending.spend(len(obs.attempts))
            self.runs[p] += len(obs.attempts)
            for kind in obs.attempts:
                if kind in ("recorded", "pass"):
                    self.line.record(p, kind == "recorded")
            if not obs.attempts or "other" in obs.attempts or "inconclusive" in obs.attempts:
                self.untold[p] += 1

    def bad_end_fails(self) -> bool:
        """The bad end's rate first (rules.rate_known); False once it is not reproduced."""
        n = self.n
        while not rate_known(self.line.failed[n]):
            spent = self.runs[n] >= (self.rules.per_trial or self.rules.give_up_after() + RATE_FIRST)
            if spent or self.spending.left() <= 0 or \
                    (not self.line.failed[n] and self.runs[n] >= self.rules.give_up_after()):
                break
            # after its first failure, the runs still wanted go together (--jobs), and beside them the search's
            # first run: -j 1 runs it next whatever they show (a bad end's failure moves no item's odds)
            want = min(self.jobs, RATE_FIRST - self.line.failed[n]) if self.line.failed[n] else 1
            self.run([n] * want + (self.first_search() if self.line.failed[n] and want < self.jobs else []))
        return self.line.failed[n] > 0

    def first_search(self) -> list[int]:
        """The search's first run, where a run beside the bad end's is free (a spare job, the budget left): the
        one -j 1 picks once the bad end's run beside it failed (a pass there makes the failure flaky, and -j 1
        would then search with every job too)."""
        if self.spending.left() < 2 or self.n < 2:
            return []
        self.line.record(self.n, True)
        try:
            return pick(self.line.belief(), 1, self.skipped | self.capped() | {self.n})
        finally:
            self.line.failed[self.n] -= 1

    def capped(self) -> set[int]:
        most = self.rules.per_trial
        return {p for p, r in enumerate(self.runs) if most is not None and r >= most}

    def search(self) -> Belief:
        """Runs where they tell most until one item holds the confidence and its last passing
        neighbour is checked (boundary), or the budget is spent. Runs go together (--jobs) only where
        that costs no run a single worker would not have run: a deterministic-looking search halves the
        range one run at a time (a second run beside it would be spent on the half that is dropped); once
        a bad item has passed (the failure is flaky), the best runs go together."""
        while True:
            belief = self.line.belief()
            left = self.spending.left()
            best = belief.best()
            if belief.probability[best] >= self.rules.confidence:
                doubt = self.boundary(best)
                if doubt is None or left <= 0 or doubt in self.capped() | self.skipped:
                    return belief
                self.run(self.checks(best, doubt, min(self.jobs, left)))
                continue
            width = min(self.jobs if self.line.flaky_seen() else 1, left)
            where = pick(belief, width, self.skipped | self.capped()) if left > 0 else []
            if not where:
                return belief
            self.run(where)

    def boundary(self, best: int) -> int | None:
        """Where the answer still needs checking, or None: the one check that tells a deterministic
        failure from a flaky one whose lucky passes before the answer made an earlier culprit look
        like this one. Where the answer's side looks deterministic, until a look-alike is unlikely at
        every rate a bisect looks for (Line.lookalike); where it has passed too (the failure is known
        flaky), until the item before the answer's passes are not luck at the rate those runs show."""
        if best == 0:
            return None
        x, line, level = best - 1, self.line, 1 - self.rules.confidence
        f, p = sum(line.failed[best:]), sum(line.passed[best:])
        if not p:
            plan = line.check_plan(best, level, self.rules.max_runs)
            return None if plan == (0, 0) else best if plan[0] and best not in self.capped() | self.skipped else x
        luck = all_pass(f, p, line.passed[x], self.rules.prior.flaky())
        return self.rate_higher(best, x) if luck > level else None

    def checks(self, best: int, doubt: int, width: int) -> list[int]:
        """The next check's runs: up to `width` of the plan a deterministic failure would still need
        (they go together: each would run anyway), else the one `doubt`."""
        if sum(self.line.passed[best:]) or width <= 1:
            return [doubt]
        fails, passes = self.line.check_plan(best, 1 - self.rules.confidence, self.rules.max_runs)
        if best in self.capped() | self.skipped:
            fails, passes = 0, passes + fails
        return ([best] * fails + [best - 1] * passes)[:width] or [doubt]

    def rate_higher(self, best: int, doubt: int) -> int:
        """Where a known-flaky answer's check runs next: the item before the answer (one more pass there),
        or the answer itself when one more recorded failure there (the rate shown higher) leaves fewer
        runs to go in all."""
        line, level, flaky = self.line, 1 - self.rules.confidence, self.rules.prior.flaky()
        f, p = sum(line.failed[best:]), sum(line.passed[best:])

        def passes(failed: int) -> int:
            return passes_for(failed, p, line.passed[doubt], level, flaky, self.rules.max_runs)

        cheaper = 1 + passes(f + 1) < passes(f)
        return best if cheaper and best not in self.capped() | self.skipped else doubt

    def likely_more(self, belief: Belief) -> int | None:
        """The runs a sure answer would likely still need, once the run budget ended the walk: the walk
        continued AHEAD times on runs drawn from what it believes now (the first bad item from the
        belief, the rate its runs show under it); 4 in 5 continuations were decided within this many
        (None: not within ten budgets, or more runs cannot decide: items capped or skipped)."""
        rng, where = random.Random(self.spending.runs), {item: p for p, item in enumerate(self.items)}
        rules = dataclasses.replace(self.rules, max_runs=self.spending.runs + 10 * self.rules.max_runs, seconds=None)
        needed: list[float] = []
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="bisect-ahead") as pool:
            for _ in range(AHEAD):
                k = rng.choices(range(self.n + 1), belief.probability)[0]
                q = belief.q[k]

                def test(item: str, k: int = k, q: float = q) -> Observation:
                    fails = where[item] >= k and rng.random() < q
                    return Observation("reproduced" if fails else "not-reproduced",
                                       attempts=("recorded",) if fails else ("pass",))

                sim = _Walker(self.items, test, rules, 1, pool, self.spending.clock)
                sim.line.failed, sim.line.passed = list(self.line.failed), list(self.line.passed)
                sim.runs, sim.untold = list(self.runs), list(self.untold)
                sim.spending.spend(self.spending.runs)
                after = sim.search()
                sure = after.probability[after.best()] >= rules.confidence and sim.boundary(after.best()) is None
                needed.append(sim.spending.runs - self.spending.runs if sure else math.inf)
        likely = sorted(needed)[math.ceil(0.8 * AHEAD) - 1]
        return None if math.isinf(likely) else int(likely)

    def bad_rate(self) -> Rate:
        """The bad end's runs: failed the recorded way, of all (a failure of another kind is not it)."""
        return Rate.of(self.line.failed[self.n], self.runs[self.n], self.rules.confidence)


def walk(good: str, line: Sequence[str], test: TestFn, jobs: int = 1, rules: Rules = Rules(),
         clock: Callable[[], float] = time.monotonic) -> Walk:
    """Check both ends, then find the first bad item of the line at the rules' confidence."""
    if not line:
        raise ValueError("an empty line: nothing after the good end")
    items = (good, *line)
    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="bisect") as pool:
        w = _Walker(items, test, rules, jobs, pool, clock)
        w.run([0, w.n])
        if w.trials[0].verdict != "not-reproduced":
            return _ended(w, "baseline fails", good, line)
        if not w.bad_end_fails():
            return _ended(w, "not-reproduced", good, line, [_not_reproduced(w)])
        belief = w.search()
    return _answer(w, belief, good, line)


def _ended(w: _Walker, status: WalkStatus, good: str, line: Sequence[str], notes: Sequence[str] = ()) -> Walk:
    return Walk(status, good, tuple(line), None, None, tuple(w.trials), tuple(notes), target=w.rules.confidence,
                rate=w.bad_rate(), skipped=_skipped(w), spent=w.spending.runs)


def _not_reproduced(w: _Walker) -> str:
    rate = w.bad_rate()
    return (f"the bad end did not fail the recorded way in {rate.runs} run(s): it {rate.phrase()}; "
            f"a bisect looks for a failure that comes back in at least {percent(RAREST)} % of runs")


def _answer(w: _Walker, belief: Belief, good: str, line: Sequence[str]) -> Walk:
    best = belief.best()
    sure = belief.probability[best]
    chances = tuple(Chance(w.items[k], round(belief.probability[k], 4)) for k in belief.credible(w.rules.confidence))
    common = dict(trials=tuple(w.trials), confidence=round(sure, 4), target=w.rules.confidence,
                  candidates=chances, rate=w.bad_rate(), skipped=_skipped(w), spent=w.spending.runs)
    notes = [MONOTONIC, *_skip_notes(w, belief), *_later_passes(w, best)]
    if sure < w.rules.confidence or w.boundary(best) is not None:
        notes.append(_why_undecided(w))
        budget = w.spending.left() <= 0 and w.rules.seconds is None
        more = w.likely_more(belief) if budget else None
        return Walk("undecided", good, tuple(line), None, None, notes=tuple(notes), more_runs=more,
                    **common)  # type: ignore[arg-type]
    if best == 0:  # the good end fails the recorded way too: the cause is not on the line
        return Walk("baseline fails", good, tuple(line), None, None, notes=tuple(notes), **common)  # type: ignore[arg-type]
    return Walk("found", good, tuple(line), w.items[best], w.items[best - 1], notes=tuple(notes),
                **common)  # type: ignore[arg-type]


def _later_passes(w: _Walker, best: int) -> list[str]:
    """Items after the answer that never failed the recorded way, while the others after it
    always did: as git bisect would say, not monotonic (or flaky after all)."""
    line = w.line
    quiet = [p for p in range(best + 1, w.n + 1) if line.passed[p] and not line.failed[p]]
    if best == 0 or not quiet or any(line.passed[p] for p in range(best, w.n + 1) if p not in quiet):
        return []
    return [f"{w.items[p][:12]} never failed the recorded way in its {line.passed[p]} run(s), after "
            f"{w.items[best][:12]} failed: the failure is not monotonic, or comes and goes" for p in quiet]


def _why_undecided(w: _Walker) -> str:
    if w.spending.left() <= 0:
        return f"{w.spending.why_stopped()} before one item reached {percent(w.rules.confidence)} %"
    if w.rules.per_trial is not None:
        return (f"every item that could tell the candidates apart has had its --attempts {w.rules.per_trial} "
                "runs, or was skipped")
    return "no item left to run could tell the candidates apart (the others were skipped)"


def _skipped(w: _Walker) -> tuple[str, ...]:
    return tuple(w.items[p] for p in sorted(w.skipped))


def _skip_notes(w: _Walker, belief: Belief) -> list[str]:
    if not w.skipped:
        return []
    shown = [_short(t) for t in w.trials if t.position in w.skipped and t.verdict != "not-reproduced"]
    near = [p for p in sorted(w.skipped) if belief.probability[p] >= 0.01 or
            (p + 1 <= w.n and belief.probability[p + 1] >= 0.01)]
    said_near = ("; the change may be any of " + ", ".join(w.items[p][:12] for p in near)) if near else ""
    return [f"{len(w.skipped)} item(s) were skipped, as git bisect skip does: they failed another way or could "
            f"not be built ({', '.join(dict.fromkeys(shown))}){said_near}"]


def _short(t: Trial) -> str:
    return f"{(t.item or '')[:12]}: {said(t)}"


def chance_said(probability: float) -> str:
    """`0.57`; `≥ 0.99` for a near-sure one: a belief built on runs is never shown as certain (a flaky
    failure that looked deterministic reads 0.997, not "1.00"). Cut down, never rounded up."""
    return "≥ 0.99" if probability >= 0.99 else f"{math.floor(probability * 100) / 100:.2f}"


def chances_said(chances: Sequence[Chance], shown: Callable[[str], str]) -> str:
    """`likeliest first: 4f2a1c9d0b7e round start of day (0.57), 1a2b3c4d5e6f docs (0.21), and 3 more (each
    0.05 or less)`: the likeliest first, never hidden behind unlikely ones."""
    if not chances:
        return "no candidate"
    order = sorted(chances, key=lambda c: -c.probability)
    said = ", ".join(f"{shown(c.item)} ({chance_said(c.probability)})" for c in order[:SHOWN])
    rest = order[SHOWN:]
    more = f", and {len(rest)} more (each {chance_said(rest[0].probability)} or less)" if rest else ""
    return f"likeliest first: {said}{more}"


def candidates_said(walk: Walk, shown: Callable[[str], str]) -> str:
    """The items that hold the confidence together, the likeliest first (chances_said)."""
    return chances_said(walk.candidates, shown)
