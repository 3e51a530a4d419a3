"""`replay worker`: a Celery worker on a machine with a Docker engine, taking the farm's
work (`replay farm run --executor celery`) from a Redis broker."""
from __future__ import annotations

import os

from ..commands.spec import Args
from ..errors import UsageError
from .console import err


def worker(a: Args) -> int:
    """Run attempts for farms on other machines until stopped."""
    broker, concurrency, heartbeat, lease, name = a.broker, a.concurrency, a.heartbeat, a.lease, a.name
    from ..extras import require

    require("workers", "replay worker")
    import redis

    from ..engine import DockerEngine
    from ..workers.app import QUEUE, make_app
    from ..workers.dispatch import BrokerUnavailable
    from ..workers.keys import check_broker_url, redacted

    if lease <= heartbeat:
        raise UsageError(f"--lease {lease} must be longer than --heartbeat {heartbeat}")
    try:
        check_broker_url(broker)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    DockerEngine()  # no engine: one line, exit 3, before any task is taken
    app = make_app(broker, heartbeat, lease)
    try:
        redis.Redis.from_url(broker, socket_timeout=10).ping()
    except redis.RedisError as exc:
        raise BrokerUnavailable(f"broker {redacted(broker)} does not answer ({exc})") from None
    node = name or f"replay-{os.getpid()}@{os.uname().nodename}"
    err.print(f"replay: worker {node} on {redacted(broker)}, {concurrency or os.cpu_count()} at once", markup=False)
    app.worker_main(["worker", "--concurrency", str(concurrency or os.cpu_count() or 1), "--pool", "prefork",
                     "--hostname", node, "--queues", QUEUE, "--loglevel", a.loglevel,
                     "--without-gossip", "--without-mingle"])
    return 0
