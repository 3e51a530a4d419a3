"""`replay doctor` on this machine: ready with the engine up; exit 3 naming the fix without it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.cli.main import main

pytestmark = pytest.mark.integration


def test_doctor_with_the_engine_up(engine: object, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["doctor", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["schema"] == "replay.doctor/1" and data["exit_code"] == 0 and data["error"] is None
    checks = {c["name"]: c for c in data["result"]["checks"]}
    assert checks["engine"]["status"] == "ok" and data["result"]["versions"]["engine"]
    assert data["result"]["versions"]["docker SDK"]
    assert checks["builder"]["detail"].startswith(("buildkit", "classic"))
    assert "replay-base/debian:" in checks["base images"]["detail"] or checks["base images"]["status"] == "ok"
    assert {"npm registry", "PyPI index", "Node.js dist", "Debian mirror", "cache"} <= set(checks)
    settings = {s["variable"]: s for s in data["result"]["settings"]}
    assert settings["REPLAY_BUILDER"]["source"] in ("default", "env REPLAY_BUILDER")


def test_doctor_text(engine: object, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "ready to replay" in out and "engine" in out and "REPLAY_CACHE" in out


def test_doctor_without_an_engine_names_the_fix(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/nowhere.sock")
    rc = main(["doctor", "--json"])
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert rc == 3 and data["exit_code"] == 3 and data["error"]["kind"] == "environment"
    engine_check = next(c for c in data["result"]["checks"] if c["name"] == "engine")
    assert engine_check["status"] == "fail" and "DOCKER_HOST" in engine_check["fix"]
    assert "nowhere.sock" in engine_check["detail"]
    errors = [line for line in captured.err.splitlines() if line.startswith("replay: error:")]
    assert len(errors) == 1 and "start a Docker engine" in errors[0]
    settings = {s["variable"]: s for s in data["result"]["settings"]}
    assert settings["DOCKER_HOST"]["source"] == "env DOCKER_HOST"
