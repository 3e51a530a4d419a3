"""`replay worker`: a Celery worker on a machine with a Docker engine, taking the farm's
work (`replay farm run --executor celery`) from a Redis broker."""
from __future__ import annotations

import os
from typing import Annotated

import typer

from ..errors import UsageError
from .console import err


def register(app: typer.Typer) -> None:
    app.command("worker")(worker_cmd)


def worker_cmd(
    broker: Annotated[str, typer.Option("--broker", envvar="REPLAY_BROKER",
                                        help="The Redis broker: redis://HOST:PORT/DB.")] = "redis://127.0.0.1:6379/0",
    concurrency: Annotated[int, typer.Option("--concurrency", "-c", min=0,
                                             help="Tasks at once (0: the number of cores).")] = 0,
    heartbeat: Annotated[float, typer.Option("--heartbeat", envvar="REPLAY_WORKER_HEARTBEAT", min=0.2,
                                             help="Seconds between lease refreshes of each task held.")] = 10.0,
    lease: Annotated[float, typer.Option("--lease", envvar="REPLAY_WORKER_LEASE", min=1.0,
                                         help="Seconds a task's lease lasts without a heartbeat.")] = 30.0,
    name: Annotated[str | None, typer.Option("--name", help="This worker's node name (default replay-PID@HOST).")] = None,
    loglevel: Annotated[str, typer.Option("--loglevel", help="Celery's log level.")] = "INFO",
) -> None:
    """Run attempts for farms on other machines until stopped: exit 2 bad usage, 3 no engine or broker."""
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
                     "--hostname", node, "--queues", QUEUE, "--loglevel", loglevel,
                     "--without-gossip", "--without-mingle"])
