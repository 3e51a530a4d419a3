"""`replay gc --images` and `--cache`: the disk replay fills, given back, and nothing else.

Images: replay's own only (labelled `replay=image` and tagged under REPLAY_IMAGE_REPO, no
tag of anyone else), not used within the age (the usage ledger's last use, else the
image's creation), held by no live replay (a ledger lease) and used by no container (of
any kind, running or stopped). Each is checked again just before it goes.

Cache: the download cache's entries (REPLAY_CACHE/downloads/<key>), the BuildKit cache
mounts replay can name as its own (their id is one of REPLAY_BUILD_CACHE's) and the
machine's tool-cache volumes no container mounts (Go's build cache), least recently used
first, until what is left fits the max size; an entry used in the last hour stays (a build
may be reading it). A cache mount whose id the engine does not show is
never touched: the engine's own prune command is printed, with why.
"""
from __future__ import annotations

import datetime
import os
import re
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from . import ledger
from ..config import Settings
from ..units import format_duration
from ..engine import LABEL
from ..engine.inventory import CacheRecord, Inventory
from ..units import format_size

IMAGE_LABEL = f"{LABEL}=image"  # what replay's image builds carry (replay/replayer.py)
TOOL_CACHE_LABEL = f"{LABEL}=toolcache"  # the machine's tool-cache volumes (replay/toolcache.MACHINE)
GRACE_S = 3600.0  # a cache entry used this recently may be read by a build running now
ENGINE_PRUNE = "docker builder prune --filter type=exec.cachemount"
_MOUNT_ID = re.compile(r'with id "([^"]+)"')


@dataclass(frozen=True)
class Item:
    kind: str  # image | download | cache-mount | tool-cache
    name: str  # the image's tags, the entry's path in the cache, the mount's id, the volume's name
    ref: str  # what removal names: the image id, the entry's directory, the build-cache record id, the volume
    size: int  # bytes (an image's own size: layers it shares with others stay)
    last_used: str | None  # RFC 3339 (UTC)
    why: str  # why it goes, or why it stays


@dataclass(frozen=True)
class Sweep:
    """One part of a gc: what goes (or would, in a dry run), what stays and why, and notes."""

    removed: tuple[Item, ...]
    kept: tuple[Item, ...]
    freed: int  # bytes the removed items take
    notes: tuple[str, ...] = ()


def _sweep(removed: Iterable[Item], kept: Iterable[Item], notes: Iterable[str] = ()) -> Sweep:
    gone = tuple(removed)
    return Sweep(gone, tuple(kept), sum(i.size for i in gone), tuple(notes))


def _iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.datetime.fromtimestamp(ts, datetime.UTC).isoformat(timespec="seconds")


def _ago(now: float, ts: float) -> str:
    return format_duration(max(0, int(now - ts)))


# -- images ---------------------------------------------------------------------------------

def images(engine: Inventory, s: Settings, older_than_s: float, now: float | None = None) -> Sweep:
    """Replay's images, sorted into those that go and those that stay (nothing is removed here)."""
    now = time.time() if now is None else now
    use = ledger.usage(s.cache_dir)
    used_by = containers_by_image(engine)
    removed, kept = [], []
    for img in engine.images(label=IMAGE_LABEL):
        tags = list(img.tags)
        ours = [t for t in tags if t.rpartition(":")[0] == s.image_repo]
        if not ours:
            continue  # not under this machine's REPLAY_IMAGE_REPO: not replay's to remove
        recorded = use.last_used.get(img.id)
        last = recorded if recorded is not None else img.created
        item = Item("image", ", ".join(tags), img.id, img.size, _iso(last), "")
        why = _keep_image(img.id, tags, ours, used_by, use, last, now, older_than_s)
        if why:
            kept.append(_why(item, why))
        else:
            source = "" if recorded is not None else " (never in the usage ledger: by its creation)"
            removed.append(_why(item, f"last used {_ago(now, last)} ago{source}, "
                                      f"older than {format_duration(older_than_s)}"))
    return _sweep(removed, kept)


def _keep_image(image_id: str, tags: list[str], ours: list[str], used_by: dict[str, str], use: ledger.Usage,
                last: float, now: float, older_than_s: float) -> str | None:
    foreign = [t for t in tags if t not in ours]
    if foreign:
        return f"also tagged {foreign[0]}, which is not replay's"
    if image_id in used_by:
        return f"used by {used_by[image_id]}"
    if image_id in use.held:
        return f"held by the running replay {use.held[image_id]} (usage ledger)"
    if last >= now - older_than_s:
        return f"used {_ago(now, last)} ago, within {format_duration(older_than_s)}"
    return None


def _why(item: Item, why: str) -> Item:
    return Item(item.kind, item.name, item.ref, item.size, item.last_used, why)


def containers_by_image(engine: Inventory) -> dict[str, str]:
    """Image id -> one container that uses it (any container: docker keeps their images anyway)."""
    out: dict[str, str] = {}
    for c in engine.containers():
        out.setdefault(c.image_id, f"container {c.name} ({c.state})")
    return out


# -- the download cache and BuildKit's cache mounts --------------------------------------------

