"""`replay worker`: a Celery worker on a machine with a Docker engine, taking the farm's
work (`replay farm run --executor celery`) from a Redis broker."""
from __future__ import annotations

from ..commands.arguments import WorkerArgs
from .console import err


def worker(a: WorkerArgs) -> int:
    from ..extras import require

    require("workers", "replay worker")  # before the extra's modules are imported
    from ..workers.serve import serve

    serve(a.broker, a.concurrency, a.heartbeat, a.lease, a.name, a.loglevel,
          lambda line: err.print(f"replay: {line}", markup=False))
    return 0
