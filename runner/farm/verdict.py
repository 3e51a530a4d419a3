"""Verdicts from attempts, the rate with its interval, and why a capsule could not be judged.

Pure functions of what the store holds, so a resumed night decides exactly as an
uninterrupted one would. The rate is the one rate model (verdict/rate.py); when to stop is
the one stopping rule (verdict/sampling.py); REF is judged by the one fix judgement.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import ReplayError
from ..verdict.judge import Attempt, Expected, FixJudgement, judge, judge_fix
from ..verdict.vocabulary import Classification, Unjudged, Verdict
from ..verdict.rate import DEFAULT_CONFIDENCE, Rate
from ..verdict.sampling import series_rate
from .records import AttemptRecord


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    rate: Rate | None
    signature: str | None
    exit_code: int | None
    key_lines: tuple[str, ...]
    signatures: tuple[str, ...] = ()  # every signature the attempts showed, sorted


def as_attempt(r: AttemptRecord) -> Attempt:
    return Attempt(r.exit_code, r.signal, r.signature or "", r.key_lines, r.duration_s or 0.0, r.timed_out,
                   classification=r.classification or "inconclusive")  # type: ignore[arg-type]


def kinds_of(records: Sequence[AttemptRecord]) -> list[Classification]:
    """How each finished attempt ended, as the stopping rule reads them."""
    return [as_attempt(r).classification for r in records]


def decide(expected: Expected, records: Sequence[AttemptRecord], confidence: float = DEFAULT_CONFIDENCE) -> Decision:
    """The recorded-commit verdict in replay's vocabulary, with the reproduction rate."""
    atts = [as_attempt(r) for r in records]
    verdict = judge(expected, atts)
    rate = series_rate([a.classification for a in atts], confidence)
    common = Counter(a.signature for a in atts).most_common(1)
    sig = common[0][0] if common else None
    first = next((a for a in atts if a.signature == sig), None)
    codes = Counter(a.exit_code for a in atts).most_common(1)
    return Decision(verdict, rate if rate.runs else None, sig or None, codes[0][0] if codes else None,
                    first.key_lines if first else (), tuple(sorted({a.signature for a in atts if a.signature})))


def ref_judgement(expected: Expected, baseline: Rate | None, records: Sequence[AttemptRecord], ref: str = "REF",
                  confidence: float = DEFAULT_CONFIDENCE) -> FixJudgement:
    """REF judged as `--patch` judges a patch (runner.verdict.judge.judge_fix, the one fix
    judgement), against the rate of the capsule's own-commit attempts of the same night."""
    return judge_fix(expected, baseline, [as_attempt(r) for r in records], "the recorded commit", f"at {ref}",
                     confidence)


def unjudged(exc: BaseException) -> tuple[Unjudged, str]:
    """broken (the capsule's own reasons: retrying changes nothing) or infra-error (the
    engine or a package source failed: retried next night), with one line saying why. Whose
    fault it is, the error says itself (`fault`, decided where it was raised)."""
    if not isinstance(exc, ReplayError):
        return "infra-error", f"internal error: {type(exc).__name__}: {exc}"
    return ("broken" if exc.fault == "capsule" else "infra-error"), exc.line()
