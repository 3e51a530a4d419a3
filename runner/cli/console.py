"""One console for all output: reports on stdout, progress and errors on stderr."""
from __future__ import annotations

import json
import os
import sys
from typing import Any

from rich.console import Console

from ..envelope import envelope

def _width() -> int | None:
    """Reports are wide tables: give them room when not on a terminal (CI logs, files)."""
    if sys.stdout.isatty():
        return None
    return int(os.environ.get("COLUMNS", "140"))


out = Console(highlight=False, soft_wrap=True, width=_width(), emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def print_json(data: Any) -> None:
    """Machine output: plain JSON on stdout, never decorated."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def print_result(command: str, exit_code: int, result: Any) -> None:
    """A command's --json output: its result in the one envelope."""
    print_json(envelope(command, exit_code, result))


def error_line(message: str) -> None:
    err.print(f"replay: error: {message}", markup=False, emoji=False)
