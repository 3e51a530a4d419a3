"""A replay's attempts, stopped and judged: a plain replay's one series, or a fix check's two
(`--patch`, `--ref`): the baseline first, then the runs with the change, stopped and judged
against the baseline's rate.

Pure over `Run`, whatever runs one series of attempts (the replayer's containers in
`replay CAPSULE`; a seeded stand-in in the unit tests and in scripts/bench), so the stopping
rule (verdict/sampling.py) and the judgements (verdict/judge.py) driven here are the ones a
user's replay drives.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..verdict.judge import Attempt, Expected, FixJudgement, Verdict, judge, judge_fix
from ..verdict.rate import Rate
from ..verdict.sampling import Sampling, series_rate
from ..outcome.runreport import Baseline

# The stopping rule of one series: the attempts so far and the seconds they took, to the next
# attempt's step name (None: the series is over).
Until = Callable[[Sequence[Attempt], float], str | None]
# Runs one series of attempts until its rule ends it; the text names the series in progress lines.
Run = Callable[[Until, str], list[Attempt]]


@dataclass(frozen=True)
class Outcome:
    verdict: Verdict
    attempts: tuple[Attempt, ...]
    rate: Rate | None  # of `attempts` (with a change: the runs that did not pass)
    baseline: Baseline | None = None
    fix: FixJudgement | None = None


def series(sampling: Sampling) -> Until:
    return lambda done, spent: sampling.series_next([a.classification for a in done], spent)


def replayed(expected: Expected, sampling: Sampling, run: Run) -> Outcome:
    """One series, stopped when decided, and its verdict."""
    attempts = run(series(sampling), "")
    rate = series_rate([a.classification for a in attempts], sampling.confidence)
    return Outcome(judge(expected, attempts), tuple(attempts), rate if rate.runs else None)


def fix_checked(expected: Expected, sampling: Sampling, before: Run | None, after: Run,
                names: tuple[str, str] = ("the unpatched source", "with the patch")) -> Outcome:
    """The baseline's series at `before` (stopped as a replay is, or surer: Sampling.baseline_next),
    then the runs `after` the change
    one at a time until decided against the baseline's rate (or the budget ends). A recorded pass
    has nothing to fail at `before`: its runs `after` alone are judged."""
    was, now = names
    if not expected.failed or before is None:
        attempts = after(series(sampling), now)
        fix = judge_fix(expected, None, attempts, was, now, sampling.confidence)
        return Outcome(fix.verdict, tuple(attempts), fix.rate, None, fix)
    base_attempts = before(lambda done, spent: sampling.baseline_next([a.classification for a in done], spent), was)
    base_rate = series_rate([a.classification for a in base_attempts], sampling.confidence)
    baseline = Baseline(judge(expected, base_attempts), tuple(base_attempts), was, now, base_rate)
    attempts = after(lambda done, spent: sampling.fix_next(base_rate, [a.classification for a in done], spent), now)
    fix = judge_fix(expected, base_rate, attempts, was, now, sampling.confidence)
    return Outcome(fix.verdict, tuple(attempts), fix.rate, baseline, fix)
