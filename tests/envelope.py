"""Reading a command's --json output: always the one envelope (README: "JSON output"),
validated against the shipped schemas (runner/schemas): the envelope's, then the result's."""
from __future__ import annotations

import json
from typing import Any

from runner.schemas import check

KEYS = {"schema", "command", "exit_code", "result", "error"}


def envelope_of(stdout: str) -> dict[str, Any]:
    data = json.loads(stdout)
    assert isinstance(data, dict) and set(data) == KEYS, data
    assert data["schema"] == f"replay.{data['command'].replace(' ', '-')}/1"
    assert isinstance(data["exit_code"], int)
    assert (data["result"] is None) != (data["error"] is None) or data["exit_code"] == 1
    check(data)  # every --json the suite produces validates against its schema
    return data


def result_of(stdout: str) -> Any:
    """The result of a command that ran to an answer (exit 0 or 1)."""
    data = envelope_of(stdout)
    assert data["error"] is None, data["error"]
    return data["result"]
