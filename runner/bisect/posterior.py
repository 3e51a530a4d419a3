"""Which item on a line is the first bad one: a belief that every run moves.

Probabilistic bisection (Henderson et al., "Flake Aware Culprit Finding", 2023). Position 0
is the good end, n the bad end; hypothesis k says items k..n are bad: each of their runs
fails the recorded way at one unknown rate q, and items before k never do (k = 0: the good
end fails too, so the cause is not on the line). The rate is not
plugged in as a point estimate but integrated out (verdict/rate.py's Prior: a weight on
"fails every run", the rest Beta): the likelihood of k is the evidence of the runs from k on,
log_evidence(F_k, P_k), with F_k and P_k the recorded failures and the other runs of items k..n
(suffix sums), and zero when an item before k failed the recorded way. One pass on an item
weighs against it being bad by the failure's rate; a recorded failure at x rules out every
k after x. Runs that failed another way count for nothing (the item is skipped, as `git
bisect skip` does).

The next run goes where its outcome tells most about k (expected information gain), which
prefix sums give for every position in O(n): P(fail at x) = sum over k <= x of pi_k * q_k,
where q_k is the chance the next run of a bad item fails under k. A point may be tested
again, the bad end included: that is how the rate gets estimated when it matters.
"""
from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ..verdict.rate import PRIOR, Prior, log_evidence, next_fails


def _h(p: float) -> float:
    """Binary entropy in bits."""
    if p <= 0.0 or p >= 1.0:
        return 0.0
    return -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


@dataclass(frozen=True)
class Belief:
    """The posterior over hypotheses k = 0..n: probability[k] that position k is the first bad
    one (k = 0: the good end fails too), and q[k], the chance a bad item's next run fails
    the recorded way under k."""

    probability: tuple[float, ...]
    q: tuple[float, ...]

    def best(self) -> int:
        """The likeliest first bad position (the earliest among equals)."""
        return max(range(len(self.probability)), key=lambda k: (self.probability[k], -k))

    def gains(self) -> list[float]:
        """Expected information gain about k, in bits, of one more run at each position 0..n."""
        out, fail, spread = [], 0.0, 0.0
        for p, q in zip(self.probability, self.q):
            fail += p * q  # P(the run at x fails the recorded way): the hypotheses k <= x
            spread += p * _h(q)
            out.append(max(0.0, _h(fail) - spread))
        return out

    def credible(self, confidence: float) -> list[int]:
        """The fewest positions holding `confidence` of the belief, in line order."""
        order = sorted(range(len(self.probability)), key=lambda k: (-self.probability[k], k))
        chosen, mass = [], 0.0
        for k in order:
            if mass >= confidence or self.probability[k] <= 0.0:
                break
            chosen.append(k)
            mass += self.probability[k]
        return sorted(chosen)


# The rates a deterministic-looking answer is checked against (Line.lookalike): from the rarest a
# bisect looks for (rules.RAREST) up. Guarding only 0.3 and 0.5 cost a deterministic failure 0.3
# runs less, but named a wrong culprit in 17 % of bisects at 0.8 (scripts/bench_noise_bisect.py).
LOOKALIKE_RATES = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
MOST_CHECKS = 64  # a check plan's most runs (then the budget decides)


def lookalike_odds(failed: int, passes: Sequence[int]) -> float:
    """At the worst of LOOKALIKE_RATES, the sum over the alternatives of r**failed * (1 - r)**p: how
    much likelier a flaky failure of rate r, had the cause been elsewhere, is to give these runs
    (`failed` recorded failures where both would fail, `p` passes where only it would fail) than a
    deterministic failure with the cause where the answer says."""
    return max(r ** failed * sum((1 - r) ** p for p in passes) for r in LOOKALIKE_RATES)


class Line:
    """The recorded failures and the other runs at positions 0..n, and the belief they give."""

    def __init__(self, n: int, prior: Prior = PRIOR) -> None:
        self.n, self.prior = n, prior
        self.failed = [0] * (n + 1)
        self.passed = [0] * (n + 1)

    def record(self, position: int, failed: bool) -> None:
        (self.failed if failed else self.passed)[position] += 1

    def flaky_seen(self) -> bool:
        """A run passed at or after the first recorded failure: the failure does not fail every run."""
        first = next((x for x in range(self.n + 1) if self.failed[x]), None)
        return first is not None and any(self.passed[first:])

    def lookalike(self, best: int) -> float:
        """How much likelier a flaky failure whose first bad item is earlier is to give these very
        runs than a deterministic one at `best` (every run from `best` on failed): lookalike_odds
        with F the runs from `best` on and, for each k < best, P_k the passes of k..best-1. Averaged
        over where the culprit is, it is how often a failure of rate r is named wrong, with exit 0,
        through runs that look deterministic: a walk that stops only once it is under a level keeps
        those wrong answers under that level, wherever the culprit."""
        passes, before = 0, []
        for k in range(best - 1, -1, -1):
            passes += self.passed[k]
            before.append(passes)
        return lookalike_odds(sum(self.failed[best:]), before)

    def check_plan(self, best: int, level: float, most: int) -> tuple[int, int]:
        """The fewest more runs, (recorded failures at `best`, passes at the item before), that bring
        `lookalike` under `level` should each go as a deterministic failure's would; (0, 0) when it
        is already. A failure weighs a look-alike down by r, a pass by 1 - r: low rates are cheaper
        to rule out at the answer, high ones before it. Among plans of one size, the surest."""
        for more in range(min(most, MOST_CHECKS) + 1):
            plans = [(self._lookalike_after(best, fails, more - fails), -fails, more - fails)
                     for fails in range(more + 1)]
            odds, fails, passes = min(plans)
            if odds <= level:
                return -fails, passes
        return 0, min(most, MOST_CHECKS)

    def _lookalike_after(self, best: int, fails: int, passes: int) -> float:
        self.failed[best] += fails
        self.passed[best - 1] += passes
        try:
            return self.lookalike(best)
        finally:
            self.failed[best] -= fails
            self.passed[best - 1] -= passes

    def belief(self) -> Belief:
        first = next((x for x in range(self.n + 1) if self.failed[x]), self.n)  # no k after a recorded failure
        logs, qs = [-math.inf] * (self.n + 1), [0.0] * (self.n + 1)
        f, p = sum(self.failed[first + 1:]), sum(self.passed[first + 1:])
        for k in range(first, -1, -1):  # suffix sums: the runs of the items k..n
            f += self.failed[k]
            p += self.passed[k]
            logs[k] = log_evidence(f, p, self.prior)
            qs[k] = next_fails(f, p, self.prior)
        top = max(logs)
        weights = [math.exp(v - top) if v > -math.inf else 0.0 for v in logs]
        total = sum(weights)
        return Belief(tuple(w / total for w in weights), tuple(qs))


def pick(belief: Belief, count: int, excluded: Collection[int] = ()) -> list[int]:
    """Up to `count` distinct positions whose next run tells most, best first; none where a run
    would tell nothing."""
    gains = belief.gains()
    ranked = sorted((x for x in range(len(gains)) if x not in excluded and gains[x] > 1e-9),
                    key=lambda x: (-gains[x], x))
    return ranked[:count]
