"""Run the captured command here: its output streams live to this process's stdout and
stderr while the interleaved tail is kept for the capsule.

The child inherits stdin, the environment and the working directory, and shares replay's
process group. Signals that would end a capture do not end replay while the command runs,
so the capsule still records how the command ended: Ctrl-C and a closed terminal's SIGHUP
reach the whole foreground group (the command gets them from the terminal, once), and a
SIGTERM sent to replay alone (a cancelled CI job) is passed on to the command.
"""
from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO

from ..verdict import signature as sig

# The tail twin keeps is the last 200 lines, at most 64,000 characters. It is scrubbed before it
# is cut, with this much of what came before it, so that a secret the cut would halve (a private
# key block, up to the 65,536 characters the rule spans; a token) is still seen whole.
SCRUB_MARGIN = 70_000
# A UTF-8 character is at most 4 bytes, so these many bytes always hold the tail and its margin.
KEEP_BYTES = (sig.TAIL_CHARS + SCRUB_MARGIN) * 4 + 4
_CHUNK = 1 << 16
_FORWARDED = (signal.SIGTERM,)
_GROUP_WIDE = (signal.SIGINT, signal.SIGHUP)
NOT_FOUND, NOT_EXECUTABLE = 127, 126  # what a shell answers


@dataclass(frozen=True)
class RunResult:
    exit_code: int | None  # None when a signal ended it
    signal: str | None
    duration_ms: int
    output: str  # the interleaved end, decoded (bad UTF-8 as U+FFFD), at most KEEP_BYTES long

    @property
    def failed(self) -> bool:
        return self.signal is not None or self.exit_code != 0

    @property
    def shell_code(self) -> int:
        """The code a shell would report: a signal as 128+N."""
        if self.signal is not None:
            return 128 + int(signal.Signals[self.signal])
        return int(self.exit_code or 0)


class _Tail:
    """The last KEEP_BYTES of everything written, amortised linear."""

    def __init__(self) -> None:
        self.data = bytearray()

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > 2 * KEEP_BYTES:
            del self.data[:-KEEP_BYTES]

    def text(self) -> str:
        return bytes(self.data[-KEEP_BYTES:]).decode("utf-8", "replace")


def run(argv: Sequence[str], cwd: str | None = None, stdout: BinaryIO | None = None,
        stderr: BinaryIO | None = None) -> RunResult:
    """Run argv to its end, streaming its output; a command that cannot start ends as a shell's would."""
    out = stdout or sys.stdout.buffer
    err = stderr or sys.stderr.buffer
    tail = _Tail()
    start = time.monotonic()
    try:
        proc = subprocess.Popen(list(argv), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        code = NOT_FOUND if isinstance(exc, FileNotFoundError) else NOT_EXECUTABLE
        why = "command not found" if code == NOT_FOUND else (exc.strerror or str(exc))
        line = f"replay capture: {argv[0]}: {why}\n".encode("utf-8", "replace")
        err.write(line)
        err.flush()
        tail.add(line)
        return RunResult(code, None, _ms(start), tail.text())
    with _forwarding(proc):
        _pump(proc, out, err, tail)
        code = proc.wait()
    duration = _ms(start)
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"SIG{-code}"
        return RunResult(None, name, duration, tail.text())
    return RunResult(code, None, duration, tail.text())


def _ms(start: float) -> int:
    return round((time.monotonic() - start) * 1000)


def _pump(proc: subprocess.Popen[bytes], out: BinaryIO, err: BinaryIO, tail: _Tail) -> None:
    """Copy both pipes as data arrives, in arrival order, into the tail and to our own streams."""
    assert proc.stdout is not None and proc.stderr is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, out)
    sel.register(proc.stderr, selectors.EVENT_READ, err)
    while sel.get_map():
        for key, _ in sel.select():
            chunk = os.read(key.fd, _CHUNK)
            if not chunk:
                sel.unregister(key.fileobj)
                continue
            tail.add(chunk)
            sink: BinaryIO = key.data
            try:
                sink.write(chunk)
                sink.flush()
            except (OSError, ValueError):  # our own output went away (a closed pipe): keep recording
                pass
    sel.close()
    proc.stdout.close()
    proc.stderr.close()


@contextmanager
def _forwarding(proc: subprocess.Popen[bytes]) -> Iterator[None]:
    """While the command runs, the signals that would end replay go to the command instead."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def forward(signum: int, frame: object) -> None:
        if proc.poll() is None:
            proc.send_signal(signum)

    def wait(signum: int, frame: object) -> None:
        return None

    previous = {s: signal.signal(s, forward) for s in _FORWARDED}
    previous.update({s: signal.signal(s, wait) for s in _GROUP_WIDE})
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
