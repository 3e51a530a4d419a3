"""`replay doctor` on this machine: ready with the engine up; exit 3 naming the fix without it."""
from __future__ import annotations

from pathlib import Path

import pytest

from runner.cli.main import main
from tests.envelope import envelope_of

pytestmark = pytest.mark.integration


def test_doctor_with_the_engine_up(engine: object, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["doctor", "--json"])
    data = envelope_of(capsys.readouterr().out)  # validated against runner/schemas/doctor.schema.json
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
    data = envelope_of(captured.out)
    assert rc == 3 and data["exit_code"] == 3 and data["result"] is None
    assert data["error"]["kind"] == "environment" and data["error"]["message"].startswith("not ready: engine: ")
    assert "DOCKER_HOST" in data["error"]["message"]
    errors = [line for line in captured.err.splitlines() if line.startswith("replay: error:")]
    assert len(errors) == 1 and "start a Docker engine" in errors[0]


def test_doctor_text_without_an_engine(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/nowhere.sock")
    assert main(["doctor"]) == 3
    captured = capsys.readouterr()
    assert "fail" in captured.out and "nowhere.sock" in captured.out and "not ready: engine" in captured.out
    assert "env DOCKER_HOST" in captured.out  # where the setting came from
