"""Capsules given as `https://` or `http://` URLs: downloaded to the cache, size-capped,
then read (and verified) like any file.

A capsule is someone else's file, so its URL is untrusted too:
- a URL holding credentials (`user:password@`) is refused (exit 2), never shown;
- every redirect is checked like the URL itself: http or https only (never `ftp://`, which
  would log in to the host it names, nor `file://`), no credentials, no step down from https
  to http, at most 10 of them;
- the whole download (connecting, redirects, headers and body) takes at most
  REPLAY_CAPSULE_TIMEOUT seconds (default 120): a server trickling a byte a second, in its body
  or one header line at a time, is cut there, not after each read's own timeout (http.client
  reads the headers line by line with the socket's timeout, which each line restarts: so a
  watchdog shuts the connection's socket down when the total is spent);
- the body is capped (REPLAY_CAPSULE_MAX_BYTES, default 64 MiB), counted as it is read;
- an archive is unpacked under caps of its own (archive.py);
- wherever the URL is shown (errors, `inspect --json`), it goes through secretrules.mask_url:
  a `?token=` value is `***`.
The copy is stored under its content's SHA-256, so two runs of the same URL never
race and a changed capsule never hides behind a stale copy.

Errors raised here name the URL; opening.py names the capsule by its URL in every error
about the cached copy (no state is kept about which copy came from where).
"""
from __future__ import annotations

import hashlib
import http.client
import os
import re
import shutil
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.client import HTTPMessage
from pathlib import Path
from typing import IO

from ..config import settings
from ..errors import CapsuleError, SourceUnavailable, UsageError
from ..secretrules import mask_url
from .archive import is_tar, unpacked

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_TIMEOUT_S = 120.0
READ_TIMEOUT_S = 60.0  # one read (or connect) within the total, for when the total is longer
MAX_REDIRECTS = 10
_CHUNK = 64 * 1024
_URL = re.compile(r"^https?://", re.IGNORECASE)


def is_url(text: str) -> bool:
    return bool(_URL.match(text))


def downloaded(url: str) -> Path:
    """The local copy of a URL's capsule (a file, or an archive's capsule directory), in the cache."""
    return _store(url, download(url, max_bytes()))


