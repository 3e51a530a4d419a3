"""A collected capsule's id: a hash of its bytes as they are on disk, read with no capsule
reader (`farm history FILE` finds a capsule by it without loading the formats)."""
from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path


def content_id(path: Path) -> str:
    """SHA-256 of the capsule's bytes; for a directory, of every file's relative path and bytes."""
    h = hashlib.sha256()
    try:
        mode = path.stat().st_mode
    except OSError:  # a name too long, a symlink loop: no file either
        mode = 0
    if stat.S_ISDIR(mode):
        for p in sorted(path.rglob("*")):
            rel = p.relative_to(path).as_posix().encode()
            if p.is_symlink():
                h.update(b"L" + rel + b"\0" + os.readlink(p).encode() + b"\0")
            elif p.is_file():
                h.update(b"F" + rel + b"\0" + _file_hash(p) + b"\0")
    elif stat.S_ISREG(mode):
        h.update(_file_hash(path))
    else:  # gone or unreadable: still one stable id, so the night lists it (as broken)
        h.update(b"missing\0" + str(path).encode())
    return h.hexdigest()[:32]


def _file_hash(p: Path) -> bytes:
    h = hashlib.sha256()
    try:
        with p.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except OSError as exc:
        h.update(f"unreadable: {exc.strerror}".encode())
    return h.digest()
