"""One console for all output: reports on stdout, progress and errors on stderr."""
from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

from rich.console import Console

from ..textsafe import shown

ERROR_LIMIT = 400  # an error is one line; CapsuleError cuts its own parts to ~300

def _width() -> int | None:
    """Reports are wide tables: give them room when not on a terminal (CI logs, files)."""
    if sys.stdout.isatty():
        return None
    return int(os.environ.get("COLUMNS", "140"))


out = Console(highlight=False, soft_wrap=True, width=_width(), emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def print_json(data: Any) -> None:
    """Machine output: plain JSON on stdout, never decorated."""
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    # A lone surrogate (a capsule's "\ud800") has no UTF-8 form: write it back as the JSON escape it came from.
    sys.stdout.write(_LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n")
    sys.stdout.flush()


def error_line(message: str) -> None:
    """One line on stderr, whatever the message holds (capsule text is escaped and cut)."""
    err.print(f"replay: error: {shown(message, ERROR_LIMIT)}", markup=False, emoji=False, highlight=False)
