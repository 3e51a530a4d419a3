"""twin habits get a pointer: verify --patch, a bare --timeout, `replay version`; capsules on
stdin for inspect and verify; verify and inspect put their answer first."""
from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from runner.cli.main import main
from runner.units import bare_number_note
from tests.envelope import result_of
from tests.examples import CI, NOVA, TWIN, TZ_CAPSULE, json_variant


def stdin_of(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


@pytest.mark.parametrize("option", [["--patch", "fix.diff"], ["--ref", "3f2c9e1"]])
def test_verify_with_twins_fix_options_points_to_replay(option: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(TZ_CAPSULE), *option]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"run `replay {TZ_CAPSULE} {' '.join(option)}`" in err
    assert "integrity" in err and "No such option" not in err


def test_a_bare_timeout_says_it_read_seconds(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = str(tmp_path / "none.json")  # parsing happens before the capsule is read
    assert main(["run", missing, "--timeout", "15"]) == 2
    assert "replay: note: --timeout 15 read as 15 s; twin's minutes are --timeout 15m" in capsys.readouterr().err
    assert main(["run", missing, "--timeout", "15m"]) == 2
    assert "note:" not in capsys.readouterr().err
    assert main(["run", missing]) == 2  # the default is no bare number anyone typed
    assert "note:" not in capsys.readouterr().err
    assert main(["bisect", missing, "--good", missing, "--timeout", "90"]) == 2
    assert "--timeout 90 read as 90 s" in capsys.readouterr().err


def test_the_note_only_for_bare_numbers() -> None:
    assert bare_number_note("2.5") == "--timeout 2.5 read as 2.5 s; twin's minutes are --timeout 2.5m"
    assert bare_number_note("1h") is None and bare_number_note(600.0) is None


def test_replay_version_is_replay_dash_dash_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    expected = capsys.readouterr().out
    assert main(["version"]) == 0
    assert capsys.readouterr().out == expected
    assert expected.startswith("replay ")


@pytest.mark.parametrize("capsule", [TWIN, CI], ids=["twin", "codeinstances"])
def test_inspect_reads_a_capsule_on_stdin(capsule: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(capsule), "--json"]) == 0
    from_file = result_of(capsys.readouterr().out)
    stdin_of(monkeypatch, capsule.read_bytes())
    assert main(["inspect", "-", "--json"]) == 0
    from_stdin = result_of(capsys.readouterr().out)
    assert from_stdin["provenance"]["path"] == "<stdin>"
    from_stdin["provenance"]["path"] = from_file["provenance"]["path"]
    assert from_stdin == from_file


def test_verify_reads_a_capsule_on_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    stdin_of(monkeypatch, CI.read_bytes())
    assert main(["verify", "-"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "valid: <stdin> (codeinstances), sealed: no"
    data = json.loads(CI.read_text())
    data["id"] = "sha256:" + "0" * 64  # an edited id
    stdin_of(monkeypatch, json.dumps(data).encode())
    assert main(["verify", "-"]) == 1
    assert capsys.readouterr().out.startswith("INVALID: 1 problem: <stdin>")


@pytest.mark.parametrize("command", ["inspect", "verify"])
def test_a_novafabric_capsule_cannot_come_on_stdin(command: str, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    stdin_of(monkeypatch, (NOVA / "capsule.yaml").read_bytes())
    assert main([command, "-"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith("replay: error: <stdin>: not a JSON capsule") and "NovaFabric capsule is a directory" in err


def test_bad_json_on_stdin_is_named_as_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    stdin_of(monkeypatch, b'{"twin": 1')
    assert main(["inspect", "-"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("replay: error: <stdin>: ") and "replay-stdin-" not in err
    stdin_of(monkeypatch, b"")
    assert main(["verify", "-", "--json"]) == 2
    assert "<stdin>: empty" in capsys.readouterr().err


def test_stdin_is_capped_like_a_download(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("REPLAY_CAPSULE_MAX_BYTES", "100")
    stdin_of(monkeypatch, TWIN.read_bytes())
    assert main(["inspect", "-"]) == 2
    assert "more than the 100-byte limit (REPLAY_CAPSULE_MAX_BYTES)" in capsys.readouterr().err


def test_verify_puts_its_answer_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(TWIN)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"valid: {TWIN} (twin), sealed: no"
    broken = json_variant(TWIN, tmp_path, lambda d: (d.pop("command"), d.pop("os")))
    assert main(["verify", str(broken), "--json"]) == 1
    errors = [p for p in result_of(capsys.readouterr().out)["problems"] if p["severity"] == "error"]
    assert main(["verify", str(broken)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"INVALID: {len(errors)} problems: {broken} (twin), sealed: no"
    assert len(errors) >= 2 and all(line.startswith("  ") for line in lines[1:])


def test_inspect_puts_format_id_command_and_outcome_first(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(TZ_CAPSULE)]) == 0
    head = capsys.readouterr().out.splitlines()[:5]
    assert head[0] == str(TZ_CAPSULE)
    assert [line.split()[0] for line in head[1:]] == ["format", "id", "command", "outcome"]
    assert "twin capsule v1" in head[1]
    assert "node --test --test-reporter=spec test/dates.test.js" in head[3]
    assert "failed (exit 1, signature exit1:799fec462e83a86f)" in head[4]
    assert main(["inspect", str(NOVA)]) == 0
    head = capsys.readouterr().out.splitlines()[:5]
    assert "01JC4Q7W9Z2M5N8P3R6T1V0X4B" in head[2] and "passed (exit 0)" in head[4]


def test_help_lists_the_topics_and_shows_each(capsys: pytest.CaptureFixture[str]) -> None:
    from runner.cli.console import help_width
    from runner.commands.topics import TOPICS, wrapped

    assert main(["help"]) == 0
    out = capsys.readouterr().out
    assert "Topics (replay help TOPIC):" in out and "inspect" in out
    for name in TOPICS:
        assert f"  {name}  " in out
        assert main(["help", name]) == 0
        assert capsys.readouterr().out == wrapped(TOPICS[name].text(), help_width())
    assert main(["help", "topics"]) == 0
    assert "exit-codes" in capsys.readouterr().out


def test_help_topics_say_what_they_promise(capsys: pytest.CaptureFixture[str]) -> None:
    from runner import config
    from runner.verdict.judge import VERDICTS

    assert main(["help", "settings"]) == 0
    out = capsys.readouterr().out
    assert all(s.variable in out for s in config.SETTINGS)
    assert main(["help", "verdicts"]) == 0
    out = capsys.readouterr().out
    assert all(v in out for v in VERDICTS)
    assert main(["help", "exit-codes"]) == 0
    assert "`replay capture` exits with its command's own code" in capsys.readouterr().out
    assert main(["help", "durations"]) == 0
    assert "a bare number is seconds" in capsys.readouterr().out.lower()


def test_help_of_a_command_still_works_and_a_wrong_word_gets_the_nearest(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["help", "run"]) == 0
    assert "Usage: replay run" in capsys.readouterr().out
    assert main(["help", "farm", "run"]) == 0
    assert "Usage: replay farm run" in capsys.readouterr().out
    assert main(["help", "setings"]) == 2
    assert "did you mean `replay help settings`?" in capsys.readouterr().err
