"""`replay shell`, the use case: the replay image of a capsule, and bash in it with the recorded
environment set, under the same containment as an attempt."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

from .options import ReplayOptions
from .progress import Progress
from .replayer import Replayer


def open_shell(capsule: str, options: ReplayOptions, progress: Progress, say: Callable[[str], None]) -> int:
    """Build (or reuse) the image and run bash in it interactively; the shell's exit code."""
    replayer = Replayer(options, progress)
    try:
        _, plan = replayer.load(capsule)  # refused (exit 1) when it does not verify, unless allowed
        image = replayer.image(plan)
        spec = dataclasses.replace(replayer.run_spec(plan, image), argv=("bash",), tty=True, stdin_open=True)
        say(f"recorded command: {' '.join(plan.argv)}")
        return replayer.engine.interactive(spec)
    finally:
        replayer.close()
