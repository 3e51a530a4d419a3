"""`replay signature`'s input: a command's output as the signature reads it (the tail of a file or
of stdin, never more than can change the answer) and the signal that ended it."""
from __future__ import annotations

import re
import signal as signal_module
import sys
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from ..errors import CapsuleError, PathError, UsageError
from . import signature as sig

# The signature only looks at the last 64,000 characters, and a UTF-8 character is at most
# 4 bytes: reading more than this (plus one partial character) can never change the answer,
# and a huge or endless input cannot exhaust memory.
_MAX_BYTES = sig.TAIL_CHARS * 4 + 4
_CHUNK = 1 << 16
_SIGNAL_NAME = re.compile(r"SIG[A-Z0-9]+")


def signal_name(raw: str | None) -> str | None:
    """`segv`, `SEGV` and `SIGSEGV` all mean SIGSEGV, the form twin records."""
    if raw is None:
        return None
    name = raw.strip().upper()
    if name.isdigit():  # a number: its name on this platform
        try:
            return signal_module.Signals(int(name)).name
        except ValueError:
            raise UsageError(f"--signal: {raw!r} is not a signal number here") from None
    name = name if name.startswith("SIG") else f"SIG{name}"
    if not _SIGNAL_NAME.fullmatch(name) or name not in signal_module.Signals.__members__:
        raise UsageError(f"--signal: {raw!r} is not a signal name (e.g. SIGSEGV)")
    return name


def read_output(file: str, say: Callable[[str], None] = lambda line: None) -> str:
    try:
        if file == "-":
            data = _read_stdin(say)
        else:
            with Path(file).open("rb") as stream:
                data = _tail_bytes(stream)
    except OSError as e:
        raise PathError(file, f"cannot read: {PathError.of(file, e).problem}") from None
    # Invalid bytes become U+FFFD, as twin's decoder does.
    return data.decode("utf-8", errors="replace")


def _read_stdin(say: Callable[[str], None]) -> bytes:
    if sys.stdin is None:  # started with stdin closed
        raise CapsuleError("-", "no standard input to read the output from")
    if sys.stdin.isatty():
        say("reading the output from stdin (end it with Ctrl-D)")
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream put in place by an embedding program
        return sys.stdin.read()[-sig.TAIL_CHARS - 1 :].encode("utf-8", errors="replace")
    return _tail_bytes(buffer)


def _tail_bytes(stream: BinaryIO) -> bytes:
    """The last `_MAX_BYTES` of a stream: seek when possible, else read through."""
    if stream.seekable():
        size = stream.seek(0, 2)
        stream.seek(max(0, size - _MAX_BYTES))
        return stream.read(_MAX_BYTES)
    kept = bytearray()
    while chunk := stream.read(_CHUNK):
        kept += chunk
        if len(kept) > 2 * _MAX_BYTES:  # trim now and then: amortised linear
            del kept[:-_MAX_BYTES]
    return bytes(kept[-_MAX_BYTES:])
