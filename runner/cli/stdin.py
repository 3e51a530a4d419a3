"""`-` as a capsule argument: a JSON capsule (twin, CodeInstances) read from stdin.

`replay inspect -` and `replay verify -`, as `replay signature -` reads a log. The bytes
are capped like a downloaded capsule (REPLAY_CAPSULE_MAX_BYTES), put in a private
temporary file for the readers (they read files), and every message names `<stdin>`,
never that file. A NovaFabric capsule is a directory: it cannot come on stdin.
"""
from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from ..capsules.fetch import max_bytes
from ..errors import CapsuleError, UsageError

STDIN = "-"
SHOWN = "<stdin>"


def is_stdin(capsule: Path | str) -> bool:
    return str(capsule) == STDIN


def read_stdin(stream: BinaryIO | None = None) -> bytes:
    """The capsule's bytes; one line (exit 2) for a terminal, nothing, too much or no JSON."""
    source = stream if stream is not None else sys.stdin.buffer
    if stream is None and sys.stdin.isatty():
        raise UsageError("`-` reads a capsule from stdin, but stdin is a terminal: pipe one in "
                         "(replay inspect - < capsule.json) or give its path")
    cap = max_bytes()
    data = source.read(cap + 1)
    if len(data) > cap:
        raise CapsuleError(SHOWN, f"more than the {cap}-byte limit (REPLAY_CAPSULE_MAX_BYTES)")
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if not head:
        raise CapsuleError(SHOWN, "empty: pipe a JSON capsule in, or give a capsule's path")
    if head not in (b"{", b"["):
        raise CapsuleError(SHOWN, "not a JSON capsule: only twin and CodeInstances capsules (JSON files) can come "
                                  "on stdin; a NovaFabric capsule is a directory: give its path")
    return data


@contextmanager
def capsule_file(capsule: Path) -> Iterator[Path]:
    """The path to read: the argument itself, or stdin's bytes in a temporary file (removed after)."""
    if not is_stdin(capsule):
        yield capsule
        return
    data = read_stdin()
    with tempfile.TemporaryDirectory(prefix="replay-stdin-") as tmp:
        path = Path(tmp) / "stdin.json"
        path.write_bytes(data)
        try:
            yield path
        except CapsuleError as exc:
            if exc.path != str(path):
                raise
            raise CapsuleError(SHOWN, exc.problem.replace(str(path), SHOWN)) from None


def given(capsule: Path, shown_as: str) -> str:
    """How a capsule is named in the output: `<stdin>` for stdin, else as given."""
    return SHOWN if is_stdin(capsule) else shown_as
