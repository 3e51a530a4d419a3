"""Build contexts at stable paths: one build at a time in each.

The docker CLI keys BuildKit's context transfer by the context directory's path: a directory
it has sent before costs only the files that changed since, a new one costs every byte.
Contexts under a fresh temporary directory meant a full transfer per build (two Node.js
tarballs are 100 MB: seconds on a loaded machine, most of a rebuild that changes only the
node version). So a build takes a slot, a directory of a fixed name under the cache, held by
a lock (threads and processes alike) while its context is written and built, and emptied
after: the engine keeps its copy, the path is what counts.

The transfer decides what changed by each file's size, mode and mtime, never its content, and
a context's mtimes say little (`git archive` gives every file its commit's time, a --source
tree none): two commits of the same second with an edit of the same size would build from the
first one's file. So every file's mtime is set from its content (stamp) before the build: a
file is sent again exactly when its content changed.
"""
from __future__ import annotations

import fcntl
import itertools
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def context_slot(root: Path) -> Iterator[Path]:
    """The first free slot under root (a directory that does not exist yet), held until the block ends."""
    root.mkdir(parents=True, exist_ok=True)
    for n in itertools.count():
        fd = os.open(root / f"slot-{n}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another build holds it
            os.close(fd)
            continue
        slot = root / f"slot-{n}"
        try:
            shutil.rmtree(slot, ignore_errors=True)  # left by a build that was killed
            yield slot
        finally:
            shutil.rmtree(slot, ignore_errors=True)
            os.close(fd)  # releases the lock
        return


def stamp(path: Path, sha256: bytes) -> None:
    """This file's mtime from its content (a second between 2001 and 2033, and a nanosecond),
    so that equal stat means equal content for BuildKit's context transfer. A hard link into the
    download cache gets the same time from every build: its content is the same."""
    n = int.from_bytes(sha256[:8], "big")
    ns = (1_000_000_000 + n % 1_000_000_000) * 1_000_000_000 + (n >> 32) % 1_000_000_000
    os.utime(path, ns=(ns, ns), follow_symlinks=False)
