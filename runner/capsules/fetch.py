"""Capsules given as `https://` or `http://` URLs: downloaded to the cache, size-capped,
then read (and verified) like any file.

A capsule is someone else's file, so its URL is untrusted too: the download is capped
(REPLAY_CAPSULE_MAX_BYTES, default 64 MiB) and never trusted for more than its bytes.
The copy is stored under its content's SHA-256, so two runs of the same URL never
race and a changed capsule never hides behind a stale copy. A tar archive (a NovaFabric
capsule directory, packed) is unpacked with tarfile's "data" filter: no absolute
paths, no links out, no devices.

Errors raised here name the URL; opening.py names the capsule by its URL in every error
about the cached copy (no state is kept about which copy came from where).
"""
from __future__ import annotations

import hashlib
import io
import os
import re
import tarfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from ..config import settings
from ..errors import CapsuleError, SourceUnavailable

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
TIMEOUT_S = 60.0
_URL = re.compile(r"^https?://", re.IGNORECASE)


def is_url(text: str) -> bool:
    return bool(_URL.match(text))


def downloaded(url: str) -> Path:
    """The local copy of a URL's capsule (a file, or an archive's capsule directory), in the cache."""
    return _store(url, download(url, max_bytes()))


def max_bytes() -> int:
    raw = os.environ.get("REPLAY_CAPSULE_MAX_BYTES", "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else DEFAULT_MAX_BYTES


def download(url: str, cap: int) -> bytes:
    """The body, at most `cap` bytes; CapsuleError (exit 2) for what the URL says,
    SourceUnavailable (exit 3) when nothing answers."""
    request = urllib.request.Request(url, headers={"User-Agent": "replay", "Accept": "application/json, */*"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as resp:  # noqa: S310 - http(s) only, checked above
            length = resp.headers.get("Content-Length")
            if length and length.isdigit() and int(length) > cap:
                raise CapsuleError(url, f"{int(length)} bytes is more than the {cap}-byte limit "
                                        "(REPLAY_CAPSULE_MAX_BYTES)")
            data = bytes(resp.read(cap + 1))
    except urllib.error.HTTPError as exc:
        if exc.code >= 500:
            raise _unavailable(url, f"HTTP {exc.code}") from None
        raise CapsuleError(url, f"HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
        raise _unavailable(url, str(getattr(exc, "reason", exc))) from None
    if len(data) > cap:
        raise CapsuleError(url, f"more than the {cap}-byte limit (REPLAY_CAPSULE_MAX_BYTES)")
    return data


def _unavailable(url: str, why: str) -> SourceUnavailable:
    exc = SourceUnavailable(f"{url}: cannot download the capsule ({why})")
    exc.path = url
    return exc


def _store(url: str, data: bytes) -> Path:
    digest = hashlib.sha256(data).hexdigest()[:24]
    folder = settings().cache_dir / "capsules" / digest
    if _is_tar(data):
        return _unpack(url, data, folder / "capsule")
    name = Path(urllib.parse.urlsplit(url).path).name or "capsule.json"
    name = re.sub(r"[^A-Za-z0-9._-]", "_", name)[:100] or "capsule.json"
    dest = folder / name
    if not dest.exists():
        folder.mkdir(parents=True, exist_ok=True)
        part = folder / f".{name}.{os.getpid()}.part"
        part.write_bytes(data)
        part.replace(dest)  # atomic: a parallel run never reads half a capsule
    return dest


def _is_tar(data: bytes) -> bool:
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*"):
            return True
    except (tarfile.TarError, EOFError, OSError):
        return False


def _unpack(url: str, data: bytes, dest: Path) -> Path:
    """A packed capsule directory; the one directory holding capsule.yaml inside it."""
    if not dest.exists():
        tmp = dest.with_name(f".unpack-{os.getpid()}")
        tmp.mkdir(parents=True, exist_ok=True)
        try:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
                tar.extractall(tmp, filter="data")
        except (tarfile.TarError, OSError) as exc:
            raise CapsuleError(url, f"cannot unpack the archive ({exc})") from None
        tmp.replace(dest)
    found = sorted(p.parent for p in dest.rglob("capsule.yaml"))
    if not found:
        raise CapsuleError(url, "an archive without a capsule.yaml (not a NovaFabric capsule)")
    return found[0]
