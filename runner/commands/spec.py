"""What a command is, as data: its name, help, parameters, result, exit rule and whether it
only reads. Each command is declared once (catalog.py); from the declaration come the typer
command (runner/cli/build.py), the MCP tool (runner/mcp/tools.py), the list of JSON result
schemas (runner/schemas), the help lists and the docs' option tables (scripts/docs_gen.py).

A parameter's *kind* says everything both front ends need to know about a value: the Python
type the CLI parses it to, the JSON Schema an MCP client is given, and the one check both run
(a bad value is a usage error naming the option, exit 2, on either side).

An agent's arguments become words for `python -m runner`, never a shell line: every option is
spelled `--name=value` and every positional comes after `--`, so a value that starts with `-`
is a value, not an option.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..units import DURATION_HELP
from ..units import parse_duration

Kind = Literal["capsule", "path", "paths", "text", "texts", "env", "count", "number", "duration", "size", "flag",
               "commit", "choice"]

MAX_ITEMS = 100  # a list argument (env, trust keys): more than any real call, bounded
MAX_TEXT = 4096  # PATH_MAX: no word a caller passes is longer
_ENV_ITEM = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
_SIZE = re.compile(r"[1-9][0-9]*[bkmg]?", re.IGNORECASE)
COMMIT = "^[0-9a-fA-F]{7,64}$"  # a commit id as a capsule or --ref gives it (build/validate.py's rule)


class ArgumentError(ValueError):
    """A value that does not fit its parameter's declaration: the message names the parameter."""


@dataclass(frozen=True)
class Param:
    """One argument or option of a command (and of its MCP tool)."""

    name: str  # the Python and MCP name: "max_attempts"
    kind: Kind
    help: str
    flags: tuple[str, ...] = ()  # ("--attempts", "-n"); none: a positional argument, in declaration order
    default: Any = None
    required: bool = False
    low: float | None = None  # a count's or a number's bounds
    high: float | None = None
    choices: tuple[str, ...] = ()
    metavar: str | None = None
    envvar: str | None = None
    mcp: bool = True  # an argument of the command's MCP tool too
    hidden: bool = False  # accepted, not listed (twin's habits that only explain themselves)
    default_shown: str | None = None  # how help shows a default that is not a plain value ("the cores")
    panel: str | None = None  # the help panel it is listed under (`replay run --help` groups its options)
    suggest: str | None = None  # "module:function" under runner.cli: the words tab completion offers (help's)

    @property
    def option(self) -> str | None:
        """The long flag (`--attempts`); None for a positional argument."""
        return next((f for f in self.flags if f.startswith("--")), None)

    @property
    def repeatable(self) -> bool:
        return self.kind in ("paths", "texts", "env")

    def check(self, value: Any) -> Any:
        """The value as the CLI takes it; ArgumentError naming the parameter otherwise.

        First the one rule every string obeys, whatever its kind: no longer than its schema's
        maxLength (a string or a list's items), checked before any parsing looks at it."""
        if self.kind == "choice":  # the choices are the rule, and naming them is the useful answer
            return _choice(self, value)
        limit = _max_length(_schema(self))
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(item, str) and limit is not None and len(item) > limit:
                raise ArgumentError(f"{self.name}: longer than {limit} characters")
        return _CHECKS[self.kind](self, value)

    def schema(self) -> dict[str, Any]:
        """The JSON Schema of this argument (the MCP tool's inputSchema property)."""
        return {**_schema(self), "description": self.help}

    def words(self, value: Any) -> list[str]:
        """The CLI words for a checked value (options only; a positional is the value itself)."""
        assert self.option is not None
        if self.kind == "flag":
            return [self.option] if value else []
        if isinstance(value, list):
            return [f"{self.option}={item}" for item in value]
        return [f"{self.option}={value}"]


