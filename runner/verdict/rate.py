"""How often the recorded failure comes back: the one model of a failure's rate.

Every answer built on repeated runs (a replay's verdict, a fix check, a bisect's ends, the
farm's nights) reads its numbers here: failures as recorded out of n runs, and the rate's
Wilson score interval at a stated confidence (default 95 %). Wilson's interval, not the bare
k/n: 3/3 says "fails in at least 44 % of runs", not "always"; 0/3 says "at most 56 %".

A fix is judged on two rates: the patched source's must lie below the unpatched baseline's at
the confidence (the patched interval's top under the baseline's bottom), so a change that
changes nothing is called fixed no more often than the confidence allows.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

DEFAULT_CONFIDENCE = 0.95
CONFIDENCE_RANGE = (0.5, 0.9999)  # what --confidence accepts


@lru_cache(maxsize=64)
def z_of(confidence: float) -> float:
    """The two-sided normal quantile of a confidence (0.95 -> 1.96)."""
    if not CONFIDENCE_RANGE[0] <= confidence <= CONFIDENCE_RANGE[1]:
        raise ValueError(f"confidence {confidence!r}: from {CONFIDENCE_RANGE[0]} to {CONFIDENCE_RANGE[1]}")
    from statistics import NormalDist  # here: a command that only shows the default loads no more

    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson(failed: int, runs: int, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """The Wilson score interval of a rate seen `failed` times in `runs` (0..1 when runs is 0)."""
    if runs <= 0:
        return 0.0, 1.0
    if not 0 <= failed <= runs:
        raise ValueError(f"{failed} failures out of {runs} runs")
    z = z_of(confidence)
    p, z2 = failed / runs, z * z
    denom = 1 + z2 / runs
    centre = (p + z2 / (2 * runs)) / denom
    half = z * math.sqrt(p * (1 - p) / runs + z2 / (4 * runs * runs)) / denom
    # exact at the edges (no float dust: 0/n has low 0, n/n has high 1)
    low = 0.0 if failed == 0 else max(0.0, centre - half)
    high = 1.0 if failed == runs else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True)
class Rate:
    """`failed` of `runs` failed as recorded; the rate lies in [low, high] at `confidence`.

    Build it with Rate.of(failed, runs, confidence); the bounds are fields so that the JSON
    (`result.rate {failed, runs, low, high, confidence}`) carries them."""

    failed: int
    runs: int
    low: float
    high: float
    confidence: float = DEFAULT_CONFIDENCE

    @classmethod
    def of(cls, failed: int, runs: int, confidence: float = DEFAULT_CONFIDENCE) -> Rate:
        low, high = wilson(failed, runs, confidence)
        return cls(failed, runs, round(low, 4), round(high, 4), confidence)

    @property
    def always(self) -> bool:
        return self.runs > 0 and self.failed == self.runs

    @property
    def never(self) -> bool:
        return self.failed == 0

    @property
    def half_width(self) -> float:
        """How well the rate is known: half the interval's width (0.25: within ±25 points)."""
        return (self.high - self.low) / 2

    def phrase(self, does: str = "fails") -> str:
        """`fails in 21–72 % of runs (95 %)`; the one-sided forms when every run agreed. `does`
        names what is counted (a recorded pass's rate: "passes as recorded")."""
        if self.runs == 0:
            return "no run decided its rate"
        return f"{does} in {self.span()} of runs ({percent(self.confidence)} %)"

    def span(self) -> str:
        """The interval as words: `21–72 %`, `at least 44 %` (every run failed), `at most 56 %` (none)."""
        if self.always:
            return f"at least {percent(self.low)} %"
        if self.never:
            return f"at most {percent(self.high)} %"
        return f"{percent(self.low)}–{percent(self.high)} %"


