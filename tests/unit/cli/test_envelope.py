"""Every command's --json is the one envelope, on exit 2 and 3 too (README: "JSON output")."""
from __future__ import annotations

from pathlib import Path

import pytest

from runner.cli.main import main

from tests.envelope import envelope_of
from tests.examples import TZ_CAPSULE


@pytest.mark.parametrize("command, args", [
    ("run", ["run"]), ("inspect", ["inspect"]), ("verify", ["verify"]),
    ("diff", ["diff", str(TZ_CAPSULE)]), ("bisect", ["bisect", "--good", str(TZ_CAPSULE)]),
])
def test_bad_input_gives_the_envelope_with_the_error(command: str, args: list[str], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.json"
    rc = main([*args, str(missing), "--json"])
    out, err = capsys.readouterr()
    data = envelope_of(out)
    assert rc == 2 and data["exit_code"] == 2 and data["command"] == command and data["result"] is None
    assert data["error"] == {"kind": "capsule", "message": f"{missing}: no such file or directory",
                             "file": str(missing)}
    assert err.strip().splitlines()[-1] == f"replay: error: {missing}: no such file or directory"


def test_a_usage_error_gives_the_envelope(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["inspect", str(TZ_CAPSULE), "--json", "--no-such-option"])
    data = envelope_of(capsys.readouterr().out)
    assert rc == 2 and data["error"]["kind"] == "usage" and "--no-such-option" in data["error"]["message"]


def test_no_engine_gives_the_envelope_with_exit_3(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    monkeypatch.setenv("REPLAY_CACHE", str(tmp_path / "cache"))
    rc = main(["run", str(TZ_CAPSULE), "--json", "-n", "1"])
    data = envelope_of(capsys.readouterr().out)
    assert rc == 3 and data["exit_code"] == 3 and data["result"] is None
    assert data["error"]["kind"] == "engine" and data["error"]["file"] is None


def test_a_result_carries_replays_own_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["diff", str(TZ_CAPSULE), str(TZ_CAPSULE), "--json"])
    data = envelope_of(capsys.readouterr().out)
    assert rc == data["exit_code"] == 0 and data["error"] is None and data["result"] is not None


def test_a_farm_usage_error_names_the_sub_command(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["farm", "report", "--json", "--no-such-option"])
    data = envelope_of(capsys.readouterr().out)
    assert rc == 2 and data["command"] == "farm report" and data["schema"] == "replay.farm-report/1"


def test_json_is_indented_on_a_terminal_and_one_line_into_a_pipe() -> None:
    import os
    import pty
    import subprocess
    import sys

    argv = [sys.executable, "-m", "runner", "verify", str(TZ_CAPSULE), "--json"]
    piped = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0 and piped.stdout.count("\n") == 1 and envelope_of(piped.stdout)["exit_code"] == 0
    main_fd, child_fd = pty.openpty()  # a terminal of its own for the child's stdout
    proc = subprocess.Popen(argv, stdout=child_fd, stderr=subprocess.DEVNULL)
    os.close(child_fd)
    chunks = []
    while True:
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert proc.wait(timeout=120) == 0
    os.close(main_fd)
    shown = b"".join(chunks).decode().replace("\r\n", "\n")
    assert shown.startswith("{\n  \"schema\": \"replay.verify/1\"") and envelope_of(shown)["exit_code"] == 0