def max_bytes() -> int:
    raw = os.environ.get("REPLAY_CAPSULE_MAX_BYTES", "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else DEFAULT_MAX_BYTES


def timeout_s() -> float:
    """REPLAY_CAPSULE_TIMEOUT: seconds the whole download may take (default 120)."""
    raw = os.environ.get("REPLAY_CAPSULE_TIMEOUT", "").strip()
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        secs = float(raw)
    except ValueError:
        secs = -1.0
    if not 0 < secs < 1e9:
        raise UsageError(f"REPLAY_CAPSULE_TIMEOUT: {raw[:40]!r} is not a number of seconds above 0")
    return secs


def download(url: str, cap: int, total_s: float | None = None) -> bytes:
    """The body, at most `cap` bytes, within `total_s` seconds in all (REPLAY_CAPSULE_TIMEOUT);
    CapsuleError (exit 2) for what the URL says, SourceUnavailable (exit 3) when nothing answers in time."""
    name = mask_url(url)
    _check_url(name, url)
    deadline = _Deadline(name, timeout_s() if total_s is None else total_s)
    opener = urllib.request.build_opener(_Redirects(name, deadline), _WatchedHTTP(deadline), _WatchedHTTPS(deadline))
    request = urllib.request.Request(url, headers={"User-Agent": "replay", "Accept": "application/json, */*"})
    try:
        with deadline.watchdog(), opener.open(request, timeout=deadline.left()) as resp:
            deadline.check()  # headers the watchdog cut read as if they had ended
            length = resp.headers.get("Content-Length")
            if length and length.isdigit() and int(length) > cap:
                raise CapsuleError(name, f"{int(length)} bytes is more than the {cap}-byte limit "
                                         "(REPLAY_CAPSULE_MAX_BYTES)")
            return _body(name, resp, cap, deadline)
    except urllib.error.HTTPError as exc:
        deadline.check()
        if exc.code >= 500:
            raise _unavailable(name, f"HTTP {exc.code}") from None
        raise CapsuleError(name, f"HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, http.client.HTTPException, TimeoutError, ConnectionError, OSError) as exc:
        # HTTPException: a status line or headers http.client cannot read (garbage, over 100
        # headers, a line over 64 KiB) or a body cut short: the server's fault, as a 5xx is.
        if deadline.passed():
            raise deadline.too_slow() from None
        raise _unavailable(name, mask_url(str(getattr(exc, "reason", exc)))) from None


def _check_url(name: str, url: str) -> None:
    """CapsuleError for a URL replay will not fetch: not http(s), or holding credentials."""
    try:
        parts = urllib.parse.urlsplit(url)
        _ = parts.port  # a port that is no number raises here
    except ValueError:
        raise CapsuleError(name, "not a valid URL") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise CapsuleError(name, "only http:// and https:// URLs are fetched")
    if "@" in parts.netloc:
        raise CapsuleError(name, "a URL with credentials (user:password@) is refused: they would be sent "
                                 "in clear and shown; serve the capsule without them")


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Every redirect checked as the URL itself was, within the same deadline."""

    max_redirections = MAX_REDIRECTS

    def __init__(self, name: str, deadline: _Deadline) -> None:
        self.name, self.deadline = name, deadline

    def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str,
                         headers: HTTPMessage, newurl: str) -> urllib.request.Request | None:
        self.deadline.left()
        target = mask_url(newurl)
        try:
            _check_url(target, newurl)
        except CapsuleError as exc:
            raise CapsuleError(self.name, f"redirected to {target}: {exc.problem}") from None
        if req.full_url.lower().startswith("https:") and not newurl.lower().startswith("https:"):
            raise CapsuleError(self.name, f"redirected from https to {target}, refused (a step down to plain http)")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _watched(base: type[http.client.HTTPConnection], deadline: _Deadline) -> type[http.client.HTTPConnection]:
    """`base` whose socket, once connected (to the server or the proxy), the deadline's watchdog can shut."""

    class Watched(base):  # type: ignore[valid-type,misc]  # a class made per download: it holds the deadline
        def connect(self) -> None:
            super().connect()
            deadline.watch(self.sock)

    return Watched


class _WatchedHTTP(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_watched(http.client.HTTPConnection, self.deadline), req)


class _WatchedHTTPS(urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_watched(http.client.HTTPSConnection, self.deadline), req,
                            context=self._context)  # type: ignore[attr-defined]  # HTTPSHandler's own


def _body(name: str, resp: object, cap: int, deadline: _Deadline) -> bytes:
    """Read in chunks as they come, each read bounded by what is left of the deadline."""
    data = bytearray()
    read = getattr(resp, "read1", None) or getattr(resp, "read")  # noqa: B009 - read1: what has come, no waiting for a full chunk
    while True:
        _set_read_timeout(resp, deadline.left())
        try:
            chunk = read(_CHUNK)
        except TimeoutError:
            raise deadline.too_slow() from None
        if not chunk:
            deadline.check()  # the watchdog's cut ends the body as if it were whole
            return bytes(data)
        data += chunk
        if len(data) > cap:
            raise CapsuleError(name, f"more than the {cap}-byte limit (REPLAY_CAPSULE_MAX_BYTES)")


def _set_read_timeout(resp: object, seconds: float) -> None:
    """The socket's timeout for the next read: at most what is left of the whole download's time.
    http.client keeps the socket only inside its file object (fp.raw._sock)."""
    sock = getattr(getattr(getattr(resp, "fp", None), "raw", None), "_sock", None)
    if sock is not None and hasattr(sock, "settimeout"):
        sock.settimeout(seconds)


class _Deadline:
    """The whole download's time: what is left of it bounds every connect and read, and a
    watchdog shuts every connection's socket down when it is spent."""

    def __init__(self, name: str, total_s: float) -> None:
        self.name, self.total_s, self.at = name, total_s, time.monotonic() + total_s
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self.cut = False

    def passed(self) -> bool:
        return self.cut or time.monotonic() >= self.at

    def check(self) -> None:
        """too_slow() when the watchdog cut the download: what was read is not the whole answer."""
        if self.cut:
            raise self.too_slow()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.cut:
                self._shut(sock)

    @contextmanager
    def watchdog(self) -> Iterator[None]:
        timer = threading.Timer(max(0.0, self.at - time.monotonic()), self._cut)
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()

    def _cut(self) -> None:
        with self._lock:
            self.cut = True
            for sock in self._sockets:
                self._shut(sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        # socket.socket's own shutdown, under an SSLSocket's: the reading thread's next recv sees
        # the end of the stream (SSLSocket.shutdown would drop its SSL object under that thread).
        try:
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        except OSError:
            pass

    def left(self) -> float:
        """Seconds the next step may take; SourceUnavailable once none are left."""
        left = self.at - time.monotonic()
        if left <= 0:
            raise self.too_slow()
        return min(left, READ_TIMEOUT_S)

    def too_slow(self) -> SourceUnavailable:
        return _unavailable(self.name, f"not done within {self.total_s:g} s in all (REPLAY_CAPSULE_TIMEOUT)")


def _unavailable(name: str, why: str) -> SourceUnavailable:
    exc = SourceUnavailable(f"{name}: cannot download the capsule ({why})")
    exc.path = name
    return exc


def _store(url: str, data: bytes) -> Path:
    digest = hashlib.sha256(data).hexdigest()[:24]
    folder = settings().cache_dir / "capsules" / digest
    if is_tar(data):
        try:
            return unpacked(mask_url(url), data, folder / "capsule")
        except CapsuleError:
            _remove_if_empty(folder)  # a refused archive leaves nothing in the cache
            raise
    name = Path(urllib.parse.urlsplit(url).path).name or "capsule.json"
    name = re.sub(r"[^A-Za-z0-9._-]", "_", name)[:100] or "capsule.json"
    dest = folder / name
    if not dest.exists():
        folder.mkdir(parents=True, exist_ok=True)
        part = folder / f".{name}.{os.getpid()}.part"
        part.write_bytes(data)
        part.replace(dest)  # atomic: a parallel run never reads half a capsule
    return dest


def discard(local: Path) -> None:
    """Remove the cached copy `downloaded` returned (its whole `capsules/<digest>/` folder)."""
    root = (settings().cache_dir / "capsules").resolve()
    folder = local.resolve()
    while folder.parent != root:
        if folder == folder.parent:
            return  # not in the cache: nothing of ours to remove
        folder = folder.parent
    shutil.rmtree(folder, ignore_errors=True)


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass
