"""Frozen dataclasses <-> JSON data, driven by their type annotations.

One codec for every value replay writes and reads back: the plan that travels to a
worker, the report a farm stores, the history rows. Encoding is plain JSON data
(objects, lists, strings, numbers); decoding rebuilds the exact value, so
`decode(T, encode(x)) == x` for every supported type:

  dataclasses, tuple[X, ...] and fixed tuples, FrozenMap / Mapping with str keys,
  X | None, Literal, Enum, str, int, float, bool, and bytes (text when it is
  UTF-8, else {"base64": ...}).

And the one JSON envelope every command's `--json` prints (at the end).
"""
from __future__ import annotations

import base64
import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from .capsules.model import FrozenMap
from .errors import ReplayError

T = TypeVar("T")


class DecodeError(ValueError):
    """Data that does not have the shape of the type it is read as."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where or '$'}: {problem}")


_PLAIN = (str, int, float, bool, type(None))


def encode(obj: Any) -> Any:
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, _PLAIN):  # the most of any value: returned as it is
        return obj
    cls: type = type(obj)
    names = _field_names(cls)
    if names is not None:
        return {name: encode(getattr(obj, name)) for name in names}
    if isinstance(obj, bytes):
        try:
            return obj.decode("utf-8")
        except UnicodeDecodeError:
            return {"base64": base64.b64encode(obj).decode("ascii")}
    if isinstance(obj, Mapping):
        return {str(k): encode(v) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return [encode(v) for v in obj]
    return obj


@functools.cache
def _field_names(cls: Any) -> tuple[str, ...] | None:
    """A dataclass's field names in order (None for any other type), read once per class."""
    return tuple(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else None


def decode(tp: type[T], data: Any, where: str = "") -> T:
    return typing.cast(T, _decode(tp, data, where))


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _decode(tp: Any, data: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    if tp is Any:
        return data
    if origin in (typing.Union, types.UnionType):
        return _union(typing.get_args(tp), data, where)
    if origin is typing.Literal:
        if data not in typing.get_args(tp):
            raise DecodeError(where, f"{data!r} is not one of {list(typing.get_args(tp))}")
        return data
    if dataclasses.is_dataclass(tp):
        return _dataclass(tp, data, where)
    if origin is tuple:
        return _tuple(typing.get_args(tp), data, where)
    if origin in (FrozenMap, Mapping, dict) or tp in (FrozenMap, dict):
        args = typing.get_args(tp) or (str, Any)
        if not isinstance(data, dict):
            raise DecodeError(where, "expected an object")
        items = {k: _decode(args[1], v, f"{where}.{k}") for k, v in data.items()}
        return items if origin is dict or tp is dict else FrozenMap(items)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(data)
    return _scalar(tp, data, where)


def _union(args: tuple[Any, ...], data: Any, where: str) -> Any:
    if data is None and type(None) in args:
        return None
    errors = []
    for arg in (a for a in args if a is not type(None)):
        try:
            return _decode(arg, data, where)
        except (DecodeError, TypeError, ValueError) as e:
            errors.append(str(e))
    raise DecodeError(where, "; ".join(errors) or "no alternative fits")


def _dataclass(tp: Any, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise DecodeError(where, f"expected an object for {tp.__name__}")
    hints = _hints(tp)
    kwargs = {}
    for f in dataclasses.fields(tp):
        if f.name in data:
            kwargs[f.name] = _decode(hints[f.name], data[f.name], f"{where}.{f.name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise DecodeError(where, f"{f.name} is missing")
    return tp(**kwargs)


def _tuple(args: tuple[Any, ...], data: Any, where: str) -> tuple[Any, ...]:
    if not isinstance(data, list):
        raise DecodeError(where, "expected a list")
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(_decode(args[0], v, f"{where}[{i}]") for i, v in enumerate(data))
    if len(args) != len(data):
        raise DecodeError(where, f"expected {len(args)} items")
    return tuple(_decode(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, data)))


def _scalar(tp: Any, data: Any, where: str) -> Any:
    if tp is bytes:
        if isinstance(data, str):
            return data.encode("utf-8")
        if isinstance(data, dict) and isinstance(data.get("base64"), str):
            return base64.b64decode(data["base64"], validate=True)
        raise DecodeError(where, "expected text or {\"base64\": ...}")
    if tp is float and isinstance(data, int) and not isinstance(data, bool):
        return float(data)
    if tp in (str, int, float, bool) and (type(data) is tp):
        return data
    if tp is type(None) and data is None:
        return None
    raise DecodeError(where, f"expected {getattr(tp, '__name__', tp)}, got {type(data).__name__}")


# --- the JSON envelope ---------------------------------------------------------------------------
# The one envelope every command's `--json` prints, on success and on failure:
#     {"schema": "replay.<command>/1", "command": "<command>", "exit_code": <replay's own>,
#      "result": {...} | null, "error": {"kind", "message", "file"} | null}
# `exit_code` is always replay's own exit code (0/1/2/3); a replayed program's exit code lives in
# the result (e.g. result.attempts[].exit_code).
VERSION = 1


def schema_of(command: str) -> str:
    return f"replay.{command.replace(' ', '-')}/{VERSION}"


def envelope(command: str, exit_code: int, result: Any = None, error: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"schema": schema_of(command), "command": command, "exit_code": int(exit_code), "result": result,
            "error": error}


def error_of(exc: BaseException, kind: str | None = None, message: str | None = None) -> dict[str, Any]:
    if isinstance(exc, ReplayError):
        return {"kind": kind or exc.kind, "message": message or exc.line(), "file": exc.path}
    return {"kind": kind or "internal", "message": message or f"{type(exc).__name__}: {exc}", "file": None}
