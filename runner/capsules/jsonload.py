"""Safe loading of untrusted JSON capsules, and the CodeInstances canonical form.

A capsule comes from someone else, so every way a file can be wrong ends in one
CapsuleError line: too big, too deep, not UTF-8, binary, truncated, empty, or an
object holding the same member twice (different JSON readers keep different copies
of a duplicate, so the file means different things to different tools).

Numbers are parsed into int/float subclasses that remember their literal text,
because the CodeInstances id hashes numbers exactly as written (212.40 != 212.4).
"""
from __future__ import annotations

from collections import Counter

import array
import itertools
import json
import math
import sys
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CapsuleError
from ..textsafe import quoted, shown
from .files import read_capped
from .verification import Problem, Severity

# Caps on what a JSON capsule may hold, chosen from what the recorders write (see
# _check_size): within them reading stays within seconds and a few hundred MiB.
MAX_BYTES = 32 * 1024 * 1024
MAX_DEPTH = 200
MAX_CONTAINERS = 300_000
MAX_VALUES = 500_000

_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
# Files a JSON reader should leave to the other readers (NovaFabric YAML, JSON lines).
_NOT_OURS = frozenset({".yaml", ".yml", ".jsonl", ".lock", ".txt"})
# A JSON string, unrolled so the regex engine never backtracks on long strings.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
# Opening brackets become +1 and closing ones -1 (0xff as a signed byte); commas stay; all else goes.
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b"[]{},")


class JsonInt(int):
    """An integer that remembers how it was written."""

    literal: str

    def __new__(cls, literal: str) -> JsonInt:
        try:
            self = super().__new__(cls, literal)
        except ValueError:  # Python refuses to convert thousands of digits (a DoS guard)
            raise ValueError(f"an integer of {len(literal)} digits is too long") from None
        self.literal = literal
        return self


class JsonFloat(float):
    """A non-integer number that remembers how it was written."""

    literal: str

    def __new__(cls, literal: str) -> JsonFloat:
        self = super().__new__(cls, literal)
        self.literal = literal
        return self


class JsonObject(dict[str, Any]):
    """A JSON object (members in file order) that remembers duplicated member names."""

    duplicates: tuple[str, ...] = ()


