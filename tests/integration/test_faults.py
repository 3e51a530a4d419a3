"""Faults a real machine makes: a package source that goes silent during the build (accepts
connections and never answers), or one that answers a byte a second for ever (no socket timeout
fires: REPLAY_BUILD_TIMEOUT stops the build).
replay gives up within a bounded time with one line naming the registry or the limit (exit 3) and
leaves no container, and no build, behind. (The engine restarting, crashing and filling its disk: test_engine_restart.py, on a
second engine of its own.)"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from runner.engine.protocol import OWNER_LABEL
from runner.providers.fetch import get

from .helpers import ROOT, twin_capsule, write_json

pytestmark = pytest.mark.integration

NODE = "22.23.3"  # the tz-clock example's: its download is cached already
GATEWAY = "172.17.0.1"  # the build containers reach the host here (the default bridge's gateway)
BOUND_S = 300  # npm in the build: 30 s socket timeout, one retry; plus the build itself on a loaded machine


UPSTREAM = "https://registry.npmjs.org"


def _registry(to_the_build: Any) -> Iterator[tuple[str, list[str], threading.Event]]:
    """A registry that answers replay's own look-ups on the host (forwarded to the real one) and hands
    the build's requests (npm's) to `to_the_build(handler, stop)`."""
    stop = threading.Event()
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if not self.headers.get("User-Agent", "").startswith("replay"):
                asked.append(self.path)
                to_the_build(self, stop)
                return
            try:
                body, status = get(UPSTREAM + self.path), 200
            except Exception:  # noqa: BLE001 - the upstream's failure is the client's 404
                body, status = b"{}", 404
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer((GATEWAY, 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://{GATEWAY}:{server.server_address[1]}", asked, stop
    stop.set()
    server.shutdown()
    server.server_close()


@pytest.fixture
def silent_registry() -> Iterator[tuple[str, list[str]]]:
    """The build's requests are accepted and never answered."""
    for url, silenced, _ in _registry(lambda handler, stop: stop.wait(600)):  # never a byte back
        yield url, silenced


HUNG_UP: list[str] = []  # the build's requests whose client went away (the dribbling registry's)


def _dribble(handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
    """A 200 whose body never ends: a byte a second, so no socket timeout ever fires."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.end_headers()
    try:
        while not stop.wait(1.0):
            handler.wfile.write(b" ")
            handler.wfile.flush()
    except OSError:  # the client is gone: the build was stopped
        HUNG_UP.append(handler.path)


@pytest.fixture
def dribbling_registry() -> Iterator[tuple[str, list[str]]]:
    HUNG_UP.clear()
    for url, asked, _ in _registry(_dribble):
        yield url, asked


def _containers(label: str) -> list[str]:
    out = subprocess.run(["docker", "ps", "-aq", "--filter", f"label={label}"], capture_output=True, text=True)
    return out.stdout.split()


def test_a_registry_that_never_answers_is_named_in_bounded_time(engine: Any, silent_registry: tuple[str, Any],
                                                                tmp_path: Path) -> None:
    url, silenced = silent_registry
    package = "is-number"
    data = twin_capsule(["node", "-p", "1"], "1\n", 0)
    # a version no earlier build cached a layer for: the build must really ask the registry
    data.update(runtimes={"node": NODE}, resolved={"node": {package: [f"7.0.{uuid.uuid4().int % 10**6}"]}})
    capsule = write_json(tmp_path / "capsule.json", data)
    env = {**os.environ, "REPLAY_NPM_REGISTRY": url + "/"}
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "runner", str(capsule), "-n", "1", "--json"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = proc.communicate(timeout=BOUND_S + 60)
    finally:
        if proc.poll() is None:
            proc.kill()
    took = time.monotonic() - started
    envelope = json.loads(stdout)
    assert envelope["exit_code"] == 3, stderr[-3000:]
    assert took < BOUND_S, took
    errors = [line for line in stderr.splitlines() if line.startswith("replay: error:")]
    assert len(errors) == 1, stderr[-3000:]
    assert url in errors[0] and "did not answer" in errors[0], errors[0]
    assert silenced  # the build really asked it
    assert _containers(f"{OWNER_LABEL}={socket.gethostname()}:{proc.pid}") == []  # nothing of this replay is left


def test_a_build_that_never_ends_is_stopped_at_the_build_timeout(engine: Any, dribbling_registry: tuple[str, Any],
                                                                 tmp_path: Path) -> None:
    url, asked = dribbling_registry
    data = twin_capsule(["node", "-p", "1"], "1\n", 0)
    data.update(runtimes={"node": NODE}, resolved={"node": {"is-number": [f"7.0.{uuid.uuid4().int % 10**6}"]}})
    capsule = write_json(tmp_path / "capsule.json", data)
    limit = 30
    env = {**os.environ, "REPLAY_NPM_REGISTRY": url + "/", "REPLAY_BUILD_TIMEOUT": str(limit)}
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "runner", str(capsule), "-n", "1", "--json"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = proc.communicate(timeout=BOUND_S + 60)
    finally:
        if proc.poll() is None:
            proc.kill()
    took = time.monotonic() - started
    envelope = json.loads(stdout)
    assert envelope["exit_code"] == 3, stderr[-3000:]
    assert limit <= took < BOUND_S, took
    errors = [line for line in stderr.splitlines() if line.startswith("replay: error:")]
    assert len(errors) == 1, stderr[-3000:]
    assert f"did not finish within {limit} s (REPLAY_BUILD_TIMEOUT)" in errors[0], errors[0]
    assert asked  # the build really was dribbled at
    # the build itself was stopped, not only replay's wait for it: its npm hangs up on the registry
    deadline = time.monotonic() + 120
    while not HUNG_UP and time.monotonic() < deadline:
        time.sleep(0.5)  # polls what the registry saw; the event is the client's socket closing
    assert HUNG_UP, "the build's npm still holds its connection to the registry"
    assert _containers(f"{OWNER_LABEL}={socket.gethostname()}:{proc.pid}") == []