def caches(engine: Inventory, s: Settings, max_size: int, own_ids: set[str], now: float | None = None) -> Sweep:
    """Least recently used first, until the rest fits `max_size`; `own_ids`: replay's cache mount ids."""
    now = time.time() if now is None else now
    mounts, notes = cache_mounts(engine, own_ids)
    volumes, mounted = tool_caches(engine, s)
    pool = sorted(download_entries(s) + mounts + volumes, key=lambda e: e[1])
    total = sum(i.size for i, _ in pool)
    removed, kept = [], []
    for item, used in pool:
        if total <= max_size:
            break
        if used >= now - GRACE_S:
            kept.append(_why(item, f"used {_ago(now, used)} ago: a build may be reading it"))
            continue
        removed.append(_why(item, f"least recently used ({_ago(now, used)} ago); the cache holds "
                                  f"{format_size(total)}, more than {format_size(max_size)}"))
        total -= item.size
    notes.insert(0, f"cache: {format_size(total)} left of {format_size(max_size)} allowed")
    return _sweep(removed, [*kept, *mounted], notes)


def tool_caches(engine: Inventory, s: Settings) -> tuple[list[tuple[Item, float]], list[Item]]:
    """The machine's tool-cache volumes (Go's build cache, replay/toolcache.py) by their last use (the
    ledger's, else their creation), and those a container mounts now (kept: in use). Removing one costs the
    next replay of that toolchain a fill from its image, never a cold compile (the image holds its own)."""
    used = ledger.volumes_used(s.cache_dir)
    pool, mounted = [], []
    for v in engine.volumes(TOOL_CACHE_LABEL):
        last = used.get(v.name, v.created)
        item = Item("tool-cache", v.name, v.name, v.size, _iso(last), "")
        if v.mounted:
            mounted.append(_why(item, f"mounted by {v.mounted} container(s)"))
        else:
            pool.append((item, last))
    return pool, mounted


def download_entries(s: Settings) -> list[tuple[Item, float]]:
    """Each entry (a directory per download) with its size and last use (its files' newest access)."""
    out = []
    root = s.downloads
    for entry in sorted(root.iterdir()) if root.is_dir() else ():
        size, used = 0, 0.0
        for dirpath, _, files in os.walk(entry):
            for f in files:
                try:
                    st = os.stat(os.path.join(dirpath, f))
                except OSError:
                    continue
                size, used = size + st.st_size, max(used, st.st_atime, st.st_mtime)
        if used:
            name = entry.relative_to(s.cache_dir).as_posix()
            out.append((Item("download", name, str(entry), size, _iso(used), ""), used))
    return out


def cache_mounts(engine: Inventory, own_ids: set[str]) -> tuple[list[tuple[Item, float]], list[str]]:
    """Replay's named BuildKit cache mounts (not in use), and a note for the ones it cannot name."""
    mounts = [r for r in engine.build_cache() if r.type == "exec.cachemount"]
    ours, unnamed, others = [], list[CacheRecord](), 0
    for r in mounts:
        m = _MOUNT_ID.search(r.description)
        if m is None:
            unnamed.append(r)
        elif m.group(1) in own_ids and not r.in_use:
            ours.append((Item("cache-mount", m.group(1), r.id, r.size, _iso(r.last_used), ""), r.last_used))
        else:
            others += 1
    notes = [f"BuildKit cache mounts: {others} of other builds or in use, left alone"] if others else []
    if unnamed:
        size = format_size(sum(r.size for r in unnamed))
        notes.append(f"BuildKit cache mounts: {len(unnamed)} ({size}) whose id this engine does not show (its "
                     "BuildKit names a mount by its target only), so replay cannot tell its own from other builds'; "
                     f"the engine's own command removes them all: {ENGINE_PRUNE}")
    return ours, notes


# -- removal --------------------------------------------------------------------------------

class InUse(Exception):
    """An image taken into use between the sweep and its removal."""


def remove(engine: Inventory, s: Settings, items: Iterable[Item]) -> list[str]:
    """Remove what a sweep found (each image checked again first); the problems, one line each."""
    problems = []
    for item in items:
        try:
            if item.kind == "image":
                _remove_image(engine, s, item)
            elif item.kind == "download":
                shutil.rmtree(Path(item.ref))
            elif item.kind == "tool-cache":
                if not engine.remove_volume(item.ref):
                    raise InUse(f"kept: a replay mounted it meanwhile ({item.name})")
            else:
                engine.prune_build_cache(item.ref)
        except InUse:
            continue  # a replay took it meanwhile: it stays, and the next gc looks again
        except Exception as exc:  # one that cannot go must not keep the others
            problems.append(f"{item.kind} {item.name}: {exc}")
    return problems


def _remove_image(engine: Inventory, s: Settings, item: Item) -> None:
    used_by = containers_by_image(engine).get(item.ref)
    held = ledger.usage(s.cache_dir).held.get(item.ref)
    if used_by or held:
        raise InUse(f"kept: taken into use meanwhile ({used_by or held})")
    for tag in item.name.split(", "):
        engine.remove_image(tag)
    ledger.forget(s.cache_dir, item.ref)
