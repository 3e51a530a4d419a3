"""A registry's credentials (REPLAY_NPM_REGISTRY=http://user:token@host/) reach the build only as a
BuildKit secret: the build really fetches with them from a stand-in registry that refuses anyone
without them, and nothing of them is in the image (`docker save`), its history, its labels, the -v
build log, the report or the cache. The classic builder refuses them with one line (exit 3)."""
from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from runner.providers.fetch import get

from .helpers import ROOT, twin_capsule, write_json

pytestmark = pytest.mark.integration

NODE = "22.23.3"  # the tz-clock example's: its download is cached already
PACKAGE = "replay-secret-marker-pkg"
UPSTREAM = "https://registry.npmjs.org"
# The build containers reach the host on the default bridge's gateway, not on 127.0.0.1.
GATEWAY = "172.17.0.1"
# A version of its own each run: an image layer cached from an earlier run would fetch nothing.
VERSION = f"1.0.{uuid.uuid4().int % 10**9}"


def _tarball() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in {"package.json": json.dumps({"name": PACKAGE, "version": VERSION}),
                           "index.js": "module.exports = 'served with credentials';\n"}.items():
            data = text.encode()
            info = tarfile.TarInfo(f"package/{name}")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class StandIn:
    """An npm registry stand-in: serves the marker package, forwards the rest to the real registry,
    and answers 401 to any request without the credentials."""

    def __init__(self, user: str, token: str) -> None:
        self.auth = "Basic " + base64.b64encode(f"{user}:{token}".encode()).decode()
        self.tgz = _tarball()
        self.served: list[str] = []  # paths of the marker package served (with the credentials)
        self.refused: list[str] = []
        self.server = ThreadingHTTPServer((GATEWAY, 0), self._handler())
        self.base = f"http://{GATEWAY}:{self.server.server_address[1]}"

    def packument(self) -> dict[str, Any]:
        integrity = "sha512-" + base64.b64encode(hashlib.sha512(self.tgz).digest()).decode()
        dist = {"tarball": f"{self.base}/{PACKAGE}/-/{PACKAGE}-{VERSION}.tgz", "integrity": integrity,
                "shasum": hashlib.sha1(self.tgz).hexdigest()}  # noqa: S324 - npm's own field
        return {"name": PACKAGE, "dist-tags": {"latest": VERSION},
                "versions": {VERSION: {"name": PACKAGE, "version": VERSION, "dist": dist}}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                if self.headers.get("Authorization") != standin.auth:
                    standin.refused.append(self.path)
                    return self._send(401, b'{"error":"credentials required"}')
                if self.path.lstrip("/").startswith(PACKAGE):
                    standin.served.append(self.path)
                    body = standin.tgz if self.path.endswith(".tgz") else json.dumps(standin.packument()).encode()
                    return self._send(200, body)
                try:
                    self._send(200, get(UPSTREAM + self.path))
                except Exception:  # noqa: BLE001 - the upstream's failure is the client's 404
                    self._send(404, b"{}")

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> StandIn:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def registry() -> Iterator[tuple[StandIn, str]]:
    token = f"tok{uuid.uuid4().hex}"
    with StandIn("replay-test", token) as standin:
        yield standin, token


def _capsule(tmp_path: Path) -> Path:
    data = twin_capsule(["node", "-p", f"require('{PACKAGE}')"], "", 0)
    data.update(runtimes={"node": NODE}, resolved={"node": {PACKAGE: [VERSION]}})
    return write_json(tmp_path / "capsule.json", data)


def _replay(capsule: Path, url: str, *extra: str, builder: str = "buildkit") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REPLAY_NPM_REGISTRY": url, "REPLAY_BUILDER": builder}
    return subprocess.run([sys.executable, "-m", "runner", str(capsule), "-n", "1", "-v", "--json", *extra],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def test_the_credentials_reach_only_the_step_that_needs_them(engine: Any, registry: tuple[StandIn, str],
                                                             tmp_path: Path) -> None:
    standin, token = registry
    proc = _replay(_capsule(tmp_path), standin.base.replace("http://", f"http://replay-test:{token}@") + "/")
    data = json.loads(proc.stdout)
    report = data["result"]
    assert data["exit_code"] == 0, proc.stderr[-3000:]
    assert report["attempts"][0]["stdout"] == "served with credentials\n"
    assert any(p.endswith(".tgz") for p in standin.served)  # the build fetched it, with the credentials
    encoded = standin.auth.split()[1]
    image = report["image"]["ref"]
    saved = subprocess.run(["docker", "save", image], capture_output=True, timeout=300).stdout
    assert saved and token.encode() not in saved and encoded.encode() not in saved
    history = subprocess.run(["docker", "history", "--no-trunc", image], capture_output=True, text=True).stdout
    inspect = subprocess.run(["docker", "image", "inspect", image], capture_output=True, text=True).stdout
    for text in (history, inspect, proc.stdout, proc.stderr):
        assert token not in text and encoded not in text
    cache = os.environ.get("REPLAY_CACHE") or str(Path.home() / ".cache" / "replay")
    hits = subprocess.run(["grep", "-rlF", token, cache], capture_output=True, text=True)
    assert hits.stdout == ""
    assert not list(Path("/tmp").glob("replay-build-*/replay-npmrc"))  # the secret file went with the build


def test_the_classic_builder_refuses_the_credentials(engine: Any, registry: tuple[StandIn, str],
                                                     tmp_path: Path) -> None:
    standin, token = registry
    proc = _replay(_capsule(tmp_path), standin.base.replace("http://", f"http://replay-test:{token}@") + "/",
                   builder="classic")
    data = json.loads(proc.stdout)
    assert data["exit_code"] == 3, proc.stderr[-3000:]
    assert "REPLAY_NPM_REGISTRY holds credentials" in data["error"]["message"]
    assert token not in proc.stdout + proc.stderr
    assert not any(p.endswith(".tgz") for p in standin.served)  # nothing was built with them
