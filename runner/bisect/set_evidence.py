"""What the runs of each set of facts say, judged against a failure that may come back only
some of the time.

A set "fails" on one recorded failure (a signature match is specific). It "passes" only once
it has run so often without the recorded failure that a failing set would rarely have done so:
the chance of that many straight runs without it, for a set failing at the failure's rate, is
below the level asked (verdict/rate.py's all_pass). The rate is not a point estimate: it is
integrated over what the runs of the sets known to fail say of it (the bad end's first), with
the prior's weight on "fails every run" keeping a deterministic failure at one run a set.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..verdict.rate import Prior, Rate, all_pass, passes_for
from .trial import Observation

Keys = frozenset[str]
Decision = Literal["fails", "passes", "open"]
UNTOLD_MOST = 3  # trials that told nothing (timeouts, another failure's build) before a set counts as not failing


@dataclass
class Tally:
    """The runs of one set: failed the recorded way, ran without it (passed or failed another
    way), told nothing (timed out, or its image could not be built)."""

    failed: int = 0
    quiet: int = 0
    untold: int = 0
    other: int = 0  # of the quiet ones, failed another way

    @property
    def runs(self) -> int:
        return self.failed + self.quiet

    def add(self, obs: Observation) -> None:
        if not obs.attempts:  # no run: the image could not be built
            self.untold += UNTOLD_MOST
        for kind in obs.attempts:
            if kind == "recorded":
                self.failed += 1
            elif kind in ("pass", "other"):
                self.quiet += 1
                self.other += kind == "other"
            else:
                self.untold += 1

    def rate(self, confidence: float) -> Rate:
        return Rate.of(self.failed, self.runs, confidence)


class Evidence:
    """Every set's tally, and the decisions they support."""

    def __init__(self, prior: Prior, per_trial: int | None) -> None:
        self.prior, self.per_trial = prior, per_trial
        self.tallies: dict[Keys, Tally] = {}

    def tally(self, subset: Keys) -> Tally:
        return self.tallies.setdefault(subset, Tally())

    def rate_runs(self) -> tuple[int, int]:
        """(recorded failures, other runs) of every set known to fail: what the rate is learnt from."""
        failing = [t for t in self.tallies.values() if t.failed]
        return sum(t.failed for t in failing), sum(t.quiet for t in failing)

    def luck(self, subset: Keys, sure: bool = False) -> float:
        """The chance that a set failing at the failure's rate ran as often as this one without
        the recorded failure: how likely its passing is luck. `sure`: even if the failure only
        looked deterministic so far (the prior's "always" ruled out), as an answer's checks are."""
        t = self.tally(subset)
        if t.failed:
            return 1.0
        f, p = self.rate_runs()
        return all_pass(f, p, t.quiet, self.prior.flaky() if sure else self.prior)

    def decision(self, subset: Keys, level: float, sure: bool = False) -> Decision:
        t = self.tally(subset)
        if t.failed:
            return "fails"
        if t.untold >= UNTOLD_MOST or self.luck(subset, sure) <= level or self.capped(subset):
            return "passes"
        return "open"

    def capped(self, subset: Keys) -> bool:
        t = self.tally(subset)
        return self.per_trial is not None and t.runs + t.untold >= self.per_trial

    def needed(self, subset: Keys, level: float, most: int, sure: bool = False, failed_more: int = 0) -> int:
        """More runs without the recorded failure this set needs to pass at `level` (1..most);
        `failed_more`: were that many more recorded failures seen first."""
        t = self.tally(subset)
        f, p = self.rate_runs()
        prior = self.prior.flaky() if sure else self.prior
        if self.per_trial is not None:
            most = min(most, max(1, self.per_trial - t.runs - t.untold))
        return max(1, passes_for(f + failed_more, p, t.quiet, level, prior, most))
