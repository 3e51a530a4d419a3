"""The coordinator's side: `farm run --executor celery` sends each unit of work as a task
and waits for its answer, holding its own lease on it.

A task is sent once and marked `sent`; its answer is read from its own key. While it
waits, the coordinator watches the task's lease: a task some worker took (`taken`)
whose lease lapsed (no heartbeat for `lease_s`) and that has no answer (read after the
lease: a finished task's lease lapses too) belongs to a worker that vanished, and is sent again under the same id and the same attempt ids: whichever delivery answers
first is recorded, a late one changes nothing. A coordinator resumed after a kill
collects the tasks it had sent (by their ids) and sends only those it had not.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import redis

from ..config import settings as load_settings
from ..build.sources.content import content_store
from ..errors import EngineUnavailable, UsageError
from ..farm.executor import Done, ImageFailed, RemoteFailure, Work
from ..build.images import image_key
from .app import TASK_NAME, make_app, redis_of
from ..secretrules import mask_url
from .taskkeys import KEEP_S, TaskKeys, check_broker_url
from .message import done_from_json, work_to_json

if TYPE_CHECKING:
    from ..build.plan import Plan

BUILD_ALLOWANCE_S = 1800.0  # a task's time limit: its attempts' timeouts plus one cold build
POLL_S = 1.0  # how long one wait for an answer blocks before the lease is looked at again


class Interrupted(Exception):
    """The night stopped while this task was out: it keeps running, a resume collects it."""


class BrokerUnavailable(EngineUnavailable):
    """The broker does not answer (exit 3): nothing was sent."""


class CeleryExecutor:
    batch = 0  # the whole round of attempts in one task: one image check, one world, one answer
    resumable = True
    together = True

    def __init__(self, broker: str, say: Callable[[str], None] = lambda _: None) -> None:
        try:
            check_broker_url(broker)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        self.app = make_app(broker)
        self.say = say
        self.redis: redis.Redis = redis_of(self.app)
        try:
            self.redis.ping()
        except redis.RedisError as exc:
            raise BrokerUnavailable(f"broker {mask_url(broker)} does not answer ({exc})") from None
        self.store = content_store(load_settings().cache_dir)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._images: set[str] = set()
        self._built: set[str] = set()
        self._canon: dict[str, Plan] = {}

    def prebuild(self, plans: Sequence[Plan]) -> None:
        """Nothing is built here: each worker builds the images it lacks, in its own engine. Each
        group's first plan is the one its image is built from, on every worker (as the local bank
        does), so workers sharing an engine find one another's image and digests agree."""
        with self._lock:
            for plan in plans:
                self._canon.setdefault(image_key(plan), plan)

    def ready(self, plan: Plan) -> None:
        with self._lock:
            self._images.add(image_key(plan))
            self._canon.setdefault(image_key(plan), plan)

    def run(self, work: Work, resumed: bool = False) -> Done:
        keys = TaskKeys(work.task_id)
        if not (resumed and (self.redis.exists(keys.sent) or self.redis.exists(keys.done))):
            self._send(work, keys)
        done, failure = done_from_json(self._answer(work, keys))
        if failure is not None:
            err = RemoteFailure(failure.verdict, failure.reason)
            raise ImageFailed(err) if failure.stage == "image" else err
        if done.built:
            with self._lock:
                self._built.add(image_key(work.plan))
        return done

    def _send(self, work: Work, keys: TaskKeys) -> None:
        soft = work.timeout * len(work.attempt_ids) + BUILD_ALLOWANCE_S
        self.redis.delete(keys.taken)  # a re-send is taken anew (or the lease check would fire at once)
        with self._lock:
            image_plan = self._canon.get(image_key(work.plan), work.plan)
        self.app.send_task(TASK_NAME, args=[work_to_json(work, self.store, image_plan)], task_id=work.task_id,
                           soft_time_limit=soft, time_limit=soft + 120, argsrepr="(work)", kwargsrepr="{}",
                           retry=True, retry_policy={"max_retries": 5, "interval_start": 0.5,
                                                     "interval_step": 1.0, "interval_max": 5.0})
        self.redis.set(keys.sent, "1", ex=KEEP_S)

    def _answer(self, work: Work, keys: TaskKeys) -> Any:
        while True:
            if self._stop.is_set():
                raise Interrupted(work.task_id)
            raw = self.redis.get(keys.done)
            if raw is not None:
                return json.loads(raw)
            if self.redis.exists(keys.taken) and not self.redis.exists(keys.lease):
                # read again once the lease is seen gone: a worker records its answer before its
                # lease can lapse, so an answer set while this thread was held up shows here
                raw = self.redis.get(keys.done)
                if raw is not None:
                    return json.loads(raw)
                self.say(f"task {work.task_id[:12]} ({work.capsule_id[:12]}): its worker vanished, sent again")
                self._send(work, keys)
            self.redis.blpop([keys.notify], timeout=POLL_S)

    def images(self) -> int:
        return len(self._images)

    def builds(self) -> int:
        return len(self._built)

    def clear_leftovers(self) -> None:
        """Nothing here: a worker clears what an earlier delivery of a task left before running it."""

    def interrupt(self) -> None:
        """Stop waiting: the tasks out stay with the workers, and a resume collects their answers."""
        self._stop.set()

    def close(self) -> None:
        self._stop.set()
        self.redis.close()
