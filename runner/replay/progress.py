"""Steps with timings on stderr (never stdout: that is the report's).

REPLAY_PROGRESS=1 keeps them on stderr even with --json or --quiet: `replay mcp` runs each
tool as a `--json` child and turns these lines into MCP progress notifications."""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..textsafe import escaped

FORCE_ENV = "REPLAY_PROGRESS"


class Progress:
    def __init__(self, console: Any | None = None, quiet: bool = False) -> None:
        self._console = console
        self._quiet = quiet and os.environ.get(FORCE_ENV) != "1"
        self.timings: list[tuple[str, float]] = []
        self._lock = threading.Lock()

    def say(self, text: str) -> None:
        if not self._quiet and self._console is not None:
            self._console.print(f"replay: {escaped(text)}", markup=False, highlight=False, emoji=False)

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        start = time.monotonic()
        self.say(f"{name} …")
        try:
            yield
        finally:
            took = time.monotonic() - start
            with self._lock:
                self.timings.append((name, took))
            self.say(f"{name} done in {took:.1f}s")
