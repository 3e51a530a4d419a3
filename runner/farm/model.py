"""The farm's history as values: what the store returns and what the reports render.

One Night per `farm run`; one CapsuleResult per capsule per night; one AttemptRecord
per attempt. These are the contract between the store (runner/farm/store.py, which
fills them) and the reports (runner/farm/html.py, junit.py, which only read them).
Frozen: a verdict or a finished attempt is never changed once recorded.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# replay's one verdict vocabulary, plus the two farm-only states
FarmVerdict = Literal["reproduced", "different-failure", "not-reproduced", "flaky", "inconclusive",
                      "fixed", "not-fixed", "broken", "infra-error"]
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
class Rate:
    """k of n attempts reproduced, with a 95 % Wilson interval."""

    k: int
    n: int
    low: float
    high: float


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
    recorded_signature: str | None = None
    exit_code: int | None = None  # the program's, most common among attempts
    key_lines: tuple[str, ...] = ()
    reason: str = ""  # one sentence: why this verdict (always set for broken / infra-error)
    rate: Rate | None = None  # for flaky (and any verdict decided from attempts)
    ref: str | None = None  # --ref REF
    ref_verdict: FarmVerdict | None = None  # fixed | not-fixed | inconclusive at REF
    image_digest: str | None = None
    duration_s: float = 0.0
    replay_version: str = ""
    finished_at: str | None = None
    attempts: tuple[AttemptRecord, ...] = ()
    also_at: tuple[str, ...] = ()  # other paths the same capsule (same content) was collected from


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


@dataclass(frozen=True)
class Transition:
    """What changed for one capsule between the last two nights."""

    capsule_id: str
    path: str
    kind: Literal["newly-reproducing", "fixed", "flaky", "signature-changed", "broken", "new", "other"]
    before: FarmVerdict | None
    after: FarmVerdict
    detail: str = ""


@dataclass(frozen=True)
class History:
    nights: tuple[Night, ...] = ()  # oldest first
    transitions: tuple[Transition, ...] = field(default_factory=tuple)  # between the last two nights