Exits = tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class Command:
    """One command: `replay NAME ...` and, when `mcp` names it, an MCP tool."""

    name: str  # "run", "farm report"
    summary: str  # one line: help lists, MCP descriptions
    params: tuple[Param, ...]
    handler: str  # "module:function" under runner.cli, imported only when the command runs: calls the stage with
    # the typed arguments (runner/commands/arguments.py) and returns its typed result (or, with none, the exit code)
    exits: Exits = ((0, "success"),)  # the exit rule: each code and what it means here
    help: str = ""  # more than the summary, for `replay help NAME` and the docs
    result: str | None = None  # its typed result, "module:Class" under runner.commands (outputs.py); with --json
    # the result's data, its schema shipped as runner/schemas/<schema_name>.schema.json
    read_only: bool = True  # changes nothing outside replay's own cache
    long: bool = False  # builds images and runs containers: progress notifications, cancellable
    mcp: str | None = None  # the MCP tool's name; None: not offered over MCP
    mcp_help: str = ""  # what an agent should know besides the summary
    examples: tuple[str, ...] = ()
    stop_at_first_word: bool = False  # `capture -- CMD`: CMD's words are never replay's options

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self.name.split())

    @property
    def arguments(self) -> str:
        """The name of its typed arguments' class in runner/commands/arguments.py ("FarmRunArgs")."""
        return "".join(w.capitalize() for w in self.words) + "Args"

    @property
    def schema_name(self) -> str:
        """The command's result schema in runner/schemas ("farm-report")."""
        return "-".join(self.words)

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)

    def exit_rule(self) -> str:
        return "; ".join(f"{code} {meaning}" for code, meaning in self.exits)

    def mcp_params(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.mcp and not p.hidden)

    def input_schema(self) -> dict[str, Any]:
        params = self.mcp_params()
        return {"type": "object", "properties": {p.name: p.schema() for p in params},
                "required": [p.name for p in params if p.required], "additionalProperties": False}

    def argv(self, arguments: Mapping[str, Any] | None) -> list[str]:
        """The CLI words of an MCP call, `--json` included; ArgumentError for a bad argument."""
        given = dict(arguments or {})
        known = {p.name: p for p in self.mcp_params()}
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise ArgumentError(f"unknown argument {unknown[0]!r} (this tool takes: {', '.join(known) or 'none'})")
        options: list[str] = ["--json"]
        positionals: list[str] = []
        for p in known.values():
            if given.get(p.name) is None:
                if p.required:
                    raise ArgumentError(f"{p.name}: required ({p.help})")
                continue
            value = p.check(given[p.name])
            if p.kind in ("capsule", "path") and value == "-":
                raise ArgumentError(f"{p.name}: '-' (standard input) is not available over MCP; give a path or URL")
            if p.option is None:
                positionals.extend(value if isinstance(value, list) else [value])
            else:
                options.extend(p.words(value))
        return [*self.words, *options, "--", *positionals]


# --- the kinds: one check and one schema each -------------------------------------------------

def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


