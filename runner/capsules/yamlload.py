"""Safe loading of an untrusted capsule directory's YAML files and paths.

A capsule comes from someone else. Every way a YAML file can be wrong ends in one
CapsuleError line: too big, not UTF-8, binary, too deep, an alias (the "billion
laughs" bomb expands a few hundred bytes into gigabytes once anything walks the
tree), a member given twice (tools disagree on which copy wins), or a value JSON
cannot hold. Paths named inside a capsule must stay inside its directory.
"""
from __future__ import annotations

import math
import re
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from ..errors import CapsuleError
from ..textsafe import shown
from .files import read_capped
from .jsonload import INT_RANGE

MAX_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 64
# PyYAML builds ~150k nodes a second; this bounds a hostile file to seconds while
# leaving room for evidence_digests of some 40,000 files.
MAX_NODES = 250_000
# Linux's limits: a longer name fails every file call with ENAMETOOLONG.
NAME_MAX = 255
PATH_MAX = 4096

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C parser when libyaml is present
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:")


class _Loader(_Base):  # type: ignore[misc]
    """SafeLoader that keeps timestamps as strings and refuses duplicate keys.

    Timestamps stay strings because the seal's payload is JSON: a manifest parsed into
    datetime objects could never equal it by value.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[str] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                if key_node.value in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key_node.value!r} appears more than once", key_node.start_mark
                    )
                seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)  # type: ignore[no-any-return]


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != _TIMESTAMP]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class PathEscape(ValueError):
    """A path named inside a capsule that does not stay inside its directory."""


def load_yaml(path: Path) -> Any:
    """Parse one YAML document into plain JSON-like data; CapsuleError on any bad input."""
    text = _text(path, read_capped(path, MAX_BYTES))
    try:
        _check_events(path, text)
        data = yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a SafeLoader
    except yaml.YAMLError as e:
        raise CapsuleError(path, f"not valid YAML: {_one_line(e)}") from None
    except (ValueError, OverflowError) as e:  # an integer of thousands of digits (Python's DoS guard)
        raise CapsuleError(path, f"not valid YAML: a value Python cannot hold ({' '.join(str(e).split())[:80]})") from None
    _check_json_like(path, data)
    return data


def load_yaml_mapping(path: Path) -> dict[str, Any]:
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise CapsuleError(path, f"expected a YAML mapping, found {_kind(data)}")
    return data


def _text(path: Path, raw: bytes) -> str:
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise CapsuleError(path, f"binary data, not YAML text (NUL byte at offset {nul})")
    try:
        return raw.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError as e:
        raise CapsuleError(path, f"not UTF-8 text: invalid byte 0x{raw[e.start]:02x} at offset {e.start}") from None


def _check_events(path: Path, text: str) -> None:
    """Refuse aliases, deep nesting and node floods before anything is built."""
    depth = nodes = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent):
            raise CapsuleError(path, f"YAML alias *{event.anchor} refused (aliases can expand without bound)")
        if isinstance(event, yaml.DocumentStartEvent) and nodes:
            raise CapsuleError(path, "more than one YAML document")
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise CapsuleError(path, f"YAML nested more than {MAX_DEPTH} levels deep")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
        if isinstance(event, yaml.NodeEvent):
            nodes += 1
            if nodes > MAX_NODES:
                raise CapsuleError(path, f"YAML holds more than {MAX_NODES} nodes")


def _check_json_like(path: Path, data: Any) -> None:
    """Only what JSON can say: the seal compares this data with a JSON payload."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        value, where = stack.pop()
        if isinstance(value, dict):
            for key, child in value.items():
                if not isinstance(key, str) or _LONE_SURROGATE.search(key):
                    raise CapsuleError(path, f"{where or 'top level'}: key {shown(repr(key), 60)} is not a string")
                stack.append((child, f"{where}.{shown(key, 40)}" if where else shown(key, 40)))
        elif isinstance(value, list):
            stack.extend((child, f"{where}[{i}]") for i, child in enumerate(value))
        elif not (value is None or isinstance(value, (str, int, float, bool))):
            raise CapsuleError(path, f"{where or 'top level'}: {_kind(value)} is not a plain value")
        elif isinstance(value, str) and _LONE_SURROGATE.search(value):
            # "\ud800" in a double-quoted scalar: not text any program can receive or a terminal print.
            raise CapsuleError(path, f"{where or 'top level'}: holds a lone UTF-16 surrogate, which is not text")
        elif isinstance(value, float) and not math.isfinite(value):
            raise CapsuleError(path, f"{where}: {value} is not a number JSON can hold")
        elif isinstance(value, int) and not isinstance(value, bool) and not INT_RANGE[0] <= value <= INT_RANGE[1]:
            raise CapsuleError(path, f"{where}: an integer beyond 64 bits")


def _kind(value: Any) -> str:
    names = {dict: "a mapping", list: "a list", str: "a string", type(None): "an empty document"}
    return names.get(type(value), type(value).__name__)


def _one_line(e: yaml.YAMLError) -> str:
    problem = getattr(e, "problem", None)
    mark = getattr(e, "problem_mark", None)
    if problem and mark is not None:
        return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"
    return " ".join(str(e).split())[:200]


def inside(root: Path, rel: object) -> Path:
    """``root/rel`` when it stays inside ``root`` and passes through no symlink; PathEscape otherwise."""
    if not isinstance(rel, str) or not rel:
        raise PathEscape(f"{shown(repr(rel), 60)} is not a relative path")
    if "\\" in rel or "\x00" in rel:
        raise PathEscape(f"{shown(repr(rel), 60)} is not a '/'-separated relative path")
    if len(rel.encode("utf-8", "surrogatepass")) > PATH_MAX or any(
            len(part.encode("utf-8", "surrogatepass")) > NAME_MAX for part in rel.split("/")):
        raise PathEscape(f"{shown(repr(rel), 60)} is longer than a file name or path can be ({NAME_MAX}/{PATH_MAX} bytes)")
    pure = PurePosixPath(rel)
    if pure.is_absolute() or _WINDOWS_DRIVE.match(rel):
        raise PathEscape(f"{shown(repr(rel), 60)} is an absolute path")
    if ".." in pure.parts:
        raise PathEscape(f"{shown(repr(rel), 60)} climbs out with '..'")
    try:
        real_root = root.resolve()
        target = (root / pure).resolve()
    except (OSError, RuntimeError) as e:  # a symlink loop
        raise PathEscape(f"{shown(repr(rel), 60)} cannot be resolved: {e}") from None
    if not target.is_relative_to(real_root):
        raise PathEscape(f"{shown(repr(rel), 60)} resolves outside the capsule (through a symlink)")
    link = symlink_on(root, pure)
    if link is not None:
        raise PathEscape(f"{shown(repr(rel), 60)} passes through the symlink {shown(link, 60)}: replay reads no "
                         "capsule file through a symlink (a seal binds paths, a link would change what they mean)")
    return root / pure


def symlink_on(root: Path, rel: PurePosixPath) -> str | None:
    """The first component of ``root/rel`` below ``root`` that is a symlink, relative; None when none is.

    The one view of a capsule's tree: verify's walk never follows a link, so the reader never reads
    through one either (a directory replaced by a link to sealed files elsewhere would otherwise pass)."""
    here = root
    for i, part in enumerate(rel.parts):
        here = here / part
        if here.is_symlink():
            return "/".join(rel.parts[: i + 1])
    return None
