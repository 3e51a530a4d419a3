"""How sure a bisect's answer must be, and what it may spend to get there.

Every mode spends runs one decision at a time and stops at the first of: an answer at
`confidence` (exit 0), the run budget (`--max-runs`), the time budget (`--budget`). Running
out of either is no error: the answer says what is known, with how sure it is (exit 1).
"""
from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..replay.defaults import DEFAULT_BISECT_MAX_RUNS
from ..verdict.rate import DEFAULT_CONFIDENCE, PRIOR, Prior

# The rarest failure a bisect looks for: the bad end is "not reproduced" once so many of its runs
# passed that a failure coming back in 1 run of 5 would have shown at the confidence.
RAREST = 0.2
# The bad end's rate first: it runs until it failed the recorded way this many times. A
# deterministic failure pays one run for it; one that comes back half the time passes for
# deterministic only 1 time in 4, and the search re-runs the bad end where its rate still
# matters (posterior.py). Three (as before) cost a deterministic failure a run more and made no
# flaky answer surer (the stand-in of scripts/bench_noise_bisect.py, 300 to 1,000 bisects a rate).
RATE_FIRST = 2


def rate_known(failed: int) -> bool:
    """Whether the bad end's recorded failures say enough of the rate to search."""
    return failed >= RATE_FIRST


@dataclass(frozen=True)
class Rules:
    confidence: float = DEFAULT_CONFIDENCE  # --confidence: an answer below it exits 1
    max_runs: int = DEFAULT_BISECT_MAX_RUNS  # --max-runs: runs in all, both ends included
    seconds: float | None = None  # --budget: wall time, None: no limit
    per_trial: int | None = None  # --attempts: the most runs one item or one set of facts gets
    prior: Prior = PRIOR  # what is believed of the rate before any run (verdict/rate.py)

    def give_up_after(self) -> int:
        """Runs without the recorded failure after which the bad end is not reproduced."""
        n = math.ceil(math.log(1 - self.confidence) / math.log(1 - RAREST))
        return min(n, self.per_trial) if self.per_trial is not None else n


class Spending:
    """The runs and time a bisect has spent against its rules (thread-safe)."""

    def __init__(self, rules: Rules, clock: Callable[[], float] = time.monotonic) -> None:
        self.rules, self.clock = rules, clock
        self.start = clock()
        self.runs = 0
        self._lock = threading.Lock()

    def spend(self, runs: int) -> None:
        with self._lock:
            self.runs += runs

    def left(self) -> int:
        """Runs that may still start (0 once the time budget is over)."""
        if self.rules.seconds is not None and self.clock() - self.start >= self.rules.seconds:
            return 0
        with self._lock:
            return max(0, self.rules.max_runs - self.runs)

    def why_stopped(self) -> str:
        if self.rules.seconds is not None and self.clock() - self.start >= self.rules.seconds:
            return f"the time budget ({self.rules.seconds:g} s) is spent"
        return f"the run budget ({self.rules.max_runs} runs) is spent"
