"""Downloads from package registries, verified and cached on the host.

Artifacts are fetched host side (where the host's CA store, proxy settings and
cache live) and verified against the registry's integrity hash before they enter
a build context; builds then install them without the network.
"""
from __future__ import annotations

import base64
import hashlib
import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from functools import lru_cache
from pathlib import Path
from typing import Any

from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential

from ....config import Settings
from ....secretrules import mask_url
from ....errors import SourceUnavailable


# Download progress: given a name and the size (None: unknown), a context that takes the
# bytes read so far. The CLI installs a progress bar; library users and --quiet get none.
Meter = Callable[[str, int | None], AbstractContextManager[Callable[[int], None]]]
_meter: Meter | None = None
_CHUNK = 1 << 16


def set_meter(meter: Meter | None) -> None:
    global _meter
    _meter = meter


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, http.client.IncompleteRead):  # cut off: the next try may get it whole
        return True
    if isinstance(exc, urllib.error.HTTPError):
        return exc.code >= 500 or exc.code == 429
    if _timed_out(exc):  # a source that accepted and then said nothing for the whole timeout stalls again
        return False
    return isinstance(exc, (urllib.error.URLError, TimeoutError, ConnectionError)) and not _dns_failure(exc)


def _timed_out(exc: BaseException) -> bool:
    return isinstance(exc, TimeoutError) or isinstance(getattr(exc, "reason", None), TimeoutError)


# Sources (scheme://host:port) that stalled once: asked again, they fail at once, so a registry that
# accepts and never answers costs one timeout per replay, not one per package asked about.
_STALLED: dict[str, float] = {}  # origin -> when (time.monotonic()); forgotten after STALL_MEMORY_S
STALL_MEMORY_S = 300.0
REGISTRY_TIMEOUT_S = 30.0  # a registry document (metadata); downloads get longer


def _dns_failure(exc: BaseException) -> bool:
    return "Name or service not known" in str(exc) or "nodename nor servname" in str(exc)


@retry(retry=retry_if_exception(_retryable), stop=stop_after_attempt(3), wait=wait_exponential(0.5, max=4),
       reraise=True)
