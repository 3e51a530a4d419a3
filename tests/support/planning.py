"""Planning a capsule in tests: settings whose registries are fakes, a twin capsule from a few
fields, a package manager's entry, one fidelity row."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from runner.build.plan import Plan
from runner.build.planner import make_plan
from runner.capsules import read_capsule
from runner.config import Settings

SETTINGS = Settings(pypi_index="https://index.example/simple", npm_registry="https://npm.example")
SHA = "a" * 64


def twin_doc(argv: list[str], output: str | None = None, **fields: Any) -> dict[str, Any]:
    """A twin capsule's JSON: a passing run, or (with `output`) a failing one whose tail it is."""
    command: dict[str, Any] = {"argv": argv, "cwd": ".", "exitCode": 0, "signal": None, "durationMs": 1,
                               "outcome": "pass", "failure": None}
    if output is not None:
        command.update(exitCode=1, outcome="fail",
                       failure={"signature": "1:0000000000000000", "keyLines": [], "outputTail": output})
    data: dict[str, Any] = {
        "twin": 1, "createdAt": "2026-11-27T14:03:11.482Z", "generator": "twin 0.1.0", "command": command,
        "os": {"platform": "linux", "arch": "x64", "release": "6.1", "distro": "debian", "distroVersion": "12",
               "libc": "glibc", "libcVersion": "2.36"},
        "runtimes": {}, "tools": {}, "packageManagers": [], "resolved": {}, "repo": None, "env": {},
        "locale": {"timeZone": None, "locale": "en-US"},
        "redaction": {"rulesVersion": 1, "valuesIncluded": [], "hashedValues": False, "scrubbed": {}}}
    data.update(fields)
    return data


def written(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "capsule.json"
    path.write_text(json.dumps(data))
    return path


def twin(tmp_path: Path, argv: list[str], **fields: Any) -> Plan:
    return make_plan(read_capsule(written(tmp_path, twin_doc(argv, **fields))), SETTINGS)


def pm(name: str, ecosystem: str, version: str | None, lockfile: str | None) -> dict[str, Any]:
    return {"name": name, "ecosystem": ecosystem, "version": version, "declared": None, "lockfile": lockfile,
            "lockfileSha256": SHA if lockfile else None}


def row(plan: Plan, fact: str) -> tuple[str, str, str]:
    found = [(f.recorded, f.replayed, f.status) for f in plan.fidelity if f.fact == fact]
    assert len(found) == 1, [f.fact for f in plan.fidelity]
    return found[0]
