"""Registry stand-ins for the credential tests: an npm registry and a Python "simple" index
(PEP 503 HTML / PEP 691 JSON), each on the docker bridge's gateway so a build reaches it.

Each answers 401 to any request without the credentials, serves a marker package of its own
(a version of its own each run: an image layer cached from an earlier run would fetch nothing),
and forwards everything else to the real registry through runner.build.sources.providers.registry_http.get (which
trusts the proxy's CA), so a build can install its package managers through it too.
"""
from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
import threading
import urllib.parse
import uuid
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from runner.build.sources.providers.registry_http import get

# The build containers reach the host on the default bridge's gateway, not on 127.0.0.1.
GATEWAY = "172.17.0.1"
USER = "replay-test"
NPM_PACKAGE = "replay-secret-marker-pkg"
PY_PROJECT = "replay-secret-marker"
PY_MODULE = "replay_secret_marker"
SAID = "served with credentials"  # what each marker package's code prints

Answer = tuple[int, str, bytes]  # status, content type, body


class StandIn:
    """A registry that refuses anyone without the credentials; subclasses say what it serves."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.auth = "Basic " + base64.b64encode(f"{USER}:{token}".encode()).decode()
        self.version = f"1.0.{uuid.uuid4().int % 10**9}"
        self.served: list[str] = []  # the paths it answered (GET, with the credentials)
        self.refused: list[str] = []  # ... and refused (without them)
        self.server = ThreadingHTTPServer((GATEWAY, 0), self._handler())
        self.base = f"http://{GATEWAY}:{self.server.server_address[1]}"

    @property
    def encoded(self) -> str:
        """The credentials as they travel (basic auth, npm's _auth): the other form to search for."""
        return self.auth.split()[1]

    def url(self, path: str = "/") -> str:
        """The registry's URL with the credentials in it, as a user sets REPLAY_*."""
        return self.base.replace("http://", f"http://{USER}:{self.token}@") + path

    @property
    def file_path(self) -> str:
        """The path of the marker's file (tarball, wheel): served only to a build that installed it."""
        raise NotImplementedError

    def answer(self, path: str, accept: str) -> Answer:
        raise NotImplementedError

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                self._answer(body=True)

            def do_HEAD(self) -> None:  # noqa: N802 - uv asks before it downloads
                self._answer(body=False)

            def _answer(self, body: bool) -> None:
                if self.headers.get("Authorization") != standin.auth:
                    standin.refused.append(self.path)
                    return self._send((401, "application/json", b'{"error":"credentials required"}'), body)
                try:
                    answer = standin.answer(self.path, self.headers.get("Accept") or "*/*")
                except Exception:  # noqa: BLE001 - the upstream's failure is the client's 404
                    answer = (404, "application/json", b"{}")
                if body:
                    standin.served.append(self.path)
                self._send(answer, body)

            def _send(self, answer: Answer, body: bool) -> None:
                status, kind, data = answer
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if body:
                    self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> StandIn:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


# -- npm ------------------------------------------------------------------------

class NpmStandIn(StandIn):
    """The npm registry: the marker's packument and tarball, the rest from registry.npmjs.org."""

    UPSTREAM = "https://registry.npmjs.org"

    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.tgz = _tarball(self.version)

    @property
    def tarball_name(self) -> str:
        return f"{NPM_PACKAGE}-{self.version}.tgz"

    @property
    def file_path(self) -> str:
        return f"/{NPM_PACKAGE}/-/{self.tarball_name}"

    def integrity(self) -> str:
        return "sha512-" + base64.b64encode(hashlib.sha512(self.tgz).digest()).decode()

    def shasum(self) -> str:
        return hashlib.sha1(self.tgz).hexdigest()  # noqa: S324 - npm's and yarn's own field

    def packument(self) -> dict[str, Any]:
        dist = {"tarball": self.base + self.file_path, "integrity": self.integrity(),
                "shasum": self.shasum()}
        return {"name": NPM_PACKAGE, "dist-tags": {"latest": self.version},
                "versions": {self.version: {"name": NPM_PACKAGE, "version": self.version, "dist": dist}}}

    def answer(self, path: str, accept: str) -> Answer:
        if path.lstrip("/").startswith(NPM_PACKAGE):
            if path.endswith(".tgz"):
                return 200, "application/octet-stream", self.tgz
            return 200, "application/json", json.dumps(self.packument()).encode()
        return 200, "application/octet-stream" if path.endswith(".tgz") else "application/json", get(self.UPSTREAM + path)


def _tarball(version: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in {"package.json": json.dumps({"name": NPM_PACKAGE, "version": version}),
                           "index.js": f"module.exports = {SAID!r};\n"}.items():
            data = text.encode()
            info = tarfile.TarInfo(f"package/{name}")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


# -- Python ---------------------------------------------------------------------

class PypiStandIn(StandIn):
    """A simple index under /simple/: the marker's page and wheel; other projects' pages from
    pypi.org/simple with their files' URLs turned to /files/ here, forwarded to files.pythonhosted.org."""

    UPSTREAM = "https://pypi.org/simple/"
    FILES = "https://files.pythonhosted.org/"
    _JSON = "application/vnd.pypi.simple.v1+json"

    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.wheel_name, self.wheel = _wheel(self.version)

    @property
    def index(self) -> str:
        return f"{self.base}/simple/"

    @property
    def file_path(self) -> str:
        return f"/files/{self.wheel_name}"

    @property
    def wheel_url(self) -> str:
        return self.base + self.file_path

    def sha256(self) -> str:
        return hashlib.sha256(self.wheel).hexdigest()

    def answer(self, path: str, accept: str) -> Answer:
        path = urllib.parse.urlsplit(path).path
        if path == self.file_path:
            return 200, "application/octet-stream", self.wheel
        if path.startswith("/files/"):
            return 200, "application/octet-stream", get(self.FILES + path.removeprefix("/files/"), timeout=300)
        if path.rstrip("/") == f"/simple/{PY_PROJECT}":
            return self._marker_page(accept)
        if path.startswith("/simple/"):
            body = get(self.UPSTREAM + path.removeprefix("/simple/"), accept=accept)
            body = body.replace(self.FILES.encode(), f"{self.base}/files/".encode())
            return 200, self._JSON if body.lstrip().startswith(b"{") else "text/html", body
        return 404, "text/plain", b"not here"

    def _marker_page(self, accept: str) -> Answer:
        if self._JSON in accept:
            doc = {"meta": {"api-version": "1.1"}, "name": PY_PROJECT, "versions": [self.version],
                   "files": [{"filename": self.wheel_name, "url": self.wheel_url, "hashes": {"sha256": self.sha256()}}]}
            return 200, self._JSON, json.dumps(doc).encode()
        link = f'<a href="{self.wheel_url}#sha256={self.sha256()}">{self.wheel_name}</a>'
        return 200, "text/html", f"<!DOCTYPE html><html><body>{link}</body></html>".encode()


def _wheel(version: str) -> tuple[str, bytes]:
    """A pure-Python wheel of the marker project: one module, its METADATA, WHEEL and RECORD."""
    dist = f"{PY_MODULE}-{version}"
    files = {
        f"{PY_MODULE}.py": f"SAID = {SAID!r}\n",
        f"{dist}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {PY_PROJECT}\nVersion: {version}\n",
        f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: replay-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [f"{name},sha256={_digest(text.encode())},{len(text.encode())}" for name, text in files.items()]
    files[f"{dist}.dist-info/RECORD"] = "\n".join([*record, f"{dist}.dist-info/RECORD,,"]) + "\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as whl:
        for name, text in files.items():
            whl.writestr(name, text)
    return f"{dist}-py3-none-any.whl", buf.getvalue()


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip("=")
