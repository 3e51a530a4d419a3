"""Capsule readers; `detect()` finds the one whose format a file or directory is.

Each format module offers:
  FORMAT: Format
  detect(path: Path) -> object | None   parsed document when the content is this format
  read(path: Path, parsed: object) -> Capsule
  verify(path: Path, trust_keys: Sequence[Path], parsed: object | None) -> VerifyResult
and the JSON formats (twin, CodeInstances) `claims(doc) -> bool`, so a JSON file is parsed
once whichever of them it is. Commands open a capsule through `opening.open_capsule`
(a path, a URL or stdin; the trust policy; the name to show); these are its parts.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from ..errors import CapsuleError, NotACapsule, PathError
from .jsonload import sniff
from .model import Capsule, Format
from .scope import Scope
from .verification import VerifyResult


def scope_of(fmt: Format) -> Scope:
    """What a format records at all, as its reader says (its SCOPE)."""
    scope: Scope = next(r for r in _readers() if r.FORMAT is fmt).SCOPE
    return scope


def _readers() -> tuple[ModuleType, ...]:
    from . import codeinstances, novafabric, twin

    return (twin, codeinstances, novafabric)


def detect(path: Path) -> tuple[ModuleType, object]:
    """The reader of this capsule and its parsed document: the one parse every use shares."""
    try:
        path.stat()
    except FileNotFoundError:
        raise CapsuleError(path, "no such file or directory") from None
    except OSError as exc:  # the paths no file can have: too long, a symlink loop, no permission...
        raise PathError.of(path, exc) from None
    from . import codeinstances, novafabric, twin

    doc = sniff(path)  # None: no JSON file (a directory, a YAML manifest, another file)
    for json_reader in (twin, codeinstances):
        if doc is not None and json_reader.claims(doc):
            return json_reader, doc
    parsed = novafabric.detect(path)  # a distributed run's capsule.json is JSON and NovaFabric's
    if parsed is not None:
        return novafabric, parsed
    tried = ", ".join(reader.FORMAT.value for reader in _readers())
    raise NotACapsule(path, f"not a capsule of any known format (tried {tried})")


def read_capsule(path: Path | str) -> Capsule:
    """Read any capsule into the model; CapsuleError (exit 2) on bad input."""
    p = Path(path)
    reader, parsed = detect(p)
    capsule: Capsule = reader.read(p, parsed)
    return capsule


def verify_capsule(path: Path | str, trust_keys: Sequence[Path] = ()) -> VerifyResult:
    p = Path(path)
    reader, parsed = detect(p)
    result: VerifyResult = reader.verify(p, trust_keys, parsed)  # parsed once: detect() read the whole file
    return result

