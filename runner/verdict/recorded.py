"""What judging reads of a capsule, as the shapes it reads (not the capsule model itself):
the verdict package sits below the readers, which check a recorded signature with its one
hash (signature.digest), so it cannot import them back. runner.capsules.model.Capsule has
all of this; mypy checks that it does wherever a Capsule is judged.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from .testsets import MAX_REPORT_BYTES


class BodyLike(Protocol):
    @property
    def data(self) -> bytes: ...


class FailureLike(Protocol):
    @property
    def signature(self) -> str | None: ...
    @property
    def key_lines(self) -> Sequence[str]: ...
    @property
    def output_tail(self) -> str | None: ...


class CommandLike(Protocol):
    @property
    def exit_code(self) -> int | None: ...
    @property
    def signal(self) -> str | None: ...
    @property
    def failure(self) -> FailureLike | None: ...
    @property
    def stdout(self) -> BodyLike | None: ...
    @property
    def stderr(self) -> BodyLike | None: ...


class ArtifactLike(Protocol):
    @property
    def path(self) -> str: ...  # inside the capsule directory
    @property
    def logical_path(self) -> str: ...  # where the run wrote it, relative to its working directory


class ProvenanceLike(Protocol):
    @property
    def path(self) -> str: ...


class CapsuleLike(Protocol):
    @property
    def failed(self) -> bool: ...
    @property
    def command(self) -> CommandLike: ...
    @property
    def expected_outputs(self) -> Sequence[ArtifactLike]: ...
    @property
    def provenance(self) -> ProvenanceLike: ...


def xml_reports(capsule: CapsuleLike) -> list[tuple[str, bytes]]:
    """The XML files the recorded run wrote, as the capsule keeps them (a NovaFabric capsule's
    outputs): (where the run wrote it, its bytes). Whether one is a JUnit report is the
    parser's to say. One that cannot be read is left out: verifying the capsule names it."""
    root = Path(capsule.provenance.path)
    out = []
    for art in capsule.expected_outputs:
        if not art.path.lower().endswith(".xml"):
            continue
        path = root / art.path
        try:
            if not path.resolve().is_relative_to(root.resolve()) or path.stat().st_size > MAX_REPORT_BYTES:
                continue
            out.append((art.logical_path, path.read_bytes()))
        except OSError:
            continue
    return out
