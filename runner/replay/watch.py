"""`replay CAPSULE --workdir DIR --attempts 1 --watch`: the fix loop.

The image is built (or found) once; every saved change to DIR runs one attempt again in a fresh
container, in the same hermetic world, and says its verdict in one line. Nothing is built again:
DIR is mounted in place of the recorded source (workdir.py).
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ..build.plan import Plan
from ..engine import Engine
from ..verdict.judge import Attempt, Expected, expected_of
from .image import BuiltImage
from .options import ReplayOptions
from .progress import Progress
from .loading import Loader
from .replayer import Replayer
from .workdir import SKIPPED

POLL_S = 0.1  # how often DIR's files are looked at: a change shows within it
Snapshot = frozenset[tuple[str, int, int]]


def snapshot(directory: Path) -> Snapshot:
    """Every file under DIR (but .git and node_modules) with its mtime and size."""
    out: set[tuple[str, int, int]] = set()
    for root, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if d not in SKIPPED]
        for name in files:
            path = os.path.join(root, name)
            try:
                st = os.stat(path)
            except OSError:  # removed while walking: the next look sees it gone
                continue
            out.add((path, st.st_mtime_ns, st.st_size))
    return frozenset(out)


def changes(directory: Path, stop: Callable[[], bool] = lambda: False,
            last: Snapshot | None = None) -> Iterator[float]:
    """Yields once per saved change to DIR (several files saved together count once, once they
    settle for one poll), until `stop()`: when the change was saved (the newest changed file's
    mtime, wall clock; now for a removal)."""
    last = snapshot(directory) if last is None else last
    while not stop():
        time.sleep(POLL_S)  # polling: the platform's file events are not needed for one directory
        now = snapshot(directory)
        if now != last:
            while (settled := snapshot(directory)) != now:
                now = settled
            changed = now - last
            last = now
            yield max((m / 1e9 for _, m, _ in changed), default=time.time())


def verdict_line(n: int, expected: Expected, att: Attempt, since_save_s: float | None) -> str:
    """`run N: <verdict> (exit E, T s[, S s after the save])`."""
    if att.classification == "recorded":
        what = "fails as recorded" if expected.failed else "passes as recorded"
    elif att.classification == "pass":
        what = "passes (the recorded failure is gone)"
    elif att.timed_out:
        what = "timed out"
    else:
        what = f"{att.classification}: {att.signature}"
    end = f"signal {att.signal}" if att.signal else f"exit {att.exit_code}"
    after = f", {since_save_s:.1f} s after the save" if since_save_s is not None else ""
    return f"run {n}: {what} ({end}, {att.duration_s:.1f} s{after})"


def watch(given: Path | str, options: ReplayOptions, progress: Progress, say: Callable[[str], None],
          stop: Callable[[], bool] = lambda: False, engine: Engine | None = None) -> int:
    """Run once, then again on every change to options.workdir, until `stop()` (or Ctrl-C). The
    exit code of the last run: 0 as recorded, 1 otherwise."""
    assert options.workdir is not None
    directory = Path(options.workdir)
    replayer = Replayer(options, progress, engine=engine)
    try:
        capsule, plan = Loader(options, replayer.settings).load(given)
        expected = expected_of(capsule)
        image = replayer.image(plan)
        say(f"watching {directory}: each saved change runs the command again (Ctrl-C ends)")
        saves = changes(directory, stop, snapshot(directory))  # a change saved during a run counts too
        att = _once(replayer, plan, image, expected)
        say(verdict_line(1, expected, att, None))
        try:
            for n, saved in enumerate(saves, 2):
                att = _once(replayer, plan, image, expected)
                say(verdict_line(n, expected, att, time.time() - saved))
        except KeyboardInterrupt:  # how a watch ends: the answer is the last run's, not "interrupted"
            say("stopped watching")
        return 0 if att.classification == "recorded" else 1
    finally:
        replayer.close()


def _once(replayer: Replayer, plan: Plan, image: BuiltImage, expected: Expected) -> Attempt:
    attempts, _ = replayer.attempts(plan, image, expected, 1, label_steps=False)
    return attempts[0]
