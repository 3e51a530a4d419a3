"""The replay report as one frozen value: text.py shows it, codec.py writes and reads it."""
from __future__ import annotations

from dataclasses import dataclass

from ..capsules.verification import VerifyResult
from ..httpreplay.report import HttpReport
from ..outcome import Attempt, Expected, Verdict, exit_code_of
from ..plan import Drift, Fidelity


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

    @property
    def exit_code(self) -> int:
        return exit_code_of(self.verdict)


def verification_of(result: VerifyResult) -> Verification:
    return Verification(result.valid, result.sealed, result.trusted,
                        tuple(f"{p.severity}: {p.message}" for p in result.problems))


