"""The farm's progress on stderr: capsules done / total, builds, ETA (one line per event,
readable in a CI log as on a terminal)."""
from __future__ import annotations

import threading
import time
from typing import Any

from ..textsafe import escaped
from .records import CapsuleResult


class FarmProgress:
    def __init__(self, console: Any | None = None) -> None:
        self._console = console
        self._lock = threading.Lock()
        self.total = 0
        self.done = 0
        self.images = 0
        self.builds_started = 0
        self._start = time.monotonic()
        self._done_here = 0  # capsules finished by this process (the ETA's basis; resumed ones excluded)

    def say(self, text: str) -> None:
        if self._console is not None:
            self._console.print(f"farm: {escaped(text)}", markup=False, highlight=False, emoji=False)

    def start(self, total: int, already: int) -> None:
        with self._lock:
            self.total, self.done = total, already
            self._start = time.monotonic()
        resumed = f", {already} already judged (resumed)" if already else ""
        self.say(f"planning {total - already} capsule(s){resumed}")

    def planned_images(self, images: int) -> None:
        with self._lock:
            self.images = images
        self.say(f"{images} distinct image(s) to build or reuse")

    def build(self, plan: Any, outcome: Any, secs: float) -> None:
        """An image's build began (outcome None), ended (a BuiltImage) or failed (an exception)."""
        if outcome is None:
            with self._lock:
                self.builds_started += 1
                n = self.builds_started
            self.say(f"image {n}/{max(self.images, n)}: building for {plan.title}")
        elif isinstance(outcome, BaseException):
            self.say(f"image for {plan.title} failed after {secs:.1f}s: {_line(outcome)}")
        else:
            how = "built" if outcome.built else "found cached"
            self.say(f"image {outcome.ref} {how} in {secs:.1f}s")

    def capsule_done(self, result: CapsuleResult, replayed: bool = True) -> None:
        """`replayed`: judged from attempts (what the ETA extrapolates), not refused while planning."""
        with self._lock:
            self.done += 1
            self._done_here += int(replayed)
            line = (f"[{self.done}/{self.total}] {result.path}: {result.verdict}{_rate(result)}"
                    f"{_ref(result)}  ·  images {self.builds_started}/{self.images}  ·  ETA {self._eta()}")
        self.say(line)

    def _eta(self) -> str:
        left = self.total - self.done
        if left <= 0:
            return "0s"
        if self._done_here == 0:
            return "?"
        secs = (time.monotonic() - self._start) / self._done_here * left
        return f"{int(secs // 60)}m{int(secs % 60):02d}s" if secs >= 60 else f"{secs:.0f}s"


def _line(exc: BaseException) -> str:
    line = getattr(exc, "line", None)
    return str(line() if callable(line) else exc).splitlines()[0] if str(exc) else type(exc).__name__


def _rate(r: CapsuleResult) -> str:
    if r.verdict in ("broken", "infra-error"):
        return f" ({r.reason})"
    return f" ({r.rate.failed}/{r.rate.runs})" if r.rate else ""


def _ref(r: CapsuleResult) -> str:
    return f"; at {r.ref}: {r.ref_verdict}" if r.ref_verdict else ""
