"""Capsule readers, tried in order; the first whose detect() matches reads the file.

Each format module offers:
  FORMAT: Format
  detect(path: Path) -> object | None   parsed document when the content is this format
  read(path: Path, parsed: object) -> Capsule
  verify(path: Path, trust_keys: Sequence[Path], parsed: object | None) -> VerifyResult
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from ..errors import CapsuleError
from .model import Capsule
from .verification import VerifyResult


def _readers() -> tuple[ModuleType, ...]:
    from . import codeinstances, novafabric, twin

    return (twin, codeinstances, novafabric)


def _detect(path: Path) -> tuple[ModuleType, object]:
    if not path.exists():
        raise CapsuleError(path, "no such file or directory")
    tried = []
    for reader in _readers():
        parsed = reader.detect(path)
        if parsed is not None:
            return reader, parsed
        tried.append(reader.FORMAT.value)
    raise CapsuleError(path, f"not a capsule of any known format (tried {', '.join(tried)})")


def read_capsule(path: Path | str) -> Capsule:
    """Read any capsule into the model; CapsuleError (exit 2) on bad input."""
    p = Path(path)
    reader, parsed = _detect(p)
    capsule: Capsule = reader.read(p, parsed)
    return capsule


def verify_capsule(path: Path | str, trust_keys: Sequence[Path] = ()) -> VerifyResult:
    p = Path(path)
    reader, parsed = _detect(p)
    result: VerifyResult = reader.verify(p, trust_keys, parsed)  # parsed once: detect() read the whole file
    return result


def check_capsule(path: Path | str, trust_keys: Sequence[Path] = ()) -> tuple[Capsule, VerifyResult]:
    """Verify, then read, from one parse of the file: what `replay CAPSULE` needs."""
    p = Path(path)
    reader, parsed = _detect(p)
    verified = reader.verify(p, trust_keys, parsed)
    return reader.read(p, parsed), verified
