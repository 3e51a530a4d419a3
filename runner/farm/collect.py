"""Collecting a night's capsules from SOURCE...: folders, list files, capsules.

A folder is searched recursively: a directory holding capsule.yaml is a NovaFabric
capsule (not searched further), a JSON file that twin or CodeInstances recognises is
a capsule, other files are not capsules and are passed over. A SOURCE file that is
not JSON (by name or content) is a list file: one capsule or folder per line,
relative to the list, `#` comments. Each capsule is known by the hash of its content,
so the same capsule collected twice (two paths, a renamed copy) is replayed once.

Each capsule is opened here, once (capsules/opening.py: detection, verification and the
model from one parse); the night plans from that read, and judges the trust policy then.
"""
from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..capsules.files import read_capped
from ..capsules.opening import Opened, claimed_format, open_capsule
from ..capsules.trust import Trust
from ..errors import CapsuleError, NotACapsule, PathError, UsageError
from .ids import content_id
from .store import NightEntry

MANIFEST = "capsule.yaml"
MAX_LIST_BYTES = 16 * 2**20  # a list of some 100,000 capsules
_SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv"}
_MAX_LIST_DEPTH = 8  # list files naming list files: stop a loop


def _head(path: Path, size: int = 4096) -> bytes | None:
    """The first bytes of a regular file; None for anything else: a source or a list may name a
    FIFO (a read would block forever) or a device such as /dev/zero (it would never end)."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return None
        with path.open("rb") as f:
            return f.read(size)
    except OSError:
        return None


Opening = Opened | Exception  # the one read of a capsule, or why it could not be read (judged broken)


@dataclass(frozen=True)
class Collected:
    entries: tuple[NightEntry, ...]
    opened: Mapping[str, Opening]  # by capsule id


def _search(folder: Path) -> Iterator[tuple[Path, bool]]:
    """(path, found by the search): a JSON file found is a capsule only when it opens as one
    or names a format (a malformed one is listed, as broken, rather than passed over)."""
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        if MANIFEST in files:
            dirs[:] = []
            yield here, True
            continue
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            if name.lower().endswith(".json"):
                yield here / name, True


def _is_list_file(path: Path) -> bool:
    """Not JSON by name or content; what is no regular file is a capsule path (judged broken later)."""
    if path.suffix.lower() == ".json" or path.name == MANIFEST:
        return False
    head = _head(path)
    return head is not None and not head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{")


def _list_entries(path: Path) -> list[Path]:
    try:
        text = read_capped(path, MAX_LIST_BYTES).decode("utf-8")
    except CapsuleError as exc:
        raise UsageError(f"{path}: not a readable list of capsules ({exc.problem})") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not a readable list of capsules (not UTF-8 text)") from None
    out = []
    for line in text.splitlines():
        entry = line.strip()
        if entry and not entry.startswith("#"):
            p = Path(entry).expanduser()
            out.append(p if p.is_absolute() else path.parent / p)
    return out


def _expand(source: Path, depth: int, from_list: bool) -> Iterator[tuple[Path, bool]]:
    try:
        source.stat()
    except OSError as exc:  # missing, a name too long, a symlink loop, no permission...
        if not from_list:
            raise UsageError(PathError.of(source, exc).line()) from None
        yield source, False  # named by a list: reported as broken (the reader names why), the others go on
        return
    if source.is_dir():
        if (source / MANIFEST).exists():
            yield source, False
        else:
            yield from _search(source)
        return
    if _is_list_file(source):
        if depth >= _MAX_LIST_DEPTH:
            raise UsageError(f"{source}: list files nested more than {_MAX_LIST_DEPTH} deep")
        for entry in _list_entries(source):
            yield from _expand(entry, depth + 1, True)
        return
    yield source, False


def _open(path: Path, trust: Trust) -> Opening:
    try:
        return open_capsule(path, trust.showing())  # the policy is the night's to apply, per capsule
    except Exception as exc:  # judged broken (or infra-error) when the night prepares it
        return exc


def _format(path: Path, opening: Opening) -> str:
    return opening.capsule.provenance.format.value if isinstance(opening, Opened) else claimed_format(path)


def collect(sources: Sequence[Path], trust: Trust = Trust()) -> Collected:
    """Every capsule the sources name, once each, in the order found, each opened once."""
    if not sources:
        raise UsageError("farm run: name at least one SOURCE (a folder, a list file or a capsule)")
    by_id: dict[str, NightEntry] = {}
    opened: dict[str, Opening] = {}
    for source in sources:
        for path, searched in _expand(source, 0, False):
            shown = str(path)
            cid = content_id(path)
            seen = by_id.get(cid)
            if seen is None:
                opening = _open(path, trust)
                if searched and _passed_over(path, opening):
                    continue
                by_id[cid], opened[cid] = NightEntry(cid, shown, _format(path, opening)), opening
            elif shown != seen.path and shown not in seen.also_at:
                by_id[cid] = NightEntry(cid, seen.path, seen.format, (*seen.also_at, shown))
    return Collected(tuple(by_id.values()), opened)


def _passed_over(path: Path, opening: Opening) -> bool:
    """A file a folder search found that is no capsule (a package.json): not listed at all."""
    if isinstance(opening, NotACapsule):
        return True
    return isinstance(opening, CapsuleError) and claimed_format(path) == "unknown"
