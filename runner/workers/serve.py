"""`replay worker`, the use case: checked settings, an engine and a broker that answer, then a Celery
worker taking the farm's work until stopped."""
from __future__ import annotations

import os
from collections.abc import Callable

from ..errors import UsageError


def serve(broker: str, concurrency: int, heartbeat: float, lease: float, name: str | None, loglevel: str,
          say: Callable[[str], None]) -> None:
    """Exit 2 for bad settings and 3 without an engine or a broker, each before any task is taken."""
    import redis

    from ..engine import DockerEngine
    from .app import QUEUE, make_app
    from .dispatch import BrokerUnavailable
    from ..secretrules import mask_url
    from .taskkeys import check_broker_url

    if lease <= heartbeat:
        raise UsageError(f"--lease {lease} must be longer than --heartbeat {heartbeat}")
    try:
        check_broker_url(broker)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    DockerEngine()  # no engine: one line, exit 3
    app = make_app(broker, heartbeat, lease)
    try:
        redis.Redis.from_url(broker, socket_timeout=10).ping()
    except redis.RedisError as exc:
        raise BrokerUnavailable(f"broker {mask_url(broker)} does not answer ({exc})") from None
    node = name or f"replay-{os.getpid()}@{os.uname().nodename}"
    cores = concurrency or os.cpu_count() or 1
    say(f"worker {node} on {mask_url(broker)}, {cores} at once")
    app.worker_main(["worker", "--concurrency", str(cores), "--pool", "prefork", "--hostname", node,
                     "--queues", QUEUE, "--loglevel", loglevel, "--without-gossip", "--without-mingle"])