def _get(url: str, timeout: float, accept: str, name: str | None = None) -> bytes:
    headers = {"User-Agent": "replay", "Accept": accept}
    parts = urllib.parse.urlsplit(url)
    if parts.username is not None or parts.password is not None:  # a registry with credentials: basic auth
        user = urllib.parse.unquote(parts.username or "")
        token = base64.b64encode(f"{user}:{urllib.parse.unquote(parts.password or '')}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
    req = urllib.request.Request(mask_url(url), headers=headers)
    deadline = time.monotonic() + WHOLE_FACTOR * timeout  # the socket timeout is per read: a byte a second passes it
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - https registry URLs only
        meter = _meter
        length = resp.headers.get("Content-Length")
        size = int(length) if length and length.isdigit() else None
        chunks: list[bytes] = []
        with (meter(name, size) if name is not None and meter is not None else nullcontext(lambda n: None)) as advance:
            read = getattr(resp, "read1", resp.read)  # what has arrived: a dribble still meets the deadline
            while chunk := read(_CHUNK):
                chunks.append(chunk)
                advance(len(chunk))
                if time.monotonic() > deadline:
                    raise _Dribbling(WHOLE_FACTOR * timeout)
        body = b"".join(chunks)
        if size is not None and len(body) < size:  # the connection closed early
            raise http.client.IncompleteRead(body, size - len(body))
        return body


# A whole answer may take this many times the per-read timeout (30 s for a registry document: 5
# minutes; a 300 s download: 50 minutes), then the source is taken as stalled.
WHOLE_FACTOR = 10


class _Dribbling(Exception):
    """An answer still coming after its whole time: a source that keeps the connection open."""

    def __init__(self, seconds: float) -> None:
        super().__init__(seconds)
        self.seconds = seconds


def get(url: str, timeout: float = 60.0, accept: str = "application/json, */*", name: str | None = None) -> bytes:
    """The body of url; with `name`, a download the meter shows (runtimes, tarballs)."""
    public = mask_url(url)
    parts = urllib.parse.urlsplit(public)
    origin = f"{parts.scheme}://{parts.netloc}"
    if time.monotonic() - _STALLED.get(origin, -STALL_MEMORY_S) < STALL_MEMORY_S:
        raise SourceUnavailable(f"{origin} did not answer (it stalled earlier in this replay)")
    try:
        return _get(url, timeout, accept, name)
    except _Dribbling as exc:
        _STALLED[origin] = time.monotonic()
        raise SourceUnavailable(f"{public}: its answer did not end within {exc.seconds:g} s (the source keeps "
                                "the connection open, answering slowly)") from exc
    except (urllib.error.URLError, TimeoutError) as exc:
        if _timed_out(exc):
            _STALLED[origin] = time.monotonic()
            raise SourceUnavailable(f"{public}: no answer in {timeout:g} s (the source accepted the "
                                    "connection and said nothing)") from exc
        raise _unavailable(public, exc) from exc
    except ConnectionError as exc:
        raise _unavailable(public, exc) from exc
    except http.client.IncompleteRead as exc:
        raise SourceUnavailable(f"{public}: the answer was cut off ({len(exc.partial)} of "
                                f"{len(exc.partial) + (exc.expected or 0)} bytes)") from exc


def _unavailable(public: str, exc: BaseException) -> SourceUnavailable:
    if isinstance(exc, urllib.error.HTTPError):  # gone or never there: what the capsule names is not to be had
        return SourceUnavailable(f"{public}: HTTP {exc.code}", "capsule" if exc.code in (404, 410) else "environment")
    return SourceUnavailable(f"{public}: {getattr(exc, 'reason', exc)}")


@lru_cache(maxsize=256)
def npm_packument(registry: str, name: str) -> dict[str, Any]:
    """The registry's document of a package (all versions)."""
    quoted = urllib.parse.quote(name, safe="@")
    try:
        return dict(json.loads(get(f"{registry}/{quoted.replace('/', '%2f')}", timeout=REGISTRY_TIMEOUT_S)))
    except SourceUnavailable as exc:
        if "HTTP 404" in str(exc):
            raise SourceUnavailable(f"npm registry has no package {name}", "capsule") from exc
        raise


def npm_versions(settings: Settings, name: str) -> list[str]:
    return list(npm_packument(settings.npm_registry, name).get("versions", {}))


@lru_cache(maxsize=512)
def npm_version_doc(registry: str, name: str, version: str) -> dict[str, Any] | None:
    """One version's document (small), or None when the registry does not have it."""
    quoted = urllib.parse.quote(name, safe="@").replace("/", "%2f")
    try:
        return dict(json.loads(get(f"{registry}/{quoted}/{urllib.parse.quote(version)}", timeout=REGISTRY_TIMEOUT_S)))
    except SourceUnavailable as exc:
        if "HTTP 404" in str(exc) or "HTTP 405" in str(exc):
            return None
        raise


def npm_has(settings: Settings, name: str, version: str) -> bool:
    return npm_version_doc(settings.npm_registry, name, version) is not None


def npm_tarball(settings: Settings, name: str, version: str) -> Path:
    """Download <name>@<version> from the npm registry, checked against its integrity."""
    meta = npm_version_doc(settings.npm_registry, name, version)
    if not meta:
        raise SourceUnavailable(f"npm registry has no {name}@{version}", "capsule")
    dist = meta.get("dist", {})
    integrity = dist.get("integrity") or ""
    url = _via_registry(settings, str(dist.get("tarball", "")))
    return cached_download(settings, url, integrity, f"{name.replace('/', '-').lstrip('@')}-{version}.tgz")


def _via_registry(settings: Settings, url: str) -> str:
    """Tarball URLs name the registry they came from; fetch through the configured one."""
    parts = urllib.parse.urlsplit(url)
    reg = urllib.parse.urlsplit(settings.npm_registry)
    return urllib.parse.urlunsplit((reg.scheme, reg.netloc, reg.path.rstrip("/") + parts.path, "", ""))


def check_integrity(data: bytes, integrity: str) -> bool:
    """Subresource-integrity ("sha512-<base64>") or a plain "sha256:<hex>"."""
    if integrity.startswith("sha256:"):
        return hashlib.sha256(data).hexdigest() == integrity[7:]
    for item in integrity.split():
        algo, _, digest = item.partition("-")
        if algo in ("sha512", "sha384", "sha256", "sha1"):
            if base64.b64encode(hashlib.new(algo, data).digest()).decode() == digest:
                return True
    return False


def cached_download(settings: Settings, url: str, integrity: str, filename: str) -> Path:
    if not integrity:
        raise SourceUnavailable(f"{url}: the registry gives no integrity hash; refusing an unverified download")
    key = hashlib.sha256(integrity.encode()).hexdigest()[:24]
    dest = settings.downloads / key / filename
    if dest.exists():
        return dest
    data = get(url, timeout=300, name=filename)
    if not check_integrity(data, integrity):
        raise SourceUnavailable(f"{url}: integrity check failed (expected {integrity[:40]}…)", "capsule")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".part")
    tmp.write_bytes(data)
    tmp.replace(dest)
    return dest
