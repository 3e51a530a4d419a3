"""replay's progress lines on stderr: a step naming the capsule's argv (the plan's title) shows
its controls escaped, as every terminal writer does (textsafe)."""
from __future__ import annotations

import io

from rich.console import Console

from runner.replay.progress import Progress


def test_a_step_naming_hostile_argv_is_escaped() -> None:
    console = Console(file=io.StringIO(), width=200, color_system=None)
    progress = Progress(console)
    with progress.step("build image for twin node \x1b]0;owned\x07 \u202ej.txt"):
        pass
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert "\\x1b]0;owned\\x07 \\u202ej.txt" in out and not set(out) & set("\x1b\x07\u202e")
