"""Which plans share an image, and each image built once: the one image key and the one
build-once cache that replay, the farm, bisect and the workers use (a built image's tag is its
context's digest: engine/builders.context_digest).

A plan field that reaches only `docker run` (env, TZ, argv, the network, recorded HTTP calls,
clock and random values) or only the report (title, fidelity rows, notes) is declared so where
the field is (plan.py: `field(metadata=RUN_TIME)`); two plans that differ only there give the
same image, so one image serves both, each member still running with its own plan.
"""
from __future__ import annotations

import dataclasses
import hashlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

from .plan import Plan

T = TypeVar("T")


def image_key(plan: Plan) -> str:
    """The same for every plan whose image is the same."""
    blank: dict[str, Any] = {f.name: _empty(f) for f in dataclasses.fields(plan) if f.metadata.get("stage") == "run"}
    # a runtime reaches the image by name, version and source; how it was chosen is the report's
    blank["runtimes"] = tuple((r.name, r.version, r.source) for r in plan.runtimes)
    neutral = dataclasses.replace(plan, **blank)
    return hashlib.sha256(repr(neutral).encode()).hexdigest()[:24]


def _empty(f: dataclasses.Field[Any]) -> object:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return "" if f.type in ("str", str) else ()


Made = Callable[[Plan, Any, float], None]  # (plan, None before / the image or the error after, seconds)


class ImageBank(Generic[T]):
    """Each distinct image made once, however many plans (and threads) ask for it; a failed build
    is remembered too, so its group fails once, not once per member. `still_there`: an image made
    before is checked again (a worker's engine may have lost it) and made anew when gone; then a
    failure is not remembered either (the next task may find the mirror back)."""

    def __init__(self, make: Callable[[Plan], T], on_build: Made | None = None,
                 still_there: Callable[[T], bool] | None = None) -> None:
        self._make_one, self.on_build, self._still_there = make, on_build, still_there
        self._lock = threading.Lock()
        self._futures: dict[str, Future[T]] = {}

    def get(self, plan: Plan) -> T:
        """The plan's image; one this call did not make says so (built=False)."""
        image, made = self.fetch(plan)
        return image if made else _reused(image)

    def fetch(self, plan: Plan) -> tuple[T, bool]:
        """The plan's image as it was made, and whether this call made it."""
        key = image_key(plan)
        with self._lock:
            fut = self._futures.get(key)
            if fut is not None and self._still_there is not None and fut.done() and \
                    (fut.exception() is not None or not self._still_there(fut.result())):
                fut = None
            owner = fut is None
            if owner:
                fut = self._futures[key] = Future()
        assert fut is not None
        if owner:
            self._make(plan, fut)
        return fut.result(), owner

    def _make(self, plan: Plan, fut: Future[T]) -> None:
        tell = self.on_build or (lambda *_: None)
        tell(plan, None, 0.0)
        start = time.monotonic()
        try:
            image = self._make_one(plan)
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
                   if f.done() and f.exception() is None and getattr(f.result(), "built", False))


def _reused(image: T) -> T:
    """An image a caller did not make itself: this call built nothing."""
    if dataclasses.is_dataclass(image) and getattr(image, "built", False):
        return dataclasses.replace(image, built=False)  # type: ignore[type-var]
    return image
