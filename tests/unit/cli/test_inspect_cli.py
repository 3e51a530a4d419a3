"""`replay inspect`: every group on stdout, or the whole model as JSON."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.capsules import read_capsule
from runner.codec import encode
from runner.cli.main import main
from tests.examples import CI, MINIMAL, NOVA, TWIN
from tests.envelope import result_of




def test_inspect_twin_shows_each_group(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(TWIN)]) == 0
    out = capsys.readouterr().out
    for expected in ("exit1:0aee0834ac9c4d2d", "garuda", "22.23.3", "America/New_York", "package-lock.json",
                     "984bf46b2f905dd0ad909a2d5e6e9d66a1b6568c", "(value not recorded)", "host-specific",
                     "HTTP calls: not recorded by this format", "Provenance"):  # fmt: skip
        assert expected in out


def test_inspect_codeinstances_and_novafabric(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(CI)]) == 0
    out = capsys.readouterr().out
    assert "GET https://api.example.com/v1/greeting -> 200 OK (42 B)" in out
    assert "Platform: not recorded by this format" in out
    assert main(["inspect", str(NOVA)]) == 0
    out = capsys.readouterr().out
    assert "poem.txt ← inputs/poem.txt" in out and "deny" in out and "01JC4Q7W9Z2M5N8P3R6T1V0X4B" in out
    assert "Tools: not recorded by this format" in out


def test_inspect_all_lists_every_package(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(MINIMAL)]) == 0
    short = capsys.readouterr().out
    assert "26 more (--all shows every package)" in short and "rpds-py" not in short
    assert main(["inspect", str(MINIMAL), "--all"]) == 0
    full = capsys.readouterr().out
    assert "rpds-py" in full and "more (--all" not in full


@pytest.mark.parametrize("path", [TWIN, CI, NOVA, MINIMAL], ids=lambda p: p.name)
def test_inspect_json_is_the_whole_model(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(path), "--json"]) == 0
    data = result_of(capsys.readouterr().out)
    assert data == json.loads(json.dumps(encode(read_capsule(path))))
    assert data["provenance"]["path"] == str(path)


def test_inspect_bad_input_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.json"
    assert main(["inspect", str(missing)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"replay: error: {missing}: no such file or directory"
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    assert main(["inspect", str(junk)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(junk) in err and "Traceback" not in err


def test_inspect_escapes_control_characters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(TWIN.read_text())
    data["command"]["argv"] = ["echo", "\x1b]0;owned\x07[bold]x"]
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(data))
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b]0;owned\\x07[bold]x" in out
