"""The capsule document and its file: twin v1, as the seed's field tables give it."""
from __future__ import annotations

import json
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import Exit, ReplayError


class CapsuleNotWritten(ReplayError):
    """The command ran but its capsule could not be written (exit 3 when the command passed)."""

    exit_code = Exit.ENVIRONMENT
    kind = "environment"
    run_code = 0  # the command's own exit code (a signal as 128+N), set once it ran

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"{path}: cannot write the capsule: {why}")
        self.path = str(path)


def generator() -> str:
    return f"replay {__version__}"


def created_at(now: datetime | None = None) -> str:
    """ISO 8601 in UTC with milliseconds, as JavaScript's toISOString() writes it."""
    t = (now or datetime.now(UTC)).astimezone(UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def render(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def write(path: Path, doc: dict[str, Any]) -> None:
    """Whole or not at all: a temporary file beside it, renamed over it."""
    text = render(doc).encode("utf-8", "surrogatepass")
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise CapsuleNotWritten(path, exc.strerror or str(exc)) from exc
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise CapsuleNotWritten(path, exc.strerror or str(exc)) from exc
