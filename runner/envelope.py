"""The one JSON envelope every command's `--json` prints, on success and on failure:

    {"schema": "replay.<command>/1", "command": "<command>", "exit_code": <replay's own>,
     "result": {...} | null, "error": {"kind", "message", "file"} | null}

`exit_code` is always replay's own exit code (0/1/2/3); a replayed program's exit code
lives in the result (e.g. result.attempts[].exit_code).
"""
from __future__ import annotations

from typing import Any

from .errors import ReplayError

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