def _object_hook(found_duplicates: list[bool]) -> Callable[[list[tuple[str, Any]]], JsonObject]:
    def build(pairs: list[tuple[str, Any]]) -> JsonObject:
        obj = JsonObject(pairs)
        if len(obj) != len(pairs):
            names = [key for key, _ in pairs]
            counts = Counter(names)  # linear: a hostile file may repeat a key 100,000 times
            obj.duplicates = tuple(sorted(key for key, n in counts.items() if n > 1))
            found_duplicates.append(True)
        return obj

    return build


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def load(path: Path, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """Parse a JSON file; CapsuleError naming the file on any kind of bad input."""
    text = _text(path, read_capped(path, max_bytes))
    _check_size(path, _skeleton(text), max_depth)
    found_duplicates: list[bool] = []
    try:
        doc = json.loads(
            text,
            object_pairs_hook=_object_hook(found_duplicates),
            parse_int=JsonInt,
            parse_float=JsonFloat,
            parse_constant=_no_constant,
        )
    except json.JSONDecodeError as e:
        # "Unterminated string" means the closing quote was never found before the end.
        ends_early = e.pos >= len(text.rstrip()) or e.msg.startswith("Unterminated string")
        hint = " (the file ends early; truncated?)" if ends_early else ""
        raise CapsuleError(path, f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}{hint}") from None
    except (ValueError, RecursionError) as e:  # huge integer literal, NaN, or a depth the scan missed
        raise CapsuleError(path, f"not valid JSON: {e}") from None
    if found_duplicates:  # walk the tree only to name where the duplicate is
        _refuse_duplicates(path, doc, "")
    return doc


def sniff(path: Path) -> Any | None:
    """The parsed document when ``path`` is a JSON file, None when it is plainly something else.

    Detection runs every reader over every input, so a directory or a YAML file must
    not raise here; a file that claims to be JSON (by name or by a leading ``{``)
    does get the loader's precise error rather than "not a capsule".
    """
    if not path.is_file() or path.suffix.lower() in _NOT_OURS:
        return None
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError as e:
        raise CapsuleError(path, f"cannot read: {e.strerror or e}") from None
    stripped = head.removeprefix(_BOM).lstrip(b" \t\r\n")
    if path.suffix.lower() != ".json" and stripped and not stripped.startswith(b"{"):
        return None
    return load(path)


def _text(path: Path, raw: bytes) -> str:
    if not raw.strip():
        raise CapsuleError(path, "empty file")
    if raw.startswith(_UTF16_BOMS):
        raise CapsuleError(path, "UTF-16 text; a JSON capsule must be UTF-8")
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise CapsuleError(path, f"binary data, not JSON text (NUL byte at offset {nul})")
    try:
        return raw.removeprefix(_BOM).decode("utf-8")  # RFC 8259 lets a parser ignore a BOM
    except UnicodeDecodeError as e:
        raise CapsuleError(path, f"not UTF-8 text: invalid byte 0x{raw[e.start]:02x} at offset {e.start}") from None


def _skeleton(text: str) -> bytes:
    """The brackets and commas of the document, strings cut out first (what they hold does not count).

    What is left of valid JSON is ASCII, so bytes.translate and counting run at C speed.
    """
    return _STRING.sub("", text).encode("utf-8", "replace").translate(_STEPS, _NOT_STRUCTURE)


def _check_size(path: Path, skeleton: bytes, max_depth: int) -> None:
    """Refuse, before parsing, what would take the parser too long or too much memory.

    Parsing costs per value, not per byte (a million small objects take seconds and
    most of a GiB); the caps leave room for the largest documents recorders write
    (twin: 50,000 resolved packages; CodeInstances: 10,000 calls with their headers).
    """
    containers = skeleton.count(1)
    if containers > max_depth:
        brackets = skeleton.replace(b",", b"")
        if max(itertools.accumulate(array.array("b", brackets))) > max_depth:
            raise CapsuleError(path, f"JSON nested more than {max_depth} levels deep")
    if containers > MAX_CONTAINERS:
        raise CapsuleError(path, f"JSON holds {containers:,} objects and lists, over the limit of {MAX_CONTAINERS:,}")
    values = skeleton.count(b",") + containers
    if values > MAX_VALUES:
        raise CapsuleError(path, f"JSON holds more than {MAX_VALUES:,} values, over the limit")


def _refuse_duplicates(path: Path, value: Any, where: str) -> None:
    if isinstance(value, JsonObject):
        if value.duplicates:
            name = json.dumps(value.duplicates[0], ensure_ascii=False)
            raise CapsuleError(path, f"{where or 'top level'}: member {name} appears more than once")
        for key, child in value.items():
            _refuse_duplicates(path, child, member_path(where, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            _refuse_duplicates(path, child, f"{where}[{i}]")


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def member_path(where: str, key: str) -> str:
    """JSON path of a member: ``command.argv``, or ``env["npm_config x"]`` for odd names."""
    step = key if _IDENT.fullmatch(key) else f"[{json.dumps(key, ensure_ascii=False)}]"
    if not where:
        return step
    return f"{where}{step}" if step.startswith("[") else f"{where}.{step}"


# --- lone UTF-16 surrogates ("\\ud800" escapes: valid JSON, but no text) ---------------


def find_lone_surrogate(doc: Any) -> str | None:
    """The JSON path of the first string (or member name) holding a lone surrogate, else None."""
    stack: list[tuple[str, Any]] = [("", doc)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            if _LONE_SURROGATE.search(value):
                return where or "top level"
        elif isinstance(value, dict):
            for key, child in value.items():
                if _LONE_SURROGATE.search(key):
                    return member_path(where, _LONE_SURROGATE.sub("\ufffd", key))
                stack.append((member_path(where, key), child))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", child) for i, child in enumerate(value))
    return None


def replace_lone_surrogates(value: Any) -> Any:
    """The document with every lone surrogate turned into U+FFFD, as Go's decoder reads it."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, JsonObject):
        out = JsonObject((_LONE_SURROGATE.sub("\ufffd", k), replace_lone_surrogates(v)) for k, v in value.items())
        out.duplicates = value.duplicates
        return out
    if isinstance(value, list):
        return [replace_lone_surrogates(v) for v in value]
    return value


# --- CodeInstances canonical form -------------------------------------------------

_ESCAPES = {0x22: '\\"', 0x5C: "\\\\", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"}
_ESCAPE_TABLE = {c: _ESCAPES.get(c, f"\\u{c:04x}") for c in range(0x20)} | _ESCAPES
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def canonical(value: Any) -> bytes:
    """The canonical bytes: members sorted by code point, no whitespace, numbers as written."""
    parts: list[str] = []
    _emit(value, parts)
    return "".join(parts).encode("utf-8")


def _string(s: str) -> str:
    # A lone surrogate (from a "\ud800" escape) has no UTF-8 form; Go's decoder, which
    # CodeInstances uses, turns it into U+FFFD, so the id is computed the same way here.
    return '"' + _LONE_SURROGATE.sub("\ufffd", s).translate(_ESCAPE_TABLE) + '"'


def _emit(value: Any, parts: list[str]) -> None:
    if value is None or isinstance(value, bool):
        parts.append({None: "null", True: "true", False: "false"}[value])
    elif isinstance(value, (JsonInt, JsonFloat)):
        parts.append(value.literal)
    elif isinstance(value, (int, float)):
        parts.append(json.dumps(value))
    elif isinstance(value, str):
        parts.append(_string(value))
    elif isinstance(value, list):
        parts.append("[")
        for i, item in enumerate(value):
            parts.append("," if i else "")
            _emit(item, parts)
        parts.append("]")
    elif isinstance(value, dict):
        fixed = ((_LONE_SURROGATE.sub("\ufffd", k), v) for k, v in value.items())
        members = sorted(fixed, key=lambda kv: kv[0])
        parts.append("{")
        for i, (key, item) in enumerate(members):
            parts.append(("," if i else "") + _string(key) + ":")
            _emit(item, parts)
        parts.append("}")
    else:
        raise TypeError(f"not a JSON value: {type(value).__name__}")


# --- reading a parsed document against a documented shape ------------------------


@dataclass(frozen=True)
class Kind:
    """A documented JSON type: its name for messages and a test."""

    name: str
    test: Callable[[Any], bool]


# Recorders write 64-bit integers and IEEE doubles; a value beyond them is no measurement
# and would overflow wherever it is used (float(10**400) raises, 1e400 parses as inf).
INT_RANGE = (-(2**63), 2**64 - 1)


def is_integer(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and INT_RANGE[0] <= v <= INT_RANGE[1]


def is_number(v: Any) -> bool:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    return math.isfinite(v) if isinstance(v, float) else abs(v) <= sys.float_info.max


STRING = Kind("a string", lambda v: isinstance(v, str))
INTEGER = Kind("an integer", is_integer)
NUMBER = Kind("a number", is_number)
BOOLEAN = Kind("true or false", lambda v: isinstance(v, bool))
OBJECT = Kind("an object", lambda v: isinstance(v, dict))
LIST = Kind("a list", lambda v: isinstance(v, list))
STRINGS = Kind("a list of strings", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v))


def one_of(*choices: str) -> Kind:
    return Kind("one of " + ", ".join(f'"{c}"' for c in choices), lambda v: isinstance(v, str) and v in choices)


def describe(v: Any) -> str:
    """What a JSON value is, for 'expected X, got Y' messages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return quoted(v, 40)
    if isinstance(v, (int, float)):
        literal = shown(getattr(v, "literal", None) or v, 40)
        return literal if is_number(v) and (is_integer(v) or isinstance(v, float)) else f"{literal} (out of range)"
    return "a list" if isinstance(v, list) else "an object"


class Shape:
    """Collects every problem met while reading a document, each named by its JSON path.

    A reader fetches members through ``get``; a wrong or missing member is recorded
    and read as None, and members of a None parent are skipped silently so one bad
    object is reported once, not once per member.
    """

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, severity: Severity, where: str, message: str) -> None:
        self.problems.append(Problem(severity, message, where or None))

    def error(self, where: str, message: str) -> None:
        self.add("error", where, message)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    def get(self, obj: Any, where: str, key: str, kind: Kind, *, optional: bool = False, nullable: bool = False) -> Any:
        if not isinstance(obj, dict):
            return None
        path = member_path(where, key)
        if key not in obj:
            if not optional:
                self.error(path, "missing")
            return None
        value = obj[key]
        if value is None and nullable:
            return None
        if not kind.test(value):
            self.error(path, f"expected {kind.name}{' or null' if nullable else ''}, got {describe(value)}")
            return None
        return value

    def entries(self, obj: Any, where: str, key: str, kind: Kind, *, optional: bool = False) -> dict[str, Any]:
        """An object used as a map (``runtimes``, ``env``): the entries of the right kind."""
        found = self.get(obj, where, key, OBJECT, optional=optional)
        path = member_path(where, key)
        good: dict[str, Any] = {}
        for name, value in (found or {}).items():
            if kind.test(value):
                good[name] = value
            else:
                self.error(member_path(path, name), f"expected {kind.name}, got {describe(value)}")
        return good

    def raise_errors(self, path: Path) -> None:
        """read() refuses a document with any error: the first one, and how many more."""
        errors = self.errors
        if errors:
            first = errors[0]
            extra = len(errors) - 1
            more = f" (and {extra} more problem{'s' if extra > 1 else ''})" if extra else ""
            where = f"{first.where}: " if first.where else ""
            raise CapsuleError(path, f"{where}{first.message}{more}")