def _text(p: Param, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ArgumentError(f"{p.name}: expected a non-empty string, got {_shown(value)}")
    if "\0" in value:
        raise ArgumentError(f"{p.name}: contains a NUL character")
    if len(value) > MAX_TEXT:
        raise ArgumentError(f"{p.name}: longer than {MAX_TEXT} characters")
    return value


def _path(p: Param, value: Any) -> str:
    return _text(p, str(value) if isinstance(value, Path) else value)


def _list(p: Param, value: Any) -> list[Any]:
    if isinstance(value, tuple):
        value = list(value)
    if not isinstance(value, list):
        raise ArgumentError(f"{p.name}: expected a list of strings, got {_shown(value)}")
    if len(value) > MAX_ITEMS:
        raise ArgumentError(f"{p.name}: more than {MAX_ITEMS} items")
    return value


def _paths(p: Param, value: Any) -> list[str]:
    return [_path(p, item) for item in _list(p, value)]


def _texts(p: Param, value: Any) -> list[str]:
    return [_text(p, item) for item in _list(p, value)]


def _env(p: Param, value: Any) -> list[str]:
    items = _list(p, value)
    for item in items:
        if not isinstance(item, str) or "\0" in item or len(item) > MAX_TEXT or not _ENV_ITEM.fullmatch(item):
            raise ArgumentError(f"{p.name}: {_shown(item)}: expected NAME=VALUE (NAME= sets it empty; "
                                f"at most {MAX_TEXT} characters)")
    return items


def _count(p: Param, value: Any) -> int:
    low, high = int(p.low if p.low is not None else 0), p.high
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        upto = f" to {int(high)}" if high is not None else " or more"
        raise ArgumentError(f"{p.name}: expected an integer from {low}{upto}, got {_shown(value)}")
    return value


def _number(p: Param, value: Any) -> float:
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    if not ok or (p.low is not None and value < p.low) or (p.high is not None and value > p.high):
        raise ArgumentError(f"{p.name}: expected a number from {p.low} to {p.high}, got {_shown(value)}")
    return float(value)


def _duration(p: Param, value: Any) -> str:
    """A number is seconds (as the CLI's bare number); a string is a duration like 15m."""
    try:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError
        seconds = parse_duration(value)
    except ValueError:
        raise ArgumentError(f"{p.name}: expected seconds (a number) or a duration ({DURATION_HELP}), "
                            f"got {_shown(value)}") from None
    if not math.isfinite(seconds) or seconds < (p.low if p.low is not None else 1):
        raise ArgumentError(f"{p.name}: at least {p.low if p.low is not None else 1:g} second(s), got {_shown(value)}")
    return f"{seconds:g}s"  # with its unit: never read as another tool's minutes


def _size(p: Param, value: Any) -> str:
    if not isinstance(value, str) or not _SIZE.fullmatch(value.strip()):
        raise ArgumentError(f"{p.name}: {_shown(value)}: a size like 512m or 4g")
    return value.strip().lower()


def _flag(p: Param, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ArgumentError(f"{p.name}: expected true or false, got {_shown(value)}")
    return value


def _commit(p: Param, value: Any) -> str:
    if not isinstance(value, str) or not re.fullmatch(COMMIT, value):
        raise ArgumentError(f"{p.name}: expected a commit id (7-64 hex digits), got {_shown(value)}")
    return value


def _choice(p: Param, value: Any) -> str:
    if value not in p.choices:
        raise ArgumentError(f"{p.name}: one of {', '.join(p.choices)}, got {_shown(value)}")
    return str(value)


_CHECKS: dict[str, Callable[[Param, Any], Any]] = {
    "capsule": _path, "path": _path, "paths": _paths, "text": _text, "texts": _texts, "env": _env,
    "count": _count, "number": _number, "duration": _duration, "size": _size, "flag": _flag, "commit": _commit,
    "choice": _choice}

_TEXT = {"type": "string", "minLength": 1, "maxLength": MAX_TEXT}


def _bounds(p: Param) -> dict[str, Any]:
    cast = int if p.kind == "count" else float
    out = {"minimum": cast(p.low if p.low is not None else 0)}
    return {**out, "maximum": cast(p.high)} if p.high is not None else out


def _schema(p: Param) -> dict[str, Any]:
    if p.kind in ("capsule", "path", "text"):
        return dict(_TEXT)
    if p.kind in ("paths", "texts"):
        return {"type": "array", "items": _TEXT, "maxItems": MAX_ITEMS}
    if p.kind == "env":
        item = {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*=", "maxLength": MAX_TEXT}
        return {"type": "array", "items": item, "maxItems": MAX_ITEMS}
    if p.kind in ("count", "number"):
        return {"type": "integer" if p.kind == "count" else "number", **_bounds(p)}
    if p.kind == "duration":
        return {"anyOf": [{"type": "number", "minimum": 1}, {"type": "string", "minLength": 1, "maxLength": 64}]}
    if p.kind == "size":
        return {"type": "string", "pattern": f"^{_SIZE.pattern}$", "maxLength": 32}
    if p.kind == "flag":
        return {"type": "boolean"}
    if p.kind == "commit":
        return {"type": "string", "pattern": COMMIT, "maxLength": 64}
    return {"enum": list(p.choices)}


def _max_length(schema: Mapping[str, Any]) -> int | None:
    """The longest string a schema takes (its own, its items', any alternative's); None: no string."""
    found = [schema["maxLength"]] if "maxLength" in schema else []
    found += [n for sub in (schema.get("items"), *schema.get("anyOf", ())) if isinstance(sub, Mapping)
              for n in [_max_length(sub)] if n is not None]
    if "enum" in schema:
        found.append(max((len(v) for v in schema["enum"] if isinstance(v, str)), default=0))
    return max(found) if found else None


def names(params: Sequence[Param]) -> tuple[str, ...]:
    return tuple(p.name for p in params)
