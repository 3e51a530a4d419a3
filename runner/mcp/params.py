"""A tool's arguments: declared once, as data, and from that declaration its JSON Schema
(the tool's inputSchema), its validation (one clear message per bad argument) and the
argv of the CLI command it runs.

An agent's arguments become a list of words for `python -m runner`, never a shell line:
every option is spelled `--name=value` and every positional comes after `--`, so a
value that starts with `-` is a value, not an option.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..durations import HELP as DURATION_HELP
from ..durations import parse_duration
from ..build.validate import is_valid, pattern

Kind = Literal["path", "paths", "env", "count", "duration", "flag", "commit", "text", "choice"]

_ENV_ITEM = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
MAX_ITEMS = 100  # a list argument (env, trust keys): more than any real call, bounded
MAX_TEXT = 4096  # PATH_MAX: no word an agent passes is longer


class ArgumentError(ValueError):
    """A tool argument that does not fit its declaration: the message names it."""


@dataclass(frozen=True)
class Param:
    name: str
    kind: Kind
    help: str
    option: str | None = None  # "--repo"; None: a positional argument, in declaration order
    required: bool = False
    low: int = 1  # a count's bounds
    high: int = 50
    choices: tuple[str, ...] = ()

    def schema(self) -> dict[str, Any]:
        """The JSON Schema of this argument (the tool's inputSchema property)."""
        text = {"type": "string", "minLength": 1, "maxLength": MAX_TEXT}
        by_kind: dict[str, dict[str, Any]] = {
            "path": text,
            "text": text,
            "paths": {"type": "array", "items": text, "maxItems": MAX_ITEMS},
            "env": {"type": "array", "items": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*="},
                    "maxItems": MAX_ITEMS},
            "count": {"type": "integer", "minimum": self.low, "maximum": self.high},
            "duration": {"anyOf": [{"type": "number", "minimum": 1}, {"type": "string", "minLength": 1}]},
            "flag": {"type": "boolean"},
            "commit": {"type": "string", "pattern": pattern("commit")},
            "choice": {"enum": list(self.choices)},
        }
        return {**by_kind[self.kind], "description": self.help}

    def words(self, value: Any) -> list[str]:
        """The CLI words for a validated value (options only; positionals: `value` itself)."""
        assert self.option is not None
        if self.kind == "flag":
            return [self.option] if value else []
        if isinstance(value, list):
            return [f"{self.option}={item}" for item in value]
        return [f"{self.option}={value}"]

    def check(self, value: Any) -> Any:
        """The value as the CLI takes it; ArgumentError naming the argument otherwise."""
        check = _CHECKS[self.kind]
        return check(self, value)


def _text(p: Param, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ArgumentError(f"{p.name}: expected a non-empty string, got {_shown(value)}")
    if "\0" in value:
        raise ArgumentError(f"{p.name}: contains a NUL character")
    if len(value) > MAX_TEXT:
        raise ArgumentError(f"{p.name}: longer than {MAX_TEXT} characters")
    return value


def _path(p: Param, value: Any) -> str:
    text = _text(p, value)
    if text == "-":
        raise ArgumentError(f"{p.name}: '-' (standard input) is not available over MCP; give a path or URL")
    return text


def _list(p: Param, value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise ArgumentError(f"{p.name}: expected a list of strings, got {_shown(value)}")
    if len(value) > MAX_ITEMS:
        raise ArgumentError(f"{p.name}: more than {MAX_ITEMS} items")
    return value


def _paths(p: Param, value: Any) -> list[str]:
    return [_path(p, item) for item in _list(p, value)]


def _env(p: Param, value: Any) -> list[str]:
    items = _list(p, value)
    for item in items:
        if not isinstance(item, str) or "\0" in item or not _ENV_ITEM.fullmatch(item):
            raise ArgumentError(f"{p.name}: {_shown(item)}: expected NAME=VALUE (NAME= sets it empty)")
    return items


def _count(p: Param, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not p.low <= value <= p.high:
        raise ArgumentError(f"{p.name}: expected an integer from {p.low} to {p.high}, got {_shown(value)}")
    return value


def _duration(p: Param, value: Any) -> str:
    """A number is seconds (as the CLI's bare number); a string is a duration like 15m."""
    try:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError
        seconds = parse_duration(value)
    except ValueError:
        raise ArgumentError(f"{p.name}: expected seconds (a number) or a duration ({DURATION_HELP}), "
                            f"got {_shown(value)}") from None
    if not math.isfinite(seconds) or seconds < 1:
        raise ArgumentError(f"{p.name}: at least 1 second, got {_shown(value)}")
    return f"{seconds:g}s"  # with its unit: never read as another tool's minutes


def _flag(p: Param, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ArgumentError(f"{p.name}: expected true or false, got {_shown(value)}")
    return value


def _commit(p: Param, value: Any) -> str:
    if not isinstance(value, str) or not is_valid("commit", value):
        raise ArgumentError(f"{p.name}: expected a commit id (7-64 hex digits), got {_shown(value)}")
    return value


def _choice(p: Param, value: Any) -> str:
    if value not in p.choices:
        raise ArgumentError(f"{p.name}: one of {', '.join(p.choices)}, got {_shown(value)}")
    return str(value)


_CHECKS = {"path": _path, "text": _text, "paths": _paths, "env": _env, "count": _count, "duration": _duration,
           "flag": _flag, "commit": _commit, "choice": _choice}


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


def input_schema(params: Sequence[Param]) -> dict[str, Any]:
    return {"type": "object", "properties": {p.name: p.schema() for p in params},
            "required": [p.name for p in params if p.required], "additionalProperties": False}


def argv(words: Sequence[str], params: Sequence[Param], arguments: Mapping[str, Any] | None) -> list[str]:
    """The command's words, its options, `--`, then its positionals; ArgumentError for a bad argument."""
    given = dict(arguments or {})
    known = {p.name: p for p in params}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise ArgumentError(f"unknown argument {unknown[0]!r} (this tool takes: {', '.join(known) or 'none'})")
    options: list[str] = []
    positionals: list[str] = []
    for p in params:
        if given.get(p.name) is None:
            if p.required:
                raise ArgumentError(f"{p.name}: required ({p.help})")
            continue
        value = p.check(given[p.name])
        if p.option is None:
            positionals.append(value)
        else:
            options.extend(p.words(value))
    return [*words, *options, "--", *positionals]
