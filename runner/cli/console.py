"""One console for all output: reports on stdout, progress and errors on stderr."""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

from ..codec import envelope
from ..commands.outputs import Answer, Screen
from ..textsafe import json_text, shown

ERROR_LIMIT = 1000  # a backstop: an error is one line; CapsuleError cuts a capsule's values itself

def _width() -> int | None:
    """Reports are wide tables: give them room when not on a terminal (CI logs, files)."""
    if sys.stdout.isatty():
        return None
    return int(os.environ.get("COLUMNS", "140"))


def help_width() -> int:
    """Help and topics: the terminal's width, or COLUMNS, or 80 (as typer's own help in a pipe)."""
    if sys.stdout.isatty():
        return out.width
    try:
        return max(40, int(os.environ.get("COLUMNS", "80")))
    except ValueError:
        return 80


out = Console(highlight=False, soft_wrap=True, width=_width(), emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def configure(color: str = "auto", quiet: bool = False) -> None:
    """The global options of a command: --color (auto, always, never; --no-color and the NO_COLOR
    variable are never) for both consoles and for the help typer prints; --quiet is read by each
    command's progress (nothing to set here)."""
    from typer import rich_utils

    from rich.color import ColorSystem

    if color == "auto" and os.environ.get("NO_COLOR"):  # no-color.org: set and not empty is --no-color
        color = "never"
    force = {"always": True, "never": False}.get(color)
    for console in (out, err):
        console.no_color = color == "never"
        if force is not None:  # rich decided both when the console was made: decide them again
            console._force_terminal = force
            console._color_system = ColorSystem.STANDARD if force else None
    if color == "never":
        rich_utils.COLOR_SYSTEM = None
    elif color == "always":
        rich_utils.FORCE_TERMINAL = True


def refresh() -> None:
    """Read the width again for this command (a caller may have set COLUMNS since import)."""
    width = _width()
    if width is not None:
        out.width = width


def print_json(data: Any) -> None:
    """Machine output: plain JSON on stdout, never decorated; indented for a terminal, one
    line for a pipe or a file (what reads it is a program: the standard library's fast
    encoder writes 40 MB of a 10,000-capsule report in a quarter of the time)."""
    # C1, bidi, U+2028/9 escaped (textsafe's JSON rule); a lone surrogate (a capsule's "\ud800"),
    # which has no UTF-8 form, too: written back as the JSON escape it came from.
    sys.stdout.write(json_text(data, indent=2 if sys.stdout.isatty() else None) + "\n")
    sys.stdout.flush()


def emit(command: str, answer: Answer, as_json: bool, full: bool = False, quiet: bool = False) -> int:
    """The one renderer: a command's typed result as the --json envelope (its data) or as its text
    view; then the error it ends with, if any (with --json instead of the result). Its exit code."""
    problem = answer.problem()
    if as_json and problem is None:
        print_json(envelope(command, answer.exit_code, answer.data()))
    elif not as_json:
        answer.show(Screen(out, err, full=full, quiet=quiet))
    if problem is not None:
        raise problem
    return answer.exit_code


def error_line(message: str) -> None:
    """One line on stderr, whatever the message holds (capsule text is escaped and cut)."""
    err.print(f"replay: error: {shown(message, ERROR_LIMIT)}", markup=False, emoji=False, highlight=False)


@contextmanager
def _download_bar(name: str, total: int | None) -> Iterator[Callable[[int], None]]:
    """One rich progress bar on stderr for a download (a 44 MB runtime); gone when done."""
    columns = (TextColumn("replay: download {task.description}"), BarColumn(), DownloadColumn(),
               TransferSpeedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task(name, total=total)
        yield lambda n: bar.advance(task, n)


def install_meter(enabled: bool) -> None:
    """Download progress for people on a terminal: none with --quiet or --json, none when
    stderr is not a terminal (CI logs would fill with redraws)."""
    meter = _download_bar if enabled and err.is_terminal else None
    if meter is None and "runner.build.sources.providers.registry_http" not in sys.modules:
        return  # nothing that downloads is loaded, so none holds a meter (and this command need not load it)
    from ..build.sources.providers import registry_http

    registry_http.set_meter(meter)
