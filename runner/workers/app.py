"""The Celery app both sides use: how tasks are delivered, the task, the workers' heartbeat.

Nothing lost, nothing twice: a task is acknowledged only once it has run
(`acks_late`), handed back when the process running it dies
(`task_reject_on_worker_lost`), and a process reserves one task at a time (prefetch
multiplier 1), so a dead worker holds no queue of others' work. Redis hands back a
dead *worker's* unacknowledged tasks only after its visibility timeout, so the
coordinator does not wait for that: each worker refreshes a lease on every task it
holds (every `heartbeat_s`, valid `lease_s`), and the coordinator re-sends a task
whose lease lapsed (dispatch.py). The answer is kept under the task's id, so a late
second delivery returns it without running anything again.

A lease names its holder (the worker's node name) and is only ever taken when free or
refreshed by its holder, so a second delivery of a task another live worker holds is
skipped, not run beside it; a task runs again only once its holder's lease lapsed (the
holder died). Each delivery says in the worker's log what became of it (ran, skipped)
*before* its answer is visible: whoever reads the answer finds the log line written.
"""
from __future__ import annotations

import json
import threading
from typing import Any

import redis
from celery import Celery, Task, signals
from celery.exceptions import SoftTimeLimitExceeded
from celery.utils.log import get_task_logger

from .taskkeys import DEFAULT_HEARTBEAT_S, DEFAULT_LEASE_S, KEEP_S, TaskKeys

TASK_NAME = "replay.work"
QUEUE = "replay"
MAX_RETRIES = 3  # an infrastructure failure (engine, mirror) is retried with backoff, then reported


def make_app(broker: str, heartbeat_s: float = DEFAULT_HEARTBEAT_S, lease_s: float = DEFAULT_LEASE_S) -> Celery:
    app = Celery("replay", broker=broker, set_as_current=False)
    app.conf.update(
        task_acks_late=True, task_reject_on_worker_lost=True, worker_prefetch_multiplier=1,
        task_ignore_result=True,  # answers go to the task's own key (taskkeys.py), read once by the coordinator
        task_serializer="json", accept_content=["json"], task_default_queue=QUEUE,
        broker_connection_retry_on_startup=True, worker_hijack_root_logger=False,
        worker_send_task_events=False, task_send_sent_event=False,
        # an unacked task of a vanished worker comes back after this anyway (the lease is faster)
        broker_transport_options={"visibility_timeout": 6 * 3600},
    )
    app.conf.replay_heartbeat_s = heartbeat_s
    app.conf.replay_lease_s = lease_s
    app.task(name=TASK_NAME, bind=True, max_retries=MAX_RETRIES, acks_late=True)(_work)
    return app


def redis_of(app: Celery) -> redis.Redis:
    client = getattr(app, "_replay_redis", None)
    if client is None:
        client = redis.Redis.from_url(str(app.conf.broker_url), socket_timeout=30, health_check_interval=30)
        app._replay_redis = client  # type: ignore[attr-defined]
    return client


_runtime: Any = None  # one WorkerRuntime per worker process, made after the fork
log = get_task_logger("replay.worker")

# Take the lease when it is free or already ours; never from another holder (atomic in Redis).
_TAKE = """local v = redis.call('GET', KEYS[1])
if v == false or v == ARGV[1] then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0"""


def _work(self: Task, message: dict[str, Any]) -> None:
    from .task import WorkerRuntime

    global _runtime
    task_id, holder = str(self.request.id), str(self.request.hostname)
    keys, r = TaskKeys(task_id), redis_of(self.app)
    if r.exists(keys.done):
        log.info("replay: task %s: its answer exists, this delivery skipped", task_id)
        _notify(r, keys)  # a late second delivery: the answer stands, nothing runs twice
        return
    if not take_lease(self.app, task_id, holder):
        other = r.get(keys.lease)
        log.info("replay: task %s: held by %s, which is alive: this delivery skipped", task_id,
                 other.decode(errors="replace") if isinstance(other, bytes) else other)
        return  # the holder answers; should it die, its lease lapses and the coordinator sends again
    if _runtime is None:
        _runtime = WorkerRuntime()
    try:
        answer = _runtime.handle(message, task_id)
    except SoftTimeLimitExceeded:  # the container went with the task's label (task.py)
        answer = _failed("infra-error", "the task outlived its time limit on the worker")
    except Exception as exc:  # never an exception without an answer: the coordinator would wait for one
        answer = _failed("infra-error", f"internal error on the worker: {type(exc).__name__}: {exc}")
    failure = answer.get("failure") or {}
    if failure.get("verdict") == "infra-error" and self.request.retries < MAX_RETRIES:
        log.info("replay: task %s: infrastructure failure, retried (%s)", task_id, failure.get("reason"))
        _release(r, keys, holder)  # whoever takes the retry takes the lease; none lapses meanwhile
        raise self.retry(countdown=2 ** (self.request.retries + 1))  # same id, same attempt ids
    log.info("replay: task %s: ran %d attempt(s), answer recorded", task_id, len(answer.get("attempts") or ()))
    r.set(keys.done, json.dumps(answer), ex=KEEP_S)
    _notify(r, keys)


def _failed(verdict: str, reason: str) -> dict[str, Any]:
    from .message import Failure, done_to_json

    return done_to_json(None, Failure("run", verdict, reason))  # type: ignore[arg-type]


def _notify(r: redis.Redis, keys: TaskKeys) -> None:
    r.rpush(keys.notify, "1")
    r.expire(keys.notify, KEEP_S)


# -- the heartbeat, in each worker's main process ----------------------------------------

def take_lease(app: Celery, task_id: str, holder: str) -> bool:
    """Take or refresh the task's lease for `holder`: False when another worker holds it."""
    r, keys = redis_of(app), TaskKeys(task_id)
    ms = int(float(app.conf.replay_lease_s) * 1000)
    if not r.eval(_TAKE, 1, keys.lease, holder, ms):
        return False
    r.set(keys.taken, "1", ex=KEEP_S)
    return True


def _release(r: redis.Redis, keys: TaskKeys, holder: str) -> None:
    """Our lease and the `taken` mark go: the task waits in the queue again, held by nobody."""
    if r.get(keys.lease) == holder.encode():
        r.delete(keys.lease, keys.taken)


def _received(sender: Any = None, request: Any = None, **_: Any) -> None:
    app = getattr(request, "task", None) and request.task.app
    if app is not None and getattr(request, "name", "") == TASK_NAME:
        take_lease(app, str(request.id), str(request.hostname))  # held elsewhere: the task itself skips


def _start_heartbeat(sender: Any = None, **_: Any) -> None:
    app = sender.app if sender is not None else None
    if app is None or not hasattr(app.conf, "replay_heartbeat_s"):
        return
    threading.Thread(target=_beat, args=(app,), name="replay-heartbeat", daemon=True).start()


signals.task_received.connect(_received, weak=False)
signals.worker_ready.connect(_start_heartbeat, weak=False)


def _beat(app: Celery) -> None:
    """Every task this worker holds (waiting in it or running) keeps its lease while it lives."""
    from celery.worker import state

    stop = threading.Event()
    while not stop.wait(float(app.conf.replay_heartbeat_s)):
        for req in list(state.reserved_requests) + list(state.active_requests):
            if getattr(req, "name", "") == TASK_NAME:
                try:
                    take_lease(app, str(req.id), str(req.hostname))
                except redis.RedisError:
                    pass  # the broker is away: the lease lapses and the coordinator re-sends
