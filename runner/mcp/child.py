"""One tool call = one `python -m runner ... --json` child process.

The child is the real CLI, so a tool answers exactly what `--json` prints and every
failure is the CLI's own error envelope. Its stderr progress lines (REPLAY_PROGRESS=1
keeps them with --json) arrive here line by line, for progress notifications. A
cancelled call (or the server shutting down) sends the child SIGTERM, which replay
handles as Ctrl-C (containers, networks and rules removed), and waits for it to exit:
the call ends only once the engine holds nothing of it.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, Process

from ..codec import envelope
from ..errors import Exit
from ..replay.progress import FORCE_ENV

PREFIX = "replay: "
ERROR_PREFIX = "replay: error: "
# After SIGTERM a replay removes its containers and networks (seconds; the brief's bound is
# 15 s on a loaded machine). Past this, it is killed: better a leftover than a hung server.
STOP_GRACE_S = 120.0
MAX_LINE = 64 * 1024

OnLine = Callable[[str], Awaitable[None]]


@dataclass(frozen=True)
class Finished:
    code: int
    stdout: str
    lines: tuple[str, ...]  # the child's stderr lines, "replay: " cut off


def child_argv(words: list[str]) -> list[str]:
    return [sys.executable, "-m", "runner", *words]


def child_env() -> dict[str, str]:
    return {**os.environ, FORCE_ENV: "1", "PYTHONUNBUFFERED": "1", "NO_COLOR": "1"}


async def run_child(words: list[str], on_line: OnLine | None = None) -> Finished:
    """Run `replay WORDS`; each stderr line goes to on_line as it comes. Cancelled: stopped cleanly."""
    # A session of its own: a client that kills the server's process group (the SDK's stdio client
    # does, 2 s after SIGTERM) must not kill a replay in the middle of removing its containers.
    proc = await anyio.open_process(child_argv(words), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=child_env(), start_new_session=True)
    out = bytearray()
    lines: list[str] = []
    try:
        async with anyio.create_task_group() as tg:
            assert proc.stdout is not None and proc.stderr is not None
            tg.start_soon(_collect, proc.stdout, out)
            tg.start_soon(_lines, proc.stderr, lines, on_line)
        code = await proc.wait()
    except BaseException:  # cancelled (or the server going down): stop the replay as Ctrl-C does
        with anyio.CancelScope(shield=True):
            await stop(proc)
        raise
    return Finished(code, out.decode("utf-8", "replace"), tuple(lines))


async def stop(proc: Process) -> None:
    """SIGTERM, then wait for replay's own cleanup (its pipes drained meanwhile); kill past the grace."""
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
    with anyio.move_on_after(STOP_GRACE_S) as scope:
        async with anyio.create_task_group() as tg:
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    tg.start_soon(_collect, stream, bytearray())
        await proc.wait()
    if scope.cancelled_caught and proc.returncode is None:
        proc.kill()
        await proc.wait()


async def _collect(stream: ByteReceiveStream, into: bytearray) -> None:
    async for chunk in _chunks(stream):
        into.extend(chunk)


async def _lines(stream: ByteReceiveStream, lines: list[str], on_line: OnLine | None) -> None:
    pending = b""
    async for chunk in _chunks(stream):
        pending += chunk
        *whole, pending = pending.split(b"\n")
        if len(pending) > MAX_LINE:  # a line without end: taken as it is
            whole, pending = [*whole, pending], b""
        for raw in whole:
            await _line(raw, lines, on_line)
    if pending:
        await _line(pending, lines, on_line)


async def _line(raw: bytes, lines: list[str], on_line: OnLine | None) -> None:
    text = raw.decode("utf-8", "replace").rstrip("\r")
    if not text.strip():
        return
    lines.append(text.removeprefix(PREFIX))
    if on_line is not None and text.startswith(PREFIX) and not text.startswith(ERROR_PREFIX):
        await on_line(text.removeprefix(PREFIX))


async def _chunks(stream: ByteReceiveStream) -> Any:
    try:
        while True:
            yield await stream.receive(65536)
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        return


def enveloped(command: str, done: Finished) -> dict[str, Any]:
    """The envelope the child printed; an internal-error envelope when it printed none."""
    try:
        data = json.loads(done.stdout)
    except ValueError:
        data = None
    if isinstance(data, dict) and data.get("command") == command and {"result", "error", "exit_code"} <= set(data):
        return data
    said = next((line.removeprefix("error: ") for line in reversed(done.lines) if line.startswith("error: ")), None)
    tail = said or (done.lines[-1] if done.lines else "no output")
    message = f"replay {command} ended with exit code {done.code} without a JSON answer: {tail}"
    return envelope(command, int(Exit.ENVIRONMENT), None, {"kind": "internal", "message": message, "file": None})
