"""Capsules that plan the same image share it: group by the plan with its run-time
fields neutralised, build each group's image once.

Two plans that differ only in what applies at `docker run` (env, TZ, argv, the
network, recorded HTTP calls, clock and random values) or in what only the report
reads (title, fidelity rows, notes, how a runtime's version was chosen) give the
same image, so one image serves both; each member still runs with its own plan.
"""
from __future__ import annotations

import dataclasses
import hashlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..build.plan import Plan
    from ..replay import BuiltImage

# Plan fields that never reach the image (runenv.py, attempts.py and the report read them).
RUN_TIME_FIELDS = ("title", "capsule_id", "argv", "env", "network", "allowed_hosts", "denied_hosts",
                   "http_calls", "http_ignore", "values", "clock_start", "fidelity", "notes")


def image_key(plan: Plan) -> str:
    """The same for every plan whose image is the same."""
    blank: dict[str, object] = {}
    for name in RUN_TIME_FIELDS:
        default = next(f for f in dataclasses.fields(plan) if f.name == name)
        blank[name] = _empty(default)
    # a runtime reaches the image by name, version and source; how it was chosen is the report's
    blank["runtimes"] = tuple((r.name, r.version, r.source) for r in plan.runtimes)
    neutral = dataclasses.replace(plan, **blank)  # type: ignore[arg-type]
    return hashlib.sha256(repr(neutral).encode()).hexdigest()[:24]


def _empty(f: dataclasses.Field[object]) -> object:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return "" if f.name in ("title", "capsule_id") else ()


class ImageBank:
    """Each distinct image built once, however many capsules (and threads) ask for it;
    a failed build is remembered too, so its group fails once, not once per member."""

    def __init__(self, build: Callable[[Plan], BuiltImage],
                 on_build: Callable[[Plan, BuiltImage | BaseException | None, float], None] | None = None) -> None:
        self._build = build
        self._on_build = on_build  # called before (with None) and after each build
        self._lock = threading.Lock()
        self._futures: dict[str, Future[BuiltImage]] = {}

    def get(self, plan: Plan) -> BuiltImage:
        key = image_key(plan)
        with self._lock:
            fut = self._futures.get(key)
            owner = fut is None
            if owner:
                fut = self._futures[key] = Future()
        assert fut is not None
        if owner:
            self._make(plan, fut)
        return fut.result()

    def _make(self, plan: Plan, fut: Future[BuiltImage]) -> None:
        tell = self._on_build or (lambda *_: None)
        tell(plan, None, 0.0)
        start = time.monotonic()
        try:
            image = self._build(plan)
        except BaseException as exc:  # KeyboardInterrupt too: waiters must not hang
            fut.set_exception(exc)
            tell(plan, exc, time.monotonic() - start)
            return
        fut.set_result(image)
        tell(plan, image, time.monotonic() - start)

    @property
    def images(self) -> int:
        """Distinct images asked for (built or found cached)."""
        return len(self._futures)

    @property
    def built(self) -> int:
        """Of those, images really built here (not already in the engine)."""
        return sum(1 for f in list(self._futures.values())
                   if f.done() and f.exception() is None and f.result().built)

