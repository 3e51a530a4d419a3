"""Verdicts from attempts, the rate with its interval, and why a capsule could not be judged.

Pure functions of what the store holds, so a resumed night decides exactly as an
uninterrupted one would.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import (ReplayError)
from ..verdict.judge import FixJudgement, judge_fix
from ..verdict.judge import Attempt, Expected, judge
from ..verdict.facts import FarmVerdict, Unjudged, Verdict
from .model import AttemptRecord, Rate

Z95 = 1.959963984540054  # the normal quantile of a two-sided 95 % interval


def wilson(k: int, n: int, z: float = Z95) -> Rate:
    """k of n with the Wilson score interval: honest at small n and at 0 or n (unlike k/n ± ...)."""
    if n <= 0:
        return Rate(k, n, 0.0, 1.0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return Rate(k, n, max(0.0, centre - half), min(1.0, centre + half))


def more_attempts(classifications: Sequence[str | None], first: int, maximum: int) -> int:
    """How many attempts are still to run: `first` in all, then up to `maximum` only when
    the first ones disagree (a timeout disagrees with anything)."""
    done = len(classifications)
    if done < first:
        return first - done
    return max(0, maximum - done) if len(set(classifications)) > 1 else 0


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    rate: Rate | None
    signature: str | None
    exit_code: int | None
    key_lines: tuple[str, ...]


def as_attempt(r: AttemptRecord) -> Attempt:
    return Attempt(r.exit_code, r.signal, r.signature or "", r.key_lines, r.duration_s or 0.0, r.timed_out,
                   classification=r.classification or "inconclusive")  # type: ignore[arg-type]


def decide(expected: Expected, records: Sequence[AttemptRecord]) -> Decision:
    """The recorded-commit verdict in replay's vocabulary, with the reproduction rate."""
    atts = [as_attempt(r) for r in records]
    verdict = judge(expected, atts)
    decided = [a for a in atts if a.classification != "inconclusive"]
    rate = wilson(sum(a.classification == "recorded" for a in decided), len(decided)) if decided else None
    common = Counter(a.signature for a in atts).most_common(1)
    sig = common[0][0] if common else None
    first = next((a for a in atts if a.signature == sig), None)
    codes = Counter(a.exit_code for a in atts).most_common(1)
    return Decision(verdict, rate, sig or None, codes[0][0] if codes else None, first.key_lines if first else ())


def ref_attempts_wanted(recorded: FarmVerdict, first: int, maximum: int) -> int:
    """A flaky failure has to stay away for every attempt the farm allows before REF is called fixed."""
    return maximum if recorded == "flaky" else first


def ref_judgement(expected: Expected, baseline: Verdict, records: Sequence[AttemptRecord]) -> FixJudgement:
    """REF judged as `--patch` judges a patch (runner.verdict.judge.judge_fix, the one fix table), the
    capsule's own-commit verdict of the same night as the baseline."""
    return judge_fix(expected, baseline, [as_attempt(r) for r in records])


def ref_done(records: Sequence[AttemptRecord], wanted: int) -> bool:
    """REF attempts stop at the first that does not pass: not-fixed is decided by then."""
    return len(records) >= wanted or any(r.classification != "pass" for r in records)


def unjudged(exc: BaseException) -> tuple[Unjudged, str]:
    """broken (the capsule's own reasons: retrying changes nothing) or infra-error (the
    engine or a package source failed: retried next night), with one line saying why. Whose
    fault it is, the error says itself (`fault`, decided where it was raised)."""
    if not isinstance(exc, ReplayError):
        return "infra-error", f"internal error: {type(exc).__name__}: {exc}"
    return ("broken" if exc.fault == "capsule" else "infra-error"), exc.line()
