"""The Redis keys the coordinator and the workers share, beside Celery's own queue.

Celery delivers a task; these say what became of it. A worker sets `taken` and a
`lease` when it receives a task and refreshes the lease while it holds it; the answer
goes to `done` (and a push on `notify` wakes the coordinator). The coordinator marks
`sent` once the broker has the message, so a coordinator resumed after a kill
collects a task it already sent instead of sending it again.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..secretrules import mask_url

PREFIX = "replay:task:"
KEEP_S = 7 * 24 * 3600  # answers and markers outlive a night (and its resume), then go
DEFAULT_HEARTBEAT_S = 10.0
DEFAULT_LEASE_S = 30.0


@dataclass(frozen=True)
class TaskKeys:
    task_id: str

    def _k(self, what: str) -> str:
        return f"{PREFIX}{self.task_id}:{what}"

    @property
    def lease(self) -> str:
        return self._k("lease")

    @property
    def taken(self) -> str:
        return self._k("taken")

    @property
    def done(self) -> str:
        return self._k("done")

    @property
    def notify(self) -> str:
        return self._k("notify")

    @property
    def sent(self) -> str:
        return self._k("sent")


def check_broker_url(url: str) -> str:
    """Only Redis (the one broker tested); anything else is a usage error upstream."""
    if not re.match(r"^rediss?://[^\s]+$", url):
        raise ValueError(f"--broker {mask_url(url)}: a redis:// or rediss:// URL (redis://HOST:PORT/DB)")
    return url
