"""The farm's history as values: what the store returns and what the reports render.

One Night per `farm run`; one CapsuleResult per capsule per night; one AttemptRecord
per attempt. These are the contract between the store (runner/farm/store.py, which
fills them) and the reports (runner/report/html.py, junit.py, which only read them).
Frozen: a verdict or a finished attempt is never changed once recorded.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from ..verdict.vocabulary import FarmVerdict, TransitionKind, Verdict
from ..verdict.rate import Rate

__all__ = ["AttemptRecord", "CapsuleResult", "FarmVerdict", "History", "Mark", "Night", "Rate", "Transition"]
# which run an attempt belongs to: at the recorded commit, or at --ref
Side = Literal["recorded", "ref"]
AttemptState = Literal["started", "finished"]


@dataclass(frozen=True)
class AttemptRecord:
    id: str  # unique, made before the attempt starts (resume never counts one twice)
    night_id: str
    capsule_id: str
    side: Side
    index: int  # 1-based within (night, capsule, side)
    state: AttemptState
    started_at: str  # RFC 3339 UTC
    finished_at: str | None = None
    exit_code: int | None = None  # the program's
    signal: str | None = None
    signature: str | None = None
    classification: str | None = None  # recorded | pass | other | inconclusive
    duration_s: float | None = None
    timed_out: bool = False
    key_lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class CapsuleResult:
    night_id: str
    capsule_id: str  # content hash of the capsule: stable across nights and paths
    path: str
    format: str  # twin | novafabric | codeinstances
    repo: str | None  # the recorded remote (JUnit classname), None when not recorded
    commit: str | None
    verdict: FarmVerdict
    signature: str | None = None  # the signature seen here (most common among attempts)
    # every signature its attempts at the recorded commit showed, sorted: a flaky capsule's
    # failing and passing ones, so that another one of them is no "signature changed"
    signatures: tuple[str, ...] = ()
    recorded_signature: str | None = None
    exit_code: int | None = None  # the program's, most common among attempts
    key_lines: tuple[str, ...] = ()
    reason: str = ""  # one sentence: why this verdict (always set for broken / infra-error)
    rate: Rate | None = None  # failures as recorded of the attempts that decided (verdict/rate.py)
    ref: str | None = None  # --ref REF
    ref_verdict: Verdict | None = None  # at REF, as runner.verdict.judge.judge_fix judges a fix
    image_digest: str | None = None
    duration_s: float = 0.0
    replay_version: str = ""
    finished_at: str | None = None
    attempts: tuple[AttemptRecord, ...] = ()
    also_at: tuple[str, ...] = ()  # other paths the same capsule (same content) was collected from
    # what the plan's fidelity table says was not replayed exactly (`fact: status (why)`): why a
    # capsule that never reproduces here may not
    not_applied: tuple[str, ...] = ()

    @property
    def runs(self) -> tuple[int, int] | None:
        """(failures as recorded, runs) of the attempts that decided; None when none did."""
        return (self.rate.failed, self.rate.runs) if self.rate is not None else None


class Mark(NamedTuple):
    """One capsule in one night, as the attention view needs it across many nights (light:
    a history of 10,000 capsules x 30 nights is read as these, never as full results)."""

    capsule_id: str
    verdict: FarmVerdict
    signature: str | None
    ref: str | None
    ref_verdict: Verdict | None
    rate_k: int | None
    rate_n: int | None
    signatures: str | None  # CapsuleResult.signatures as the store keeps them (JSON; None before it did)

    @property
    def runs(self) -> tuple[int, int] | None:
        return (self.rate_k, self.rate_n) if self.rate_k is not None and self.rate_n is not None else None


# A mark as the store reads it: a plain row in Mark's field order (Mark._make names one when
# needed; 300,000 of them are read for a report, too many to name each).
MarkRow = tuple[str, FarmVerdict, str | None, str | None, Verdict | None, int | None, int | None, str | None]


@dataclass(frozen=True)
class Night:
    id: str
    started_at: str
    finished_at: str | None = None
    ref: str | None = None
    sources: tuple[str, ...] = ()
    results: tuple[CapsuleResult, ...] = ()
    images: int = 0  # distinct planned images this night needed
    builds: int = 0  # of those, images actually built (not found cached)
    options: Mapping[str, Any] = field(default_factory=dict, hash=False)  # as `farm run` stored them (FarmOptions.stored)

    @property
    def exit_code(self) -> int:
        """`farm run`'s exit: 3 when any capsule ended infra-error; otherwise 1 when no capsule got a
        verdict (all broken); otherwise 0 (every capsule got a verdict or is broken: the report says which)."""
        verdicts = [r.verdict for r in self.results]
        if "infra-error" in verdicts:
            return 3
        return 1 if all(v == "broken" for v in verdicts) else 0


# A transition's before state when there was no verdict: a capsule's first night, or the first
# night it was judged at REF.
Before = Literal["new", "not-judged"]


@dataclass(frozen=True)
class Transition:
    """What changed for one capsule between the last two nights."""

    capsule_id: str
    path: str
    kind: TransitionKind
    before: FarmVerdict | Before
    after: FarmVerdict
    detail: str = ""


@dataclass(frozen=True)
class History:
    nights: tuple[Night, ...] = ()  # oldest first
    transitions: tuple[Transition, ...] = field(default_factory=tuple)  # between the last two nights
