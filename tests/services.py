"""What tests that start a real service share: a free loopback port, and the one rule for a
missing service (a failure in CI, never a skip there; a skip on a developer's machine)."""
from __future__ import annotations

import functools
import os
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NoReturn

import pytest


def in_ci() -> bool:
    return os.environ.get("REPLAY_REQUIRE_ENGINE") == "1" or bool(os.environ.get("CI"))


def missing(why: str) -> NoReturn:
    """A test's service is not here: fail in CI (scripts/setup installs it), skip elsewhere."""
    if in_ci():
        pytest.fail(why)
    pytest.skip(f"{why} (set REPLAY_REQUIRE_ENGINE=1 to fail instead)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(what: str, check: Callable[[], Any], timeout_s: float = 120.0,
               detail: Callable[[], str] = lambda: "") -> Any:
    """Poll an event (a port answering, a process, a container) until it holds; its value, or a
    failure naming what did not happen (and `detail()`, e.g. a log tail)."""
    deadline = time.monotonic() + timeout_s
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout_s:.0f} s\n{detail()}".rstrip())
        time.sleep(0.1)  # the poll's pace, not a wait standing in for the event


def dribble(handler: Any, stop: Any, every_s: float) -> None:
    """An http.server handler's 200 whose body never ends: a byte every `every_s` (under any socket
    timeout), until `stop` (a threading.Event) is set or the client goes away."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.end_headers()
    try:
        while not stop.wait(every_s):
            handler.wfile.write(b" ")
            handler.wfile.flush()
    except OSError:  # the client is gone
        pass


class _QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


def static_server(directory: Path) -> AbstractContextManager[str]:
    """`http_server` serving the files under `directory`, without a log line per request; its base URL."""
    return http_server(functools.partial(_QuietFiles, directory=str(directory)))  # type: ignore[arg-type]


@contextmanager
def http_server(handler: type[BaseHTTPRequestHandler], host: str = "127.0.0.1") -> Iterator[str]:
    """A real threading HTTP server with `handler` on a free port of `host` for the block; its base URL."""
    server = ThreadingHTTPServer((host, 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


# Chromium, headless, as the farm's HTML tests look at its report
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
         "--hide-scrollbars", "--disable-background-networking", "--disable-component-update", "--no-pings",
         "--disable-sync")


def browse(chromium: str, page: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # A profile of its own: parallel test runs never share Chromium's singleton lock.
    run = subprocess.run([chromium, *FLAGS, f"--user-data-dir={tmp / 'profile'}", *args, page.as_uri()],
                         capture_output=True, text=True, timeout=180, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    return run
