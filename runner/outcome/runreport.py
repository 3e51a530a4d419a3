"""The replay report as one frozen value: the replay stage builds it; runner.report writes it
(text, JSON, JUnit, the PR comment) and reads its JSON back."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..capsules.verification import VerifyResult
from ..httpreplay.served import HttpReport
from ..verdict.judge import Attempt, Expected, FixJudgement, Verdict, exit_code_of, explain
from ..verdict.rate import DEFAULT_CONFIDENCE, Rate
from ..build.plan import Drift, Fidelity
from ..build.render import Builder

CauseKind = Literal["change", "http", "output", "env-value", "env-unrecorded", "package", "approximated",
                    "randomness"]
SHOWN = 5  # causes the text lists (--all: every one)


@dataclass(frozen=True)
class Kept:
    """The kept container, and the one command that enters it."""

    id: str
    command: str


@dataclass(frozen=True)
class Cause:
    cause: CauseKind
    fact: str  # the fact as the fidelity table names it: "env APP_LANG", "runtime node", "http GET …"
    evidence: str  # what replay saw: "source: homedir.go:41 reads HOME; tool: go reads HOME"
    next: str  # the command (or step) to try next
    score: int = 0  # the evidence's weight (docs/signature.md): higher first


@dataclass(frozen=True)
class Rendered:
    """What render answers: the Dockerfile, what replay says about it and, with -o DIR, where
    the context is and the two lines that replay it by hand (and what those lines leave out)."""

    dockerfile: str
    builder: Builder
    notes: tuple[str, ...] = ()
    context: Path | None = None
    build_line: str | None = None
    run_line: str | None = None
    caveat: str | None = None

    def json(self) -> dict[str, Any]:
        return {"dockerfile": self.dockerfile, "builder": self.builder,
                "notes": [*self.notes, *([self.caveat] if self.caveat else [])],
                "context": None if self.context is None else str(self.context), "build_line": self.build_line,
                "run_line": self.run_line}


@dataclass(frozen=True)
class Step:
    name: str
    seconds: float


@dataclass(frozen=True)
class CapsuleRef:
    path: str
    format: str
    id: str


@dataclass(frozen=True)
class ImageInfo:
    ref: str
    built: bool
    build_s: float
    steps_run: int
    builder: str
    base: str


@dataclass(frozen=True)
class Verification:
    valid: bool | None
    sealed: bool = False
    trusted: bool | None = None
    problems: tuple[str, ...] = ()
    unbound: tuple[str, ...] = ()  # a sealed capsule's files the seal does not cover, applied (--allow-unverified)


@dataclass(frozen=True)
class Baseline:
    """A fix check's first run: with --patch the unpatched source (the same image but for the
    source layer), with --ref the recorded commit with its diff; `attempts` are then the fix's."""

    verdict: Verdict
    attempts: tuple[Attempt, ...]
    before: str = "the unpatched source"  # what the baseline ran, and how the fix's run is named
    after: str = "with the patch"
    rate: Rate | None = None  # failures as recorded out of its runs: what the fix is judged against


@dataclass(frozen=True)
class ReplayReport:
    verdict: Verdict
    capsule: CapsuleRef
    expected: Expected
    attempts: tuple[Attempt, ...]
    fidelity: tuple[Fidelity, ...]
    image: ImageInfo
    verification: Verification
    steps: tuple[Step, ...] = ()
    drift: tuple[Drift, ...] = ()
    http: HttpReport | None = None
    notes: tuple[str, ...] = ()
    baseline: Baseline | None = None  # with --patch or --ref; `attempts` are then the fix's run
    # failures as recorded out of the attempts that decided (with --patch / --ref: the runs with the
    # change that did not pass), at the run's confidence; None when no attempt decided
    rate: Rate | None = None
    fix: FixJudgement | None = None  # with --patch or --ref: the fix judgement (verdict/judge.py)
    why: tuple[Cause, ...] = ()  # not as recorded: the likeliest causes, first first (why.py)
    alternative: str | None = None  # the environment the capsule also admits that brought the failure back
    alternatives_tried: tuple[str, ...] = ()  # each tried ("ms 2.1.2 at the top level: reproduced")
    kept: Kept | None = None  # --keep: the attempt's container that stays, and the command that enters it

    @property
    def exit_code(self) -> int:
        return exit_code_of(self.verdict)

    @property
    def summary(self) -> str:
        """The sentence that ends the report (and is `summary` in its JSON), derived, never stored."""
        if self.fix is not None:
            return f"{self.fix.verdict.upper()}: {self.fix.why}."
        confidence = self.rate.confidence if self.rate is not None else DEFAULT_CONFIDENCE
        return explain(self.verdict, self.expected, self.attempts, confidence)


def verification_of(result: VerifyResult) -> Verification:
    return Verification(result.valid, result.sealed, result.trusted,
                        tuple(f"{p.severity}: {p.message}" for p in result.problems), result.unbound)


