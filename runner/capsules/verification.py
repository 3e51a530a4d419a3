"""The result of verifying a capsule, shared by all formats."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Problem:
    severity: Severity
    message: str
    where: str | None = None  # a file inside the capsule, or a JSON path


@dataclass(frozen=True)
class Signer:
    keyid: str | None
    algorithm: str  # "ecdsa-p256" | "ed25519"
    subject: str | None  # certificate subject, when a certificate was given
    signature_valid: bool
    trusted: bool | None  # None: no --trust-key given


@dataclass(frozen=True)
class VerifyResult:
    format: str
    path: str
    problems: tuple[Problem, ...] = ()
    signers: tuple[Signer, ...] = ()
    sealed: bool = False
    checks: tuple[str, ...] = field(default=())  # what was checked, in order, for the report
    unbound: tuple[str, ...] = ()  # files of a sealed capsule replay reads that the seal does not cover

    @property
    def valid(self) -> bool:
        return not any(p.severity == "error" for p in self.problems)

    @property
    def trusted(self) -> bool | None:
        """True when a valid signature comes from a trusted key; None when no key was given."""
        flags = [s.trusted for s in self.signers if s.signature_valid]
        if not flags or all(f is None for f in flags):
            return None
        return any(flags)
