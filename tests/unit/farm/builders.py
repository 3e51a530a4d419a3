"""Small capsules for the farm's tests: CodeInstances instances with a valid id, twin
capsules of python one-liners (cheap to replay: they share one python image)."""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runner.capsules.codeinstances import compute_id
from tests.integration.helpers import env_facts, twin_capsule, write_json


def instance(argv: Sequence[str], stdout: str, exit_code: int = 0) -> dict[str, Any]:
    """A CodeInstances instance as its recorder writes it (no HTTP calls), its id computed."""
    doc: dict[str, Any] = {
        "format": "codeinstances/0", "id": "",
        "command": {"argv": list(argv), "cwd": "/home/sam"},
        "result": {"exitCode": exit_code, "signal": None, "durationMs": 12.5,
                   "stdout": {"text": stdout}, "stderr": {"text": ""}},
        "calls": [], "values": [],
    }
    doc["id"] = compute_id({k: v for k, v in doc.items() if k != "id"})
    return doc


def write_instance(path: Path, argv: Sequence[str], stdout: str, exit_code: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_json(path, instance(argv, stdout, exit_code))


def py_twin(path: Path, code: str, output: str, exit_code: int, tz: str | None = None,
            repo: dict[str, Any] | None = None, argv: Sequence[str] | None = None, **env: str | None) -> Path:
    """A twin capsule of `python3 -c CODE` (or ARGV) on Debian 12 that printed OUTPUT and exited EXIT_CODE."""
    path.parent.mkdir(parents=True, exist_ok=True)
    facts = env_facts(**env) if env else {}
    return write_json(path, twin_capsule(list(argv or ["python3", "-c", code]), output, exit_code, python="3.11.2",
                                         repo=repo, env=facts, time_zone=tz))


def tamper(path: Path) -> Path:
    """The instance's recorded stdout changed after its id was computed: `verify` fails."""
    doc = json.loads(path.read_text())
    doc["result"]["stdout"]["text"] = "tampered\n"
    path.write_text(json.dumps(doc, indent=2))
    return path
