"""How a result type says its JSON Schema (draft 2020-12): derived from the very dataclasses the
codec encodes (so a field added to a report shows up here), plus the few shapes built by hand
(`obj`, `array`). A /1 schema lists every field as required and allows new ones: the number
changes only when a field changes meaning or goes away. Each command's result type
(runner/commands/answers.py) gives its own; runner/commands/outputs.py writes the files.
"""
from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Mapping
from typing import Any

from ..capsules.model import FrozenMap

DRAFT = "https://json-schema.org/draft/2020-12/schema"
BASE = "https://replay.invalid/schemas/"  # ids only: the files are read from the package, never fetched
STR, INT, NUM, BOOL, NULL = ({"type": t} for t in ("string", "integer", "number", "boolean", "null"))


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, NULL]}


def obj(props: Mapping[str, Any], required: bool = True) -> dict[str, Any]:
    return {"type": "object", "properties": dict(props), **({"required": list(props)} if required else {})}


def array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


class Derive:
    """Schemas of dataclasses as runner/codec.py's encode writes them."""

    def __init__(self) -> None:
        self.defs: dict[str, Any] = {}

    def of(self, tp: Any) -> dict[str, Any]:
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if tp is Any:
            return {}
        if origin in (typing.Union, types.UnionType):
            return {"anyOf": [self.of(a) for a in args]}
        if origin is typing.Literal:
            return {"enum": list(args)}
        if dataclasses.is_dataclass(tp) and isinstance(tp, type):
            return self._dataclass(tp)
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                return array(self.of(args[0]))
            return {"type": "array", "prefixItems": [self.of(a) for a in args], "items": False}
        if origin in (FrozenMap, Mapping, dict) or tp in (FrozenMap, dict):
            return {"type": "object", "additionalProperties": self.of(args[1]) if args else {}}
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return {"enum": [m.value for m in tp]}
        return self._scalar(tp)

    def _scalar(self, tp: Any) -> dict[str, Any]:
        if tp is type(None):
            return NULL
        if tp is bytes:  # text when it is UTF-8, else {"base64": ...}
            return {"anyOf": [STR, obj({"base64": STR})]}
        known = {str: STR, bool: BOOL, int: INT, float: NUM}
        if tp in known:
            return known[tp]
        raise TypeError(f"no schema for {tp!r}")

    def _dataclass(self, cls: type) -> dict[str, Any]:
        name = cls.__name__
        if name not in self.defs:
            self.defs[name] = {}  # recursion guard
            hints = typing.get_type_hints(cls)
            self.defs[name] = obj({f.name: self.of(hints[f.name]) for f in dataclasses.fields(cls)})
        return {"$ref": f"#/$defs/{name}"}

    def root(self, cls: type, extra: Mapping[str, Any] = {}) -> dict[str, Any]:
        """The dataclass's own object at the top, with extra (derived) fields added."""
        self.of(cls)
        top = dict(self.defs.pop(cls.__name__))
        top["properties"] = {**top["properties"], **extra}
        top["required"] = list(top["properties"])
        return top


def document(name: str, title: str, body: dict[str, Any], defs: Mapping[str, Any] = {}) -> dict[str, Any]:
    doc = {"$schema": DRAFT, "$id": f"{BASE}{name}.schema.json", "title": title, **body}
    if defs:
        doc["$defs"] = dict(sorted(defs.items()))
    return doc


def error_kinds() -> list[str]:
    """Every typed error's kind (runner/errors.py and the farm's store), and the CLI's own."""
    from ..errors import ReplayError
    from ..farm import store  # noqa: F401  (defines the farm's history error)

    kinds: set[str] = {"usage", "interrupted", "internal"}
    todo: list[type[ReplayError]] = [ReplayError]
    while todo:
        cls = todo.pop()
        kinds.add(str(cls.kind))
        todo.extend(cls.__subclasses__())
    return sorted(kinds)


def envelope() -> dict[str, Any]:
    error = obj({"kind": {"enum": error_kinds()},
                 "message": STR, "file": nullable(STR)})
    body = obj({"schema": {"type": "string", "pattern": r"^replay\.[a-z]+(-[a-z]+)*/[0-9]+$"},
                "command": {"type": "string", "pattern": r"^[a-z]+( [a-z]+)?$"},
                "exit_code": {"type": "integer", "minimum": 0, "maximum": 255}, "result": {}, "error": nullable(error)})
    body["additionalProperties"] = False
    return document("envelope", "replay --json envelope", body)
