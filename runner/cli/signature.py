"""`replay signature`: the failure signature of a command's output, as twin computes it."""
from __future__ import annotations

import signal as signal_module

import re
import sys
from pathlib import Path
from typing import BinaryIO

from ..commands.spec import Args
from ..verdict import signature as sig
from ..errors import CapsuleError, UsageError
from .console import err, out, print_result

# The signature only looks at the last 64,000 characters, and a UTF-8 character is at most
# 4 bytes: reading more than this (plus one partial character) can never change the answer,
# and a huge or endless input cannot exhaust memory.
_MAX_BYTES = sig.TAIL_CHARS * 4 + 4
_CHUNK = 1 << 16
_SIGNAL_NAME = re.compile(r"SIG[A-Z0-9]+")
# Output is untrusted: a key line may still hold control characters (a bare ESC, a bell)
# that would drive the user's terminal if printed as they are.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def signature(a: Args) -> int:
    signal_name = _signal_name(a.signal)
    if (a.exit_code is None) == (signal_name is None):
        raise UsageError("give exactly one of --exit-code N or --signal NAME")
    result = sig.compute(_read_output(a.file), a.exit_code, signal_name)
    if a.json:
        print_result("signature", 0, {"signature": result.signature, "key_lines": list(result.key_lines),
                                      "exit_code": a.exit_code, "signal": signal_name})
    else:
        _print_text(result)
    return 0


def _signal_name(raw: str | None) -> str | None:
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


def _read_output(file: str) -> str:
    try:
        if file == "-":
            data = _read_stdin()
        else:
            with Path(file).open("rb") as stream:
                data = _tail_bytes(stream)
    except OSError as e:
        raise CapsuleError(file, f"cannot read: {e.strerror or e}") from e
    # Invalid bytes become U+FFFD, as twin's decoder does.
    return data.decode("utf-8", errors="replace")


def _read_stdin() -> bytes:
    if sys.stdin is None:  # started with stdin closed
        raise CapsuleError("-", "no standard input to read the output from")
    if sys.stdin.isatty():
        err.print("reading the output from stdin (end it with Ctrl-D)")
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


def _print_text(result: sig.FailureSignature) -> None:
    lines = result.key_lines
    if not lines:
        out.print("key lines: none (the output is empty)")
    elif any(sig.is_key_line(line) for line in lines):
        out.print(f"key lines ({len(lines)}):")
    else:
        out.print(f"key lines (the last {len(lines)}; none looks like an error):")
    for line in lines:
        out.print(f"  {_printable(line)}", markup=False)
    out.print(result.signature, markup=False)


def _printable(line: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", line)
