"""When a series of runs is decided: how many attempts a replay, a fix check and a farm night run.

One policy, pure (what the runs said so far and the time they took in, the next step's name
or None out), so `replay`, `--patch`/`--ref`, the farm and the bench stop by the same rule:

- `exactly` (`--attempts N`): N runs, whatever they say.
- Otherwise at least `least` runs (3). When every one of them ended the same way (all failed
  as recorded, all passed, all failed another way, all timed out) the series stops there:
  a deterministic outcome costs what it always cost.
- When they disagree, runs go on until the rate of the recorded failure is known to within
  `precision`: the Wilson interval's half-width at the confidence (±25 points by default: about
  12 runs for a failure that comes back half the time), or until the budget ends: `most`
  runs, or `budget_s` seconds of attempts (an attempt starts only when, at the mean duration so
  far, it ends within the budget). A timed-out attempt is no run of the rate.
- A fix check's baseline is a series, except that runs that disagree go on (within the same
  budget) while its low bound is too low for the runs with the change to decide within theirs.
- A fix check's runs with the change go one at a time until decided: a failure as recorded
  decides "not fixed"; the rate of runs that do not pass falling below the baseline's low
  bound decides "fixed" (rate.below); runs that all fail another way decide "different
  failure"; otherwise the budget ends it and the answer says how many more passes would decide.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .vocabulary import Classification
from .rate import DEFAULT_CONFIDENCE, Rate, below, passes_to_decide

# Kinds a fix check's runs with the change count as "did not pass".
_NOT_PASSING = ("recorded", "other")


def series_rate(kinds: Sequence[Classification], confidence: float = DEFAULT_CONFIDENCE) -> Rate:
    """Failures as recorded out of the runs that decided (a timed-out attempt is no run)."""
    decided = [k for k in kinds if k != "inconclusive"]
    return Rate.of(decided.count("recorded"), len(decided), confidence)


def change_rate(kinds: Sequence[Classification], confidence: float = DEFAULT_CONFIDENCE) -> Rate:
    """With a change (a patch, a ref): the runs that did not pass, as recorded or another way."""
    decided = [k for k in kinds if k != "inconclusive"]
    return Rate.of(sum(k in _NOT_PASSING for k in decided), len(decided), confidence)


@dataclass(frozen=True)
class Sampling:
    least: int  # runs always made (unless `exactly`)
    most: int  # the most runs of one series
    precision: float  # stop when the rate's half-width is at most this
    confidence: float = DEFAULT_CONFIDENCE
    budget_s: float | None = None  # the most time for one series' attempts (None: `most` alone bounds)
    exactly: int | None = None  # --attempts N: N runs, whatever they say

    def series_next(self, kinds: Sequence[Classification], spent_s: float = 0.0) -> str | None:
        """The next attempt's step name, saying why it runs; None when the series is decided or spent."""
        done = len(kinds)
        if self.exactly is not None:
            return f"attempt {done + 1}/{self.exactly}" if done < self.exactly else None
        first = min(self.least, self.most)
        if done < first:
            return f"attempt {done + 1}/{first}"
        if len(set(kinds)) == 1 or series_rate(kinds, self.confidence).half_width <= self.precision:
            return None
        return self._more("runs disagree", done, spent_s)

    def baseline_next(self, kinds: Sequence[Classification], spent_s: float = 0.0) -> str | None:
        """A fix check's baseline: stopped as a series is, except that runs that disagree go on
        (within the same budget) while its low bound is too low for the runs with the change to
        decide within theirs: a surer baseline is cheaper than a fix check that cannot end."""
        name = self.series_next(kinds, spent_s)
        if name is not None or self.exactly is not None or len(set(kinds)) <= 1:
            return name
        rate = series_rate(kinds, self.confidence)
        need = passes_to_decide(rate, Rate.of(0, 0, self.confidence))
        if rate.failed == 0 or (need is not None and need <= self.most):
            return None
        return self._more("the fix needs a surer baseline", len(kinds), spent_s)

    def fix_next(self, baseline: Rate, kinds: Sequence[Classification], spent_s: float = 0.0) -> str | None:
        """The next run with the change, judged against the baseline's rate; None when decided or spent."""
        done = len(kinds)
        if self.exactly is not None:
            return f"attempt {done + 1}/{self.exactly}" if done < self.exactly else None
        if baseline.failed == 0 or "recorded" in kinds:
            return None  # nothing shown to fix, or a failure as recorded: not fixed
        rate = change_rate(kinds, baseline.confidence)
        if rate.runs and below(rate, baseline):
            return None
        decided = [k for k in kinds if k != "inconclusive"]
        if len(decided) >= self.least and set(decided) == {"other"}:
            return None  # every run fails another way: a different failure, not a fix
        need = passes_to_decide(baseline, rate)
        why = f"{need} more passing would decide" if need else "the rate is not below the baseline's"
        if done < self.least:
            return f"attempt {done + 1} of up to {self.most} ({why})"
        return self._more(why, done, spent_s)

    def _more(self, why: str, done: int, spent_s: float) -> str | None:
        if done >= self.most or not self._affordable(done, spent_s):
            return None
        return f"{why}: attempt {done + 1} of up to {self.most}"

    def _affordable(self, done: int, spent_s: float) -> bool:
        """One more attempt ends within the time budget, at the mean duration so far."""
        if self.budget_s is None:
            return True
        mean = spent_s / done if done else 0.0
        return spent_s + mean <= self.budget_s

    def series_batch(self, kinds: Sequence[Classification], baseline: bool = False) -> int:
        """How many runs to send at once (the farm's remote workers): the first `least` together,
        then the fewest more that could decide (each of them ending as most did so far); never
        more than one series' runs can hold. `baseline`: the series is a fix check's baseline."""
        rule = self.baseline_next if baseline else self.series_next
        if rule(kinds) is None:
            return 0
        done = len(kinds)
        first = self.exactly if self.exactly is not None else min(self.least, self.most)
        if done < first:
            return first - done
        common = max(set(kinds), key=list(kinds).count)
        more = 1
        while done + more < self.most and rule([*kinds, *[common] * more]) is not None:
            more += 1
        return more


__all__ = ["Sampling", "change_rate", "series_rate"]
