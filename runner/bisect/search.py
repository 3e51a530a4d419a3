"""Which environment facts make a run fail: delta debugging over sets of fact keys, sure of
its answer even when the failure comes back only some of the time.

The search is pure: it knows candidate keys, their stage and cost, and a `test` callback that
applies a subset of them to the good environment and runs it N times. It finds a 1-minimal
failing set with ddmin (Zeller & Hildebrandt, "Simplifying and Isolating Failure-Inducing
Input", 2002), cutting cost-aware (splits.py), on decisions that hold at the confidence
(set_evidence.py): a set fails on one recorded failure and passes only once a failing set would
rarely have run so often without it.

Then the answer is confirmed before it is reported: the minimal set alone failed the recorded
way (at a rate the bad end's does not contradict), and without any one member the run passes,
each at its share of the confidence. A member found needed after all restarts the search from
the smaller set. The answer's confidence is one less the chances that a removal passed by luck;
below `--confidence` when the budget ends, it is reported undecided (exit 1) with what is known.

With jobs > 1 the next decisions of a round run together; the answer is the one the sequential
search gives, because the first failing subset in a fixed order wins, whatever finished first.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Literal

from ..codec import encode
from ..verdict.rate import DEFAULT_CONFIDENCE, Rate, below, percent
from .set_evidence import Evidence, Keys
from .variation import Stage
from .rules import RATE_FIRST, Rules, Spending, rate_known
from .splits import Cutter
from ..verdict.judge import trial_verdict
from .trial import Observation, Role, Trial, said, trial

Status = Literal["found", "baseline fails", "not-reproduced", "no culprit", "undecided"]


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
class Removal:
    """The check that a member of the answer is needed: the answer without it."""

    key: str
    runs: int  # runs without it
    failed: int  # of them, failed the recorded way
    luck: float  # the chance a failing set runs that often without the recorded failure


@dataclass(frozen=True)
class BisectResult:
    status: Status
    candidates: tuple[Candidate, ...]
    minimal: tuple[str, ...]  # the answer; when undecided, the smallest set seen failing
    trials: tuple[Trial, ...]
    not_varied: tuple[NotVaried, ...] = ()
    also_failing: tuple[Trial, ...] = ()  # failed, but not the recorded way
    notes: tuple[str, ...] = ()
    confidence: float = 0.0  # how sure the answer is: one less the removals' luck
    target: float = DEFAULT_CONFIDENCE  # the confidence asked for (--confidence)
    rate: Rate | None = None  # the bad end's runs: how often the failure came back there
    removals: tuple[Removal, ...] = ()

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

TestFn = Callable[[tuple[str, ...], int], Observation]  # (facts applied, runs at most) -> what they did


class _Spent(Exception):
    """The run or time budget ended before a decision."""


class _Search:
    def __init__(self, candidates: Sequence[Candidate], test: TestFn, jobs: int, pool: ThreadPoolExecutor,
                 rules: Rules, clock: Callable[[], float]) -> None:
        self.order = tuple(sorted(candidates, key=lambda c: (c.cost, c.key)))
        self.by_key = {c.key: c for c in self.order}
        self.rank = {c.key: i for i, c in enumerate(self.order)}
        self.cut = Cutter(self.by_key)
        self.test, self.jobs, self.pool, self.rules = test, max(1, jobs), pool, rules
        self.spending = Spending(rules, clock)
        self.evidence = Evidence(rules.prior, rules.per_trial)
        self.trials: list[Trial] = []
        self.images: set[Keys] = set()  # build-time key sets that have an image already
        self.level = 1 - rules.confidence  # how unlikely a pass by luck must be, for ddmin's decisions
        self.smallest: Keys | None = None  # the smallest set seen failing the recorded way

    def keys(self, subset: Keys) -> tuple[str, ...]:
        return tuple(sorted(subset, key=self.rank.__getitem__))

    def image_keys(self, subset: Keys) -> Keys:
        return frozenset(k for k in subset if self.by_key[k].stage == "build")

    def price(self, subset: Keys) -> int:
        """Static cost (never the evidence's state, so the order, hence the answer, is fixed)."""
        return sum(self.by_key[k].cost for k in self.image_keys(subset))

    def run(self, batch: Sequence[tuple[Keys, int]], role: Role | Sequence[Role] = "search") -> None:
        """One visit to each subset, with up to its number of runs (stopping at a recorded failure)."""
        ends = {frozenset(): "good end", frozenset(self.by_key): "bad end"}
        roles: list[Role] = [role] * len(batch) if isinstance(role, str) else list(role)
        roles = [ends.get(s, r) if r == "search" else r for (s, _), r in zip(batch, roles)]  # type: ignore[misc]
        seen = list(self.pool.map(lambda b: self.test(self.keys(b[0]), b[1]), batch))
        for (subset, _), obs, r in together(batch, seen, roles):
            self.trials.append(trial(len(self.trials) + 1, r, obs, keys=self.keys(subset),
                                     image_keys=self.keys(self.image_keys(subset))))
            self.evidence.tally(subset).add(obs)
            self.spending.spend(len(obs.attempts))
            self.images.add(self.image_keys(subset))
            if obs.verdict == "reproduced" and (self.smallest is None or len(subset) < len(self.smallest)):
                self.smallest = subset

    def needs_build(self, subset: Keys) -> bool:
        return self.image_keys(subset) not in self.images

    def batch(self, todo: Sequence[Keys], level: float, sure: bool = False) -> list[Keys]:
        """The next undecided subsets to run together, in order. A build is never started on
        speculation behind a cheap trial whose result could make it unnecessary."""
        out: list[Keys] = []
        for s in todo:
            if len(out) == self.jobs:
                break
            if s in out or self.evidence.decision(s, level, sure) != "open":
                continue
            if out and self.needs_build(s) and not all(self.needs_build(b) for b in out):
                break
            out.append(s)
        return out

    def visit(self, subsets: Sequence[Keys], level: float, sure: bool = False) -> None:
        left = self.spending.left()
        if left <= 0:
            raise _Spent
        share = max(1, left // max(1, len(subsets)))
        self.run(spread([(s, self.evidence.needed(s, level, share, sure)) for s in subsets], self.jobs))

    def settle(self, subsets: Sequence[Keys], level: float, sure: bool = False) -> None:
        """Runs until every subset is decided at `level`."""
        while todo := self.batch(subsets, level, sure):
            self.visit(todo, level, sure)

    def first_failing(self, subsets: Sequence[Keys]) -> Keys | None:
        """The first subset, in this order, that fails the recorded way."""
        i = 0
        while i < len(subsets):
            s = subsets[i]
            decided = self.evidence.decision(s, self.level)
            if decided == "open":
                self.visit(self.batch(subsets[i:], self.level), self.level)
            elif decided == "fails":
                return s
            else:
                i += 1
        return None

    def ddmin(self, start: Keys) -> Keys:
        c = list(self.keys(start))
        n = self.cut.start(c)
        while len(c) >= 2:
            parts = self.cut.split(c, n)
            hit = self.first_failing(sorted(parts, key=self.price))
            if hit is not None:
                c = [k for k in c if k in hit]
                n = self.cut.start(c)
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

    def confirm(self, minimal: Keys) -> Keys | None:
        """Each member's removal run until it passes at its share of the confidence, even for a
        failure that only looked deterministic so far; the smaller set when one of them fails the
        recorded way after all."""
        share = (1 - self.rules.confidence) / max(1, len(minimal))
        removals = sorted((minimal - {k} for k in minimal), key=self.price)
        self.rate_higher(minimal, removals, share)
        self.settle(removals, share, sure=True)
        return next((r for r in removals if self.evidence.decision(r, share, sure=True) == "fails"), None)

    def rate_higher(self, minimal: Keys, removals: Sequence[Keys], level: float) -> None:
        """The answer run again while each of its recorded failures leaves fewer runs to go in all:
        one more failure shows the rate higher, so its removals need fewer passes (a deterministic
        failure that failed only at the bad end's two runs: 5 passes after a third failure, not 7)."""
        ev, most = self.evidence, self.rules.max_runs
        while not ev.capped(minimal) and self.spending.left() > 0:
            still = [r for r in removals if ev.decision(r, level, sure=True) == "open"]
            now = sum(ev.needed(r, level, most, sure=True) for r in still)
            if not still or 1 + sum(ev.needed(r, level, most, sure=True, failed_more=1) for r in still) >= now:
                return
            failed = ev.tally(minimal).failed
            self.run([(minimal, 1)])
            if ev.tally(minimal).failed == failed:  # it passed: the rate is lower than it looked
                return

    def removals(self, minimal: Keys) -> tuple[Removal, ...]:
        out = []
        for key in self.keys(minimal):
            t = self.evidence.tally(minimal - {key})
            out.append(Removal(key, t.runs, t.failed, round(self.evidence.luck(minimal - {key}, sure=True), 4)))
        return tuple(out)


def spread(batch: Sequence[tuple[Keys, int]], jobs: int) -> list[tuple[Keys, int]]:
    """A batch's runs over the jobs it leaves idle: a set that needs several runs to pass (a removal's
    confirmation, a decision on a flaky failure) gets them side by side, in up to as many trials as jobs are
    free, each stopping at a recorded failure as one trial would. Runs a single worker runs too: only a
    recorded failure in one would have spared another's."""
    out = list(batch)
    while out and len(out) < jobs:
        most = max(range(len(out)), key=lambda i: out[i][1])
        keys, runs = out[most]
        if runs < 2:
            break
        out[most:most + 1] = [(keys, runs - runs // 2), (keys, runs // 2)]
    return out


def together(batch: Sequence[tuple[Keys, int]], seen: Sequence[Observation],
             roles: Sequence[Role]) -> list[tuple[tuple[Keys, int], Observation, Role]]:
    """A batch's outcomes, those of one set's runs spread side by side (spread) as one trial: one visit, as a
    single worker makes it."""
    out: list[tuple[tuple[Keys, int], Observation, Role]] = []
    for b, obs, role in zip(batch, seen, roles):
        if out and out[-1][0][0] == b[0] and out[-1][2] == role:
            (keys, runs), was, _ = out[-1]
            kinds = (*was.attempts, *obs.attempts)
            decided = was if was.verdict == trial_verdict(kinds) else obs
            out[-1] = ((keys, runs + b[1]), replace(was, verdict=trial_verdict(kinds), signature=decided.signature,
                                                    built=was.built or obs.built, build_s=was.build_s + obs.build_s,
                                                    run_s=was.run_s + obs.run_s, attempts=kinds), role)
        else:
            out.append((b, obs, role))
    return out


def search(candidates: Sequence[Candidate], test: TestFn, *, jobs: int = 1, rules: Rules = Rules(),
           clock: Callable[[], float] = time.monotonic) -> BisectResult:
    """Check both ends, then find and confirm a 1-minimal failing subset of the candidates."""
    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="bisect") as pool:
        s = _Search(candidates, test, jobs, pool, rules, clock)
        status, notes = _ends(s)
        minimal: Keys = frozenset()
        confidence, removals = 0.0, tuple[Removal, ...]()
        if status == "found":
            status, minimal, more = _answer(s)
            notes += more
            if status in ("found", "undecided") and minimal:
                removals = s.removals(minimal)
                confidence = max(0.0, 1 - sum(r.luck for r in removals))
            if status == "found" and (confidence < rules.confidence or _slower(s, minimal)):
                status = "undecided"
                if confidence < rules.confidence:
                    notes.append(f"the answer holds at {percent(confidence)} %, below the {percent(rules.confidence)} "
                                 "% asked: a removal could not be run often enough (--attempts) or at all")
    return BisectResult(
        status=status, candidates=s.order, minimal=s.keys(minimal), trials=tuple(s.trials),
        also_failing=tuple(t for t in s.trials if t.verdict == "different-failure"), notes=tuple(notes),
        confidence=round(confidence, 4), target=rules.confidence, rate=_bad_rate(s), removals=removals,
    )


def _answer(s: _Search) -> tuple[Status, Keys, list[str]]:
    """ddmin, then confirmation, from smaller sets while a member turns out needed."""
    start = frozenset(s.by_key)
    minimal = start
    try:
        while True:
            minimal = s.ddmin(start)
            smaller = s.confirm(minimal)
            if smaller is None:
                break
            start = smaller
    except _Spent:
        best = s.smallest if s.smallest is not None else minimal
        return "undecided", best, [f"{s.spending.why_stopped()} before the answer held at "
                                   f"{percent(s.rules.confidence)} %: the smallest set seen failing the recorded way "
                                   "is the answer so far, not yet shown minimal"]
    if s.evidence.tally(frozenset()).failed:
        return "baseline fails", frozenset(), [f"the good environment failed the recorded way too (in "
                                               f"{s.evidence.tally(frozenset()).failed} of its runs): nothing "
                                               "to bisect against"]
    return "found", minimal, _answer_notes(s, minimal)


def _bad_rate(s: _Search) -> Rate:
    t = s.evidence.tally(frozenset(s.by_key))
    return t.rate(s.rules.confidence)


def _ends(s: _Search) -> tuple[Status, list[str]]:
    everything = frozenset(s.by_key)
    if not everything:
        s.run([(frozenset(), 1)], "both ends")
        only = s.trials[-1]
        if only.verdict == "reproduced":
            return "no culprit", ["no fact that can be varied differs, yet the good environment fails the recorded "
                                  "way here: the cause is among what is not varied"]
        return "not-reproduced", [f"nothing to vary, and the run does not fail the recorded way here ({only.verdict})"]
    s.run([(frozenset(), 1), (everything, 1)], ["good end", "bad end"])
    good = s.trials[0]
    if good.verdict != "not-reproduced":
        notes = [f"the good environment does not pass here ({said(good)}): nothing to bisect against"]
        return "baseline fails", notes
    bad = s.evidence.tally(everything)
    most, cap = s.rules.give_up_after(), s.rules.per_trial or s.rules.give_up_after() + RATE_FIRST
    while not rate_known(bad.failed) and bad.runs + bad.untold < cap and s.spending.left() > 0 and \
            (bad.failed or bad.runs + bad.untold < most):
        # until its first recorded failure, in one trial; then the runs still wanted, together (--jobs)
        if bad.failed:
            s.run([(everything, 1)] * min(s.jobs, RATE_FIRST - bad.failed, s.spending.left()), "bad end")
        else:
            s.run([(everything, min(most - bad.runs - bad.untold, s.spending.left()))], "bad end")
    if not bad.failed:
        last = s.trials[-1]
        rate = bad.rate(s.rules.confidence)
        return "not-reproduced", [f"the bad environment does not fail the recorded way here ({said(last)}): in "
                                  f"{rate.runs} run(s) it {rate.phrase()}"]
    return "found", []


def _answer_notes(s: _Search, minimal: Keys) -> list[str]:
    notes = []
    if len(minimal) > 1:
        notes.append(f"interaction: the failure needs these {len(minimal)} facts together")
    for key in s.keys(minimal):
        without = s.evidence.tally(minimal - {key})
        if without.other and not without.failed:
            notes.append(f"without {key} the run did not fail the recorded way but did not pass either "
                         f"({without.other} of {without.runs} run(s) failed another way)")
    if _slower(s, minimal):
        alone, bad = s.evidence.tally(minimal).rate(s.rules.confidence), _bad_rate(s)
        notes.append(f"not confirmed: the answer alone fails the recorded way less often than the bad end "
                     f"({alone.failed}/{alone.runs} against {bad.failed}/{bad.runs}): another fact makes it more frequent")
    return notes


def _slower(s: _Search, minimal: Keys) -> bool:
    """The answer alone fails at a rate below the bad end's, at the confidence."""
    return minimal != frozenset(s.by_key) and below(s.evidence.tally(minimal).rate(s.rules.confidence), _bad_rate(s))


def with_context(result: BisectResult, not_varied: Sequence[NotVaried], notes: Sequence[str]) -> BisectResult:
    """The search's result with what the session knows besides (notes first)."""
    return replace(result, not_varied=tuple(not_varied), notes=(*notes, *result.notes))
