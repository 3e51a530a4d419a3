"""Caps on what a capsule may hold, counted on the parsed document before any model is built.

Chosen from what the recorders write, so that no capsule a recorder made is refused,
while reading, inspecting and rendering any accepted one stays within seconds:

| what | cap | why |
| --- | --- | --- |
| twin `repo.diff` | 200,000 bytes | twin cuts the diff there |
| twin `command.failure.outputTail` | 64,000 characters | twin keeps the last 200 lines, at most 64,000 characters |
| twin `resolved.node` / `resolved.python` | 50,000 packages each | twin records up to 50,000 |
| twin `repo.untracked` | 200 names | twin records at most 200 |
| twin `command.failure.keyLines` | 64 lines | twin writes 12 (verify warns above 12) |
| twin env facts | 4,096 | real environments hold tens to a few hundred variables (twin drops session noise); the diff view of 10,000 takes 8 s |
| one argv string, one env value | 131,072 characters | Linux's MAX_ARG_STRLEN: the kernel refuses a longer one |
| argv in all | 2,097,152 characters and 32,768 strings | Linux's ARG_MAX |
| TZ and locale values | 256 characters | zone names and POSIX TZ rules are short; glibc refuses long ones |
| any other string | 8,192 characters | versions, names, paths, URLs: PATH_MAX is 4,096 |
| twin `runtimes`, `tools`, `packageManagers`, `redaction.scrubbed` | 1,000 entries | twin probes 8 runtimes, 13 tools, 9 managers |
| CodeInstances `calls` | 10,000 | one run's HTTP calls |
| CodeInstances `values` | 100,000 | one run's clock and random values |
| CodeInstances headers per message | 1,000 | servers refuse more than ~100 |
| CodeInstances URL, header name or value | 65,536 characters | servers refuse more than 8-64 KiB |
| CodeInstances body, stdout, stderr (text or base64) | 16 MiB of text each | within the 32 MiB file cap |

Caps that hold before parsing (jsonload, yamlload, files): a JSON capsule is at most
32 MiB with at most 300,000 objects and lists and 500,000 values (parsing costs per
value: a million small objects take 7 s and most of a GiB); a NovaFabric YAML file at
most 16 MiB, 250,000 nodes and 64 levels, no aliases; a recorded output 64 MiB; a file
name 255 bytes and a path 4,096 (Linux's NAME_MAX and PATH_MAX: longer ones fail with
ENAMETOOLONG); verify lists at most 100,000 files of a NovaFabric directory and looks at
10,000 worker capsules inside a distributed run's parent (never at its siblings).

Caps on a capsule given as a URL (download.py, archive.py): the download at most
REPLAY_CAPSULE_MAX_BYTES (64 MiB) in at most REPLAY_CAPSULE_TIMEOUT seconds in all (120),
connecting, redirects, headers and body included; a packed NovaFabric directory unpacks to at most 256 MiB and
10,000 entries, counted while unpacking (what is written, not what the headers say).
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import CapsuleError

DIFF_BYTES = 200_000
OUTPUT_TAIL_CHARS = 64_000
RESOLVED_PACKAGES = 50_000
UNTRACKED = 200
KEY_LINES = 64
ENV_FACTS = 4_096
ARG_CHARS = 131_072
ARGV_CHARS = 2_097_152
ARGV_STRINGS = 32_768
LOCALE_CHARS = 256
STRING_CHARS = 8_192
SMALL_MAPS = 1_000
CALLS = 10_000
VALUES = 100_000
HEADERS = 1_000
HTTP_TEXT_CHARS = 65_536
BODY_CHARS = 16 * 1024 * 1024
UNPACKED_BYTES = 256 * 1024 * 1024
UNPACKED_ENTRIES = 10_000

# A rule names a member by its path (``*`` any key or index) and caps its size.
Rule = tuple[tuple[str, ...], int, str, Callable[[Any], int]]


def _count(v: Any) -> int:
    return len(v) if isinstance(v, (dict, list)) else 0


def _chars(v: Any) -> int:
    return len(v) if isinstance(v, str) else 0


def _utf8_bytes(v: Any) -> int:
    return len(v.encode("utf-8", "surrogatepass")) if isinstance(v, str) else 0


def _argv_chars(v: Any) -> int:
    return sum(len(a) for a in v if isinstance(a, str)) if isinstance(v, list) else 0


def check(path: Path, doc: Any, rules: tuple[Rule, ...], long_strings: frozenset[tuple[str, ...]]) -> None:
    """CapsuleError naming the first member over its cap, then any string over STRING_CHARS.

    ``long_strings``: the members (patterns) whose strings a rule caps instead.
    """
    for pattern, cap, what, size in rules:
        for where, value in _matches(doc, pattern):
            n = size(value)
            if n > cap:
                raise CapsuleError(path, f"{_name(where)}: {n:,} {what}, over the limit of {cap:,}")
    _check_strings(path, doc, long_strings)


def _matches(doc: Any, pattern: tuple[str, ...]) -> list[tuple[tuple[str, ...], Any]]:
    found: list[tuple[tuple[str, ...], Any]] = [((), doc)]
    for step in pattern:
        nxt = []
        for where, node in found:
            if isinstance(node, dict):
                items = node.items() if step == "*" else ([(step, node[step])] if step in node else [])
                nxt += [((*where, str(k)), v) for k, v in items]
            elif isinstance(node, list) and step == "*":
                nxt += [((*where, str(i)), v) for i, v in enumerate(node)]
        found = nxt
    return found


def _check_strings(path: Path, doc: Any, long_strings: frozenset[tuple[str, ...]]) -> None:
    """Every string (and member name) within STRING_CHARS, except where a rule caps it."""
    stack: list[tuple[tuple[str, ...], Any]] = [((), doc)]
    while stack:
        where, value = stack.pop()
        if _is_long_allowed(where, long_strings):
            continue
        if isinstance(value, str) and len(value) > STRING_CHARS:
            raise CapsuleError(path, f"{_name(where)}: a string of {len(value):,} characters, over the limit of {STRING_CHARS:,}")
        if isinstance(value, dict):
            for key, child in value.items():
                if len(key) > STRING_CHARS:
                    raise CapsuleError(path, f"{_name(where)}: a member name of {len(key):,} characters, over the limit of {STRING_CHARS:,}")
                stack.append(((*where, key), child))
        elif isinstance(value, list):
            stack.extend(((*where, str(i)), child) for i, child in enumerate(value))


def _is_long_allowed(where: tuple[str, ...], patterns: frozenset[tuple[str, ...]]) -> bool:
    return any(len(p) == len(where) and all(s in ("*", w) for s, w in zip(p, where)) for p in patterns)


def _name(where: tuple[str, ...]) -> str:
    """``command.argv[3]``, as the readers name members."""
    return "".join(f"[{s}]" if s.isdigit() else (f".{s}" if i else s) for i, s in enumerate(where)) or "top level"


def argv_rules(prefix: tuple[str, ...]) -> tuple[Rule, ...]:
    return (
        ((*prefix, "argv"), ARGV_STRINGS, "arguments", _count),
        ((*prefix, "argv"), ARGV_CHARS, "characters of arguments", _argv_chars),
        ((*prefix, "argv", "*"), ARG_CHARS, "characters", _chars),
    )


TWIN_RULES: tuple[Rule, ...] = (
    *argv_rules(("command",)),
    (("repo", "diff"), DIFF_BYTES, "bytes", _utf8_bytes),
    (("command", "failure", "outputTail"), OUTPUT_TAIL_CHARS, "characters", _chars),
    (("command", "failure", "keyLines"), KEY_LINES, "lines", _count),
    (("resolved", "node"), RESOLVED_PACKAGES, "packages", _count),
    (("resolved", "python"), RESOLVED_PACKAGES, "packages", _count),
    (("repo", "untracked"), UNTRACKED, "names", _count),
    (("env",), ENV_FACTS, "variables", _count),
    (("env", "*", "value"), ARG_CHARS, "characters", _chars),
    (("locale", "timeZone"), LOCALE_CHARS, "characters", _chars),
    (("locale", "locale"), LOCALE_CHARS, "characters", _chars),
    (("runtimes",), SMALL_MAPS, "entries", _count),
    (("tools",), SMALL_MAPS, "entries", _count),
    (("packageManagers",), SMALL_MAPS, "entries", _count),
    (("redaction", "scrubbed"), SMALL_MAPS, "entries", _count),
    (("redaction", "valuesIncluded"), ENV_FACTS, "names", _count),
)
TWIN_LONG = frozenset({("command", "argv", "*"), ("repo", "diff"), ("command", "failure", "outputTail"),
                       ("command", "failure", "keyLines", "*"), ("env", "*", "value")})

_BODIES = (("result", "stdout", "*"), ("result", "stderr", "*"), ("calls", "*", "request", "body", "*"),
           ("calls", "*", "response", "body", "*"))
CODEINSTANCES_RULES: tuple[Rule, ...] = (
    *argv_rules(("command",)),
    (("calls",), CALLS, "calls", _count),
    (("values",), VALUES, "values", _count),
    (("calls", "*", "request", "headers"), HEADERS, "headers", _count),
    (("calls", "*", "response", "headers"), HEADERS, "headers", _count),
    (("calls", "*", "request", "url"), HTTP_TEXT_CHARS, "characters", _chars),
    (("calls", "*", "request", "headers", "*", "*"), HTTP_TEXT_CHARS, "characters", _chars),
    (("calls", "*", "response", "headers", "*", "*"), HTTP_TEXT_CHARS, "characters", _chars),
    (("calls", "*", "error", "message"), HTTP_TEXT_CHARS, "characters", _chars),
    (("values", "*", "value"), BODY_CHARS, "characters", _chars),
    *((body, BODY_CHARS, "characters", _chars) for body in _BODIES),
)
CODEINSTANCES_LONG = frozenset({
    ("command", "argv", "*"), *_BODIES, ("values", "*", "value"), ("calls", "*", "request", "url"), ("calls", "*", "error", "message"),
    ("calls", "*", "request", "headers", "*", "*"), ("calls", "*", "response", "headers", "*", "*"),
})
