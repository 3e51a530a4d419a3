"""A small content-addressed store: what a build needs from the capsule or the user's
disk (a lockfile shipped in the capsule, input files, a --source tree), by sha256.

A plan names these by digest only, never by host path, so it can be sent to another
machine: `export()` gives the entries a plan refers to, `load()` puts them in that
machine's store, checked against their digests.
"""
from __future__ import annotations

import base64
import hashlib
import io
import os
import shutil
import stat
import tarfile
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path

from ...errors import CapsuleError, SourceUnavailable

MAX_FILE = 64 << 20  # a capsule's input or lockfile; larger is refused
_SKIP_DIRS = (".git", "node_modules")


def check_shipped(path: Path, origin: str, what: str) -> None:
    """CapsuleError unless `path` is a file the store takes: regular (no symlink, FIFO or device),
    at most MAX_FILE bytes (`replay verify` asks the same of a capsule's files: precheck.py)."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise CapsuleError(origin, f"{what} {path.name!r}: {exc.strerror or 'cannot be read'}") from exc
    if not stat.S_ISREG(st.st_mode):
        raise CapsuleError(origin, f"{what} {path.name!r} is not a regular file")
    if st.st_size > MAX_FILE:
        raise CapsuleError(origin, f"{what} {path.name!r} is larger than {MAX_FILE >> 20} MiB")


class ContentStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, digest: str) -> Path:
        p = self.root / digest[:2] / digest
        if not p.is_file():
            raise SourceUnavailable(f"content {digest[:12]} is not in this machine's store ({self.root})")
        return p

    def has(self, digest: str) -> bool:
        return (self.root / digest[:2] / digest).is_file()

    def put_bytes(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        if not self.has(digest):
            target = self.root / digest[:2] / digest
            target.parent.mkdir(parents=True, exist_ok=True)
            part = target.with_name(f"{digest}.{uuid.uuid4().hex}.part")
            part.write_bytes(data)
            part.replace(target)  # atomic: a parallel planner never reads half a file
        return digest

    def put_file(self, path: Path, origin: str, what: str) -> str:
        """A regular file of the capsule (no symlink, FIFO or device), at most MAX_FILE bytes."""
        check_shipped(path, origin, what)
        with open(path, "rb") as fh:
            return self.put_bytes(fh.read(MAX_FILE + 1))

    def put_tree(self, directory: Path) -> str:
        """A directory as a deterministic tar (sorted, no owners or times), .git and node_modules left out."""
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for path in _walk(directory, self.root.resolve()):
                info = tar.gettarinfo(str(path), arcname=path.relative_to(directory).as_posix())
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                info.mtime = 0
                if info.isreg():
                    with open(path, "rb") as fh:
                        tar.addfile(info, fh)
                elif info.isdir() or info.issym():
                    tar.addfile(info)
        return self.put_bytes(buf.getvalue())

    def extract_tree(self, digest: str, dest: Path) -> None:
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(self.path(digest)) as tar:
            tar.extractall(dest, filter="data")  # no absolute paths, no escapes, no devices

    def copy_to(self, digest: str, target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self.path(digest), target)

    # A source's tree by its name (remote and commit): put there by the machine that read it
    # from a local mirror (source.ship_tree), so a worker elsewhere restores it without that path.
    def _source_key(self, remote: str, commit: str) -> Path:
        return self.root / "sources" / hashlib.sha256(f"{remote}\0{commit.lower()}".encode()).hexdigest()

    def put_source(self, remote: str, commit: str, digest: str) -> None:
        if not self.has(digest):
            raise SourceUnavailable(f"content {digest[:12]} is not in this machine's store ({self.root})")
        key = self._source_key(remote, commit)
        key.parent.mkdir(parents=True, exist_ok=True)
        part = key.with_name(f"{key.name}.{uuid.uuid4().hex}.part")
        part.write_text(digest)
        part.replace(key)

    def source_tree(self, remote: str, commit: str) -> str | None:
        """The digest of the source's shipped tree, None when none was shipped here."""
        try:
            digest = self._source_key(remote, commit).read_text().strip()
        except OSError:
            return None
        return digest if len(digest) == 64 and self.has(digest) else None

    def export(self, digests: Iterable[str]) -> dict[str, str]:
        return {d: base64.b64encode(self.path(d).read_bytes()).decode("ascii") for d in sorted(set(digests))}

    def load(self, entries: Mapping[str, str]) -> None:
        for digest, data in entries.items():
            raw = base64.b64decode(data, validate=True)
            if hashlib.sha256(raw).hexdigest() != digest:
                raise SourceUnavailable(f"content {digest[:12]} does not match its digest")
            self.put_bytes(raw)


def _walk(directory: Path, store: Path) -> list[Path]:
    out: list[Path] = []
    for root, dirs, files in os.walk(directory):
        # the store itself stays out (a --source holding the cache would copy it into itself)
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not store.is_relative_to(Path(root, d).resolve()))
        base = Path(root)
        out += [base / d for d in dirs] + [base / f for f in sorted(files)]
    return sorted(out, key=lambda p: p.relative_to(directory).as_posix())


def content_store(cache_dir: Path) -> ContentStore:
    return ContentStore(cache_dir / "content")

