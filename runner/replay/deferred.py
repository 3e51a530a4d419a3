"""Cleanup that a signal must not cut short.

A Ctrl-C, SIGTERM or SIGHUP (the terminal closed) that arrives while replay removes what it made (the HTTP replay's
sidecar, its network, its iptables rule; the run's containers) would stop the removal
half-way and leave the rest behind. Inside `signals_deferred()` they wait (they
are blocked, not lost) and are delivered as soon as the block ends: the cleanup finishes,
then replay stops as it would have.
"""
from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_DEFERRED = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


@contextmanager
def signals_deferred() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _DEFERRED)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)  # a pending signal is delivered here
