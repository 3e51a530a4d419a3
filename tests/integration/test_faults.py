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
from contextlib import contextmanager
from pathlib import Path
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from runner.engine.protocol import OWNER_LABEL
from runner.build.sources.providers.registry_http import get

from tests.services import dribble, http_server, wait_until

from tests.integration.helpers import ROOT, twin_capsule, write_json

pytestmark = pytest.mark.integration

NODE = "22.23.3"  # the tz-clock example's: its download is cached already
GATEWAY = "172.17.0.1"  # the build containers reach the host here (the default bridge's gateway)
BOUND_S = 300  # npm in the build: 30 s socket timeout, one retry; plus the build itself on a loaded machine


UPSTREAM = "https://registry.npmjs.org"


@contextmanager
def _registry(to_the_build: Any) -> Iterator[tuple[str, list[str]]]:
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

    with http_server(Handler, GATEWAY) as url:
        try:
            yield url, asked
        finally:
            stop.set()  # the build's requests still held are let go


@pytest.fixture
def silent_registry() -> Iterator[tuple[str, list[str]]]:
    """The build's requests are accepted and never answered."""
    with _registry(lambda handler, stop: stop.wait(600)) as served:  # never a byte back
        yield served


@pytest.fixture
def dribbling_registry() -> Iterator[tuple[str, list[str]]]:
    """The build's requests get a 200 whose body never ends: a byte a second (npm's socket timeout never fires)."""
    with _registry(lambda handler, stop: dribble(handler, stop, 1.0)) as served:
        yield served


def _containers(label: str) -> list[str]:
    out = subprocess.run(["docker", "ps", "-aq", "--filter", f"label={label}"], capture_output=True, text=True)
    return out.stdout.split()


def _replay_against(url: str, tmp_path: Path, version: str, **env: str) -> tuple[float, int, list[str], str, int]:
    """`replay CAPSULE --json` of a capsule whose build asks the registry at `url` for is-number at a
    version no earlier build cached a layer for: (seconds, exit code, error lines, stderr, pid)."""
    data = twin_capsule(["node", "-p", "1"], "1\n", 0)
    data.update(runtimes={"node": NODE}, resolved={"node": {"is-number": [version]}})
    capsule = write_json(tmp_path / "capsule.json", data)
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "runner", str(capsule), "-n", "1", "--json"], cwd=ROOT,
                            env={**os.environ, "REPLAY_NPM_REGISTRY": url + "/", **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = proc.communicate(timeout=BOUND_S + 60)
    finally:
        if proc.poll() is None:
            proc.kill()
    errors = [line for line in stderr.splitlines() if line.startswith("replay: error:")]
    return time.monotonic() - started, json.loads(stdout)["exit_code"], errors, stderr, proc.pid


def _new_version() -> str:
    return f"7.0.{uuid.uuid4().int % 10**6}"


def _processes_naming(text: str) -> list[str]:
    """The command lines of this host's processes (a build's included) that contain `text`."""
    out = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone meanwhile
            continue
        if text in args:
            out.append(args)
    return out


def _left_of(pid: int) -> list[str]:
    """The containers of the replay process `pid` still there."""
    return _containers(f"{OWNER_LABEL}={socket.gethostname()}:{pid}")


def test_a_registry_that_never_answers_is_named_in_bounded_time(engine: Any, silent_registry: tuple[str, Any],
                                                                tmp_path: Path) -> None:
    url, silenced = silent_registry
    took, code, errors, stderr, pid = _replay_against(url, tmp_path, _new_version())
    assert code == 3, stderr[-3000:]
    assert took < BOUND_S, took
    assert len(errors) == 1, stderr[-3000:]
    assert url in errors[0] and "did not answer" in errors[0], errors[0]
    assert silenced  # the build really asked it
    assert _left_of(pid) == []  # nothing of this replay is left


def test_a_build_that_never_ends_is_stopped_at_the_build_timeout(engine: Any, dribbling_registry: tuple[str, Any],
                                                                 tmp_path: Path) -> None:
    url, asked = dribbling_registry
    limit, version = 30, _new_version()
    took, code, errors, stderr, pid = _replay_against(url, tmp_path, version, REPLAY_BUILD_TIMEOUT=str(limit))
    assert code == 3, stderr[-3000:]
    assert limit <= took < BOUND_S, took
    assert len(errors) == 1, stderr[-3000:]
    assert f"did not finish within {limit} s (REPLAY_BUILD_TIMEOUT)" in errors[0], errors[0]
    assert asked  # the build really was dribbled at
    # the build itself was stopped, not only replay's wait for it: its npm (a process on this host,
    # in the build's container) goes away
    wait_until("the build's npm ending", lambda: not _processes_naming(f"is-number@{version}"),
               detail=lambda: "\n".join(_processes_naming(f"is-number@{version}")))
    assert _left_of(pid) == []
