"""Where a capsule's attempts run: the seam between a night and the machines that do the work.

A night decides *what* to run (which capsule, which side, how many attempts, each
attempt recorded in the history before it starts and when it ends); an executor
decides *where*. `LocalExecutor` is the farm as it always was: images built once in
this process (the image service, replay/imageservice.py), attempts on this machine's engine, one at a time per
thread. `runner.workers.CeleryExecutor` sends the same unit of work as a Celery task
to `replay worker` processes on other Docker hosts and returns the same records, so
the history cannot tell the two apart.

The unit of work is a `Work`: the portable plan, what the attempts are judged
against, and the ids of the attempts, made (and recorded) by the coordinator before
it is sent. An attempt's id is `<task id>-<n>` for remote work, so a coordinator
that was killed finds, from the history alone, which task its unfinished attempts
were sent in and collects that task instead of sending it again.
"""
from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ..errors import ReplayError
from ..verdict.judge import Attempt, Expected
from .records import FarmVerdict, Side

if TYPE_CHECKING:
    from ..build.plan import Plan
    from ..replay import BuiltImage, Replayer
    from ..replay.imageservice import ImageService


@dataclass(frozen=True)
class Work:
    """Attempts of one side of one capsule, to run in fresh containers of the plan's image."""

    task_id: str
    night_id: str
    capsule_id: str
    side: Side
    plan: Plan
    expected: Expected
    attempt_ids: tuple[str, ...]
    timeout: float
    memory: str


@dataclass(frozen=True)
class Done:
    """What came back: each attempt by its id (a late duplicate carries the same ids)."""

    attempts: tuple[tuple[str, Attempt], ...]
    image_digest: str | None = None
    built: bool = False  # this work built the image (it was not in that engine yet)


class ImageFailed(Exception):
    """The plan's image could not be had: the capsule is judged by `cause` (broken or infra-error),
    and at --ref the REF verdict is inconclusive."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


class RemoteFailure(ReplayError):
    """A worker could not run the work, judged there as broken or infra-error (with why)."""

    kind = "environment"

    def __init__(self, verdict: FarmVerdict, reason: str) -> None:
        super().__init__(reason)
        self.verdict = verdict
        self.reason = reason

    def line(self) -> str:
        return self.reason


class Executor(Protocol):
    # attempts per unit of work at most (0: as many as the night wants at once)
    batch: int
    # unfinished attempts of a killed coordinator are collected, not abandoned
    resumable: bool
    # capsules sharing a planned image are sent one after another (else interleaved)
    together: bool

    def prebuild(self, plans: Sequence[Plan]) -> None: ...
    def ready(self, plan: Plan) -> None: ...
    def run(self, work: Work, resumed: bool = False) -> Done: ...
    def images(self) -> int: ...
    def builds(self) -> int: ...
    def clear_leftovers(self) -> None: ...
    def interrupt(self) -> None: ...
    def close(self) -> None: ...


def new_task_id() -> str:
    return uuid.uuid4().hex


def attempt_ids(task_id: str, count: int) -> tuple[str, ...]:
    return tuple(f"{task_id}-{n}" for n in range(1, count + 1))


def task_of(attempt_id: str) -> str | None:
    """The task an attempt was sent in (None for a local attempt: a plain uuid)."""
    return attempt_id.rsplit("-", 1)[0] if "-" in attempt_id else None


class LocalExecutor:
    """Today's farm: the bank builds each distinct image once, attempts run on this engine."""

    batch = 1  # one attempt, then the night records it, then the next: a kill loses at most one
    resumable = False  # an attempt a kill cut short has no outcome and never counts
    together = False  # parallel threads start on different images first

    def __init__(self, replayer: Replayer, bank: ImageService) -> None:
        self.replayer, self.bank = replayer, bank
        self._digests: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def prebuild(self, plans: Sequence[Plan]) -> None:
        for plan in plans:
            self.image(plan)

    def image(self, plan: Plan) -> BuiltImage | None:
        try:
            return self.bank.get(plan)
        except Exception:
            return None  # remembered by the bank: ready() raises it for each member of the group

    def ready(self, plan: Plan) -> None:
        self._image(plan)

    def _image(self, plan: Plan) -> BuiltImage:
        try:
            return self.bank.get(plan)
        except Exception as exc:
            raise ImageFailed(exc) from exc

    def run(self, work: Work, resumed: bool = False) -> Done:
        image = self._image(work.plan)
        atts = tuple((aid, self.replayer.attempt(work.plan, image, work.expected)) for aid in work.attempt_ids)
        return Done(atts, self._digest(image))

    def _digest(self, image: BuiltImage) -> str | None:
        with self._lock:
            if image.ref not in self._digests:
                try:
                    self._digests[image.ref] = self.replayer.engine.image_id(image.ref)
                except Exception:
                    self._digests[image.ref] = None
            return self._digests[image.ref]

    def images(self) -> int:
        return self.bank.images

    def builds(self) -> int:
        return self.bank.built

    def clear_leftovers(self) -> None:
        """The containers a killed run of this night left behind."""
        self.replayer.engine.cleanup(self.replayer.label)

    def interrupt(self) -> None:
        """Stop the running attempts now: their containers go."""
        self.replayer.engine.cleanup(self.replayer.label)

    def close(self) -> None:
        self.replayer.close()
