"""A packed NovaFabric capsule directory (a .tar, .tar.gz, ...) unpacked into the cache, under caps.

A 0.5 MB .tar.gz can hold 513 MB of zeros or 60,000 empty files, and its headers can say
anything: the caps are counted on what unpacking actually does (bytes written, bytes of the
decompressed stream read, entries met), member by member, never on sizes the archive states.
Each member goes through tarfile's "data" filter (no absolute paths, no links out, no devices);
only directories, regular files and symbolic links are unpacked. A refused archive leaves
nothing behind in the cache.
"""
from __future__ import annotations

import io
import os
import shutil
import tarfile
from collections.abc import Iterator
from pathlib import Path

from ..errors import CapsuleError
from . import limits

_CHUNK = 64 * 1024


def is_tar(data: bytes) -> bool:
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*"):
            return True
    except (tarfile.TarError, EOFError, OSError):
        return False


def unpacked(name: str, data: bytes, dest: Path) -> Path:
    """The one directory holding capsule.yaml in the archive `data`, unpacked at `dest` (once).
    `name`: how errors name the archive (the URL, masked)."""
    if not dest.exists():
        tmp = dest.with_name(f".unpack-{os.getpid()}")
        _remove(tmp)
        tmp.mkdir(parents=True)
        try:
            _unpack(name, data, tmp)
            tmp.replace(dest)
        except BaseException:
            _remove(tmp)
            raise
    found = sorted(p.parent for p in dest.rglob("capsule.yaml"))
    if not found:
        _remove(dest)
        raise CapsuleError(name, "an archive without a capsule.yaml (not a NovaFabric capsule)")
    return found[0]


def _unpack(name: str, data: bytes, into: Path) -> None:
    written = entries = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            for member in _streamed(tar):
                entries += 1
                if entries > limits.UNPACKED_ENTRIES:
                    raise _over(name, f"more than {limits.UNPACKED_ENTRIES:,} entries")
                written += _one(name, tar, member, into, limits.UNPACKED_BYTES - written)
                if tar.offset > limits.UNPACKED_BYTES + limits.UNPACKED_ENTRIES * 1024:  # headers and skipped data
                    raise _over(name, f"more than {limits.UNPACKED_BYTES:,} bytes unpacked")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise CapsuleError(name, f"cannot unpack the archive ({exc})") from None


def _streamed(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    """The members one at a time, as the stream is read (tar.getmembers() would read them all first)."""
    while (member := tar.next()) is not None:
        yield member
        tar.members.clear()  # type: ignore[attr-defined]  # no list of 60,000 members kept in memory either


def _one(name: str, tar: tarfile.TarFile, member: tarfile.TarInfo, into: Path, room: int) -> int:
    """Unpack one member (through the data filter); the bytes it wrote."""
    safe = tarfile.data_filter(member, str(into))
    if safe.isdir() or safe.issym():
        tar.extract(safe, into, filter="data")
        return 0
    if not safe.isreg():
        raise CapsuleError(name, f"the archive holds {safe.name!r}, neither a file, a directory nor a symbolic link")
    src = tar.extractfile(safe)
    assert src is not None  # a regular file always has a body
    target = into / safe.name
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink() or target.is_file():  # a name met twice: the last one wins, as with tar
        target.unlink()
    count = 0
    with src, open(target, "xb") as out:
        while chunk := src.read(_CHUNK):
            count += len(chunk)
            if count > room:
                raise _over(name, f"more than {limits.UNPACKED_BYTES:,} bytes unpacked")
            out.write(chunk)
    os.chmod(target, (safe.mode or 0o644) & 0o755)
    return count


def _over(name: str, what: str) -> CapsuleError:
    return CapsuleError(name, f"the archive unpacks to {what}, over the limit; nothing of it is kept")


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path, ignore_errors=True)
