"""`--keep`: which attempt's container stays once the replay ends, stopped, its filesystem as the run
left it: the first that ended as recorded, or, when none did, the last. Every attempt of a replay
with --keep is made keepable (labelled KEPT_LABEL, its plan under PLAN_LABEL); the others are removed
as soon as another takes their place, and `replay gc` removes the kept one (gc.py)."""
from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass

from ..build.plan import Plan
from ..build.plancodec import plan_to_json
from ..engine import KEPT, KEPT_LABEL, PLAN_LABEL, Engine
from ..verdict.judge import Attempt

SHORT = 12  # the id as shown, and as `replay shell --kept` takes it (any unique prefix of it works)


@dataclass(frozen=True)
class Kept:
    """The kept container, and the one command that enters it."""

    id: str
    command: str


def enter_command(container: str) -> str:
    return f"replay shell --kept {container[:SHORT]}"


def keep_labels(plan: Plan) -> tuple[tuple[str, str], ...]:
    """A keepable container's labels: the plan it ran, as JSON (validated again when read back),
    without its source: `shell --kept` builds nothing, and a --repo URL may carry a token, a
    --patch or the diff text a secret; labels show in `docker inspect` and `docker ps`."""
    shown = dataclasses.replace(plan, source=None)
    return (KEPT_LABEL, KEPT), (PLAN_LABEL, json.dumps(plan_to_json(shown), sort_keys=True, separators=(",", ":")))


class Keeper:
    """Offered each attempt's stopped container in turn (from parallel trials too); keeps one."""

    def __init__(self, engine: Callable[[], Engine]) -> None:
        self._engine = engine
        self._lock = threading.Lock()
        self._container: str | None = None
        self._final = False  # one that ended as recorded: no later attempt replaces it

    def offer(self, container: str, attempt: Attempt) -> None:
        with self._lock:
            if self._final:
                drop: str | None = container
            else:
                drop, self._container = self._container, container
                self._final = attempt.classification == "recorded"
        if drop is not None:
            self._engine().stop(drop)  # stops and removes it

    @property
    def container(self) -> str | None:
        """The kept container's full id."""
        return self._container

    @property
    def kept(self) -> Kept | None:
        return Kept(self._container[:SHORT], enter_command(self._container)) if self._container else None