def percent(x: float) -> str:
    """0.4385 -> '44'; 0.9999 -> '99.99' (a confidence is shown with the digits it was given)."""
    value = x * 100
    return f"{value:.0f}" if abs(value - round(value)) < 1e-9 or value < 99 else f"{value:.4g}"


def below(patched: Rate, baseline: Rate) -> bool:
    """The patched rate lies below the baseline's at the confidence: a fix, not luck."""
    return patched.high < baseline.low


def passes_to_decide(baseline: Rate, patched: Rate) -> int | None:
    """How many more straight passes would put the patched rate below the baseline's low bound
    (0: already below; None: never, because the baseline's low bound is 0 — the failure was
    not shown to come back at this confidence)."""
    if below(patched, baseline):
        return 0
    if baseline.low <= 0:
        return None
    more = 1
    while not below(Rate.of(patched.failed, patched.runs + more, patched.confidence), baseline):
        more += 1
        if more > 100_000:
            return None
    return more


# --- the rate as a belief: what bisect weighs its runs with -------------------------------


@dataclass(frozen=True)
class Prior:
    """What is believed of a failure's rate before any run: `always` is the weight of "fails
    every run" (a deterministic failure), the rest is spread over (0, 1) as Beta(a, b), which
    leans to the low rates flaky failures mostly have (Beta(1, 3): mean 1/4). The weight on
    "always" keeps a deterministic failure cheap: after a few failures one pass is telling.
    Every run then moves the belief: one pass of a failing item ends "always" for good.

    The lean is what keeps a bisect's answer honest at a fixed rate, not only on average over
    the prior: with Beta(1, 2) a flaky failure's lucky passes were believed too readily, and
    bisects of a 0.3 failure named a wrong culprit at 95 % in 6.5 % of 400 (more than the
    5 % the confidence allows); with Beta(1, 3), 3.1 % of 1,000 (4.5 % at 0.5), and a
    deterministic failure costs no more runs than before. Beta(1, 4) was surer still (2.7 %,
    3.0 %) but cost a deterministic failure more. scripts/bench_noise_bisect.py measures it."""

    always: float = 0.75
    a: float = 1.0
    b: float = 3.0

    def flaky(self) -> Prior:
        """The same belief with "always" ruled out: how a check weighs passes when it must hold even
        if the failure only looked deterministic so far."""
        return Prior(0.0, self.a, self.b)


PRIOR = Prior()


def _lbeta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def log_evidence(failed: int, passed: int, prior: Prior = PRIOR) -> float:
    """log P(`failed` recorded failures and `passed` other runs of items that fail at one unknown
    rate), the rate integrated out over the prior (a Beta-binomial, plus the "always" weight when
    no run passed)."""
    spread = math.log1p(-prior.always) + _lbeta(prior.a + failed, prior.b + passed) - _lbeta(prior.a, prior.b)
    if passed or prior.always <= 0:
        return spread
    top = max(spread, math.log(prior.always))
    return top + math.log(math.exp(spread - top) + math.exp(math.log(prior.always) - top))


def next_fails(failed: int, passed: int, prior: Prior = PRIOR) -> float:
    """The chance that the next run of a failing item fails the recorded way, after these runs."""
    return math.exp(log_evidence(failed + 1, passed, prior) - log_evidence(failed, passed, prior))


def all_pass(failed: int, passed: int, more: int, prior: Prior = PRIOR) -> float:
    """The chance that a failing item passes `more` runs in a row, after these runs of failing
    items: how likely straight passes are to be luck rather than a pass."""
    return math.exp(log_evidence(failed, passed + more, prior) - log_evidence(failed, passed, prior))


def passes_for(failed: int, passed: int, already: int, level: float, prior: Prior = PRIOR, most: int = 100_000) -> int:
    """How many more straight passes, after `already`, make passing by luck no likelier than `level`
    for an item failing at the rate these runs of failing items show (0: already; at most `most`)."""
    more = 0
    while more < most and all_pass(failed, passed, already + more, prior) > level:
        more += 1
    return more
