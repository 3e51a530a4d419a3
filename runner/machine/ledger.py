"""The image usage ledger: which replay image was used when, and by which live process (and when
each tool-cache volume was last handed to an attempt).

Every replay, bisect, farm night and worker records each image it resolves (built or
found cached) here, in the cache directory (`usage.sqlite`): the image's last use, and a
lease naming the process (`host:pid`) that holds it while that process lives. `replay gc
--images` removes only images whose last use is older than its age and that no live
process holds. SQLite in WAL mode with a busy timeout: concurrent replays and a gc
beside them each see whole rows.
"""
from __future__ import annotations

import os
import socket
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

FILE = "usage.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS images (image_id TEXT PRIMARY KEY, tag TEXT NOT NULL, last_used REAL NOT NULL);
CREATE TABLE IF NOT EXISTS volumes (name TEXT PRIMARY KEY, last_used REAL NOT NULL);
CREATE TABLE IF NOT EXISTS leases (image_id TEXT NOT NULL, owner TEXT NOT NULL, since REAL NOT NULL,
                                   PRIMARY KEY (image_id, owner));
"""


def owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@contextmanager
def _db(cache_dir: Path) -> Iterator[sqlite3.Connection]:
    cache_dir.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(cache_dir / FILE, timeout=30)) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(_SCHEMA)
        with conn:  # one transaction: committed whole, or not at all
            yield conn


def record(cache_dir: Path, tag: str, image_id: str, now: float | None = None) -> None:
    """This process used the image now, and holds it while it lives."""
    at = time.time() if now is None else now
    with _db(cache_dir) as conn:
        conn.execute("INSERT INTO images VALUES (?, ?, ?) ON CONFLICT (image_id) DO UPDATE SET "
                     "tag = excluded.tag, last_used = max(last_used, excluded.last_used)", (image_id, tag, at))
        conn.execute("INSERT OR REPLACE INTO leases VALUES (?, ?, ?)", (image_id, owner(), at))


def record_volume(cache_dir: Path, name: str, now: float | None = None) -> None:
    """A tool-cache volume (replay/toolcache.py) was handed to an attempt now: `gc --cache` goes by it."""
    at = time.time() if now is None else now
    with _db(cache_dir) as conn:
        conn.execute("INSERT INTO volumes VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET "
                     "last_used = max(last_used, excluded.last_used)", (name, at))


def volumes_used(cache_dir: Path) -> dict[str, float]:
    """Tool-cache volume -> when an attempt was last handed it."""
    if not (cache_dir / FILE).exists():
        return {}
    with _db(cache_dir) as conn:
        return {str(n): float(t) for n, t in conn.execute("SELECT name, last_used FROM volumes")}


@dataclass(frozen=True)
class Usage:
    last_used: dict[str, float]  # image id -> when it was last used (epoch seconds)
    held: dict[str, str]  # image id -> a live process that holds it (host:pid)


def usage(cache_dir: Path) -> Usage:
    """What the ledger says; the leases of processes gone from this host are dropped on the way."""
    if not (cache_dir / FILE).exists():
        return Usage({}, {})
    with _db(cache_dir) as conn:
        last = {i: t for i, t in conn.execute("SELECT image_id, last_used FROM images")}
        held: dict[str, str] = {}
        for image_id, who in conn.execute("SELECT image_id, owner FROM leases").fetchall():
            if alive(who):
                held.setdefault(image_id, who)
            else:
                conn.execute("DELETE FROM leases WHERE image_id = ? AND owner = ?", (image_id, who))
    return Usage(last, held)


def forget(cache_dir: Path, image_id: str) -> None:
    with _db(cache_dir) as conn:
        conn.execute("DELETE FROM images WHERE image_id = ?", (image_id,))
        conn.execute("DELETE FROM leases WHERE image_id = ?", (image_id,))


def alive(who: str) -> bool:
    """A lease's process is alive: on this host, its pid answers; on another host, it is assumed
    alive (this host cannot tell), so a shared cache never loses another machine's images."""
    host, _, pid = who.rpartition(":")
    if host != socket.gethostname():
        return True
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
