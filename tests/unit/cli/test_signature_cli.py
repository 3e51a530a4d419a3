"""`replay signature`: key lines and signature of an output read from a file or stdin."""
from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from runner.cli.main import main
from tests.envelope import result_of

EXAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "examples" / "twin"
OUT_TXT = EXAMPLES / "echarts-new-york.out.txt"
SIGNATURE = "exit1:0aee0834ac9c4d2d"


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def test_file_prints_key_lines_and_signature_last(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["signature", str(OUT_TXT), "--exit-code", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == SIGNATURE
    assert lines[0] == "key lines (7):"
    assert lines[1:-1] == [
        "  FAIL test/ut/spec/util/time.test.ts",
        "  ✕ roundTime_locale",
        "  expect(received).toEqual(expected) // deep equality",
        "  Expected: 528526800000",
        "  Received: 528523200000",
        "  Test Suites: 1 failed, 1 total",
        "  Tests: 1 failed, 14 passed, 15 total",
    ]


def test_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["signature", str(OUT_TXT), "--exit-code", "1", "--json"]) == 0
    data = result_of(capsys.readouterr().out)
    assert data["signature"] == SIGNATURE
    assert data["exit_code"] == 1
    assert data["signal"] is None
    assert len(data["key_lines"]) == 7
    assert data["key_lines"][1] == "✕ roundTime_locale"


@pytest.mark.parametrize("args", [["-"], []])
def test_stdin(args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _stdin(monkeypatch, OUT_TXT.read_bytes())
    assert main(["signature", *args, "--exit-code", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == SIGNATURE


@pytest.mark.parametrize("name", ["SIGSEGV", "segv", "SEGV"])
def test_signal(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["signature", str(OUT_TXT), "--signal", name, "--json"]) == 0
    data = result_of(capsys.readouterr().out)
    assert data["signature"] == "SIGSEGV:0aee0834ac9c4d2d"
    assert data["signal"] == "SIGSEGV"
    assert data["exit_code"] is None


@pytest.mark.parametrize(
    "options", [[], ["--exit-code", "1", "--signal", "SIGSEGV"]], ids=["neither", "both"]
)
def test_exactly_one_of_exit_code_and_signal(options: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["signature", str(OUT_TXT), *options]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip().splitlines() == [
        "replay: error: give exactly one of --exit-code N or --signal NAME"
    ]


def test_bad_signal_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["signature", str(OUT_TXT), "--signal", "not a signal"]) == 2
    assert "is not a signal name" in capsys.readouterr().err


def test_exit_code_must_be_an_integer(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["signature", str(OUT_TXT), "--exit-code", "one"]) == 2
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("make", ["missing", "directory"])
def test_unreadable_file_is_one_line(make: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out.txt"
    if make == "directory":
        target.mkdir()
    assert main(["signature", str(target), "--exit-code", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"replay: error: {target}: cannot read: ")
    assert "Traceback" not in err[0]


def test_invalid_utf8_and_control_characters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out.txt"
    target.write_bytes(b"fatal: bad \xff\xfe byte\nerror \x1bc\x07 reset\n")
    assert main(["signature", str(target), "--exit-code", "128"]) == 0
    out = capsys.readouterr().out
    assert "fatal: bad \ufffd\ufffd byte" in out
    # Terminal controls left in a key line are shown escaped, never sent to the terminal.
    assert "error \\x1bc\\x07 reset" in out
    assert "\x1b" not in out and "\x07" not in out
    assert out.splitlines()[-1].startswith("exit128:")


def test_fallback_is_announced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out.txt"
    target.write_text("".join(f"step {n}\n" for n in range(10)), encoding="utf-8")
    assert main(["signature", str(target), "--exit-code", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "key lines (the last 8; none looks like an error):"
    assert lines[1] == "  step 2"


def test_empty_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out.txt"
    target.write_bytes(b"")
    assert main(["signature", str(target), "--exit-code", "1"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "key lines: none (the output is empty)",
        "exit1:e3b0c44298fc1c14",
    ]


def _long_output() -> bytes:
    # Errors far before the window twin fingerprints must not count.
    return b"Error: stale\n" * 100_000 + b"filler\n" * 160 + OUT_TXT.read_bytes()


def test_large_file_is_read_from_its_tail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out.txt"
    target.write_bytes(_long_output())
    assert main(["signature", str(target), "--exit-code", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == SIGNATURE


def test_large_stdin_is_read_through(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    class Pipe(io.BytesIO):
        def seekable(self) -> bool:
            return False

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(Pipe(_long_output()), encoding="utf-8"))
    assert main(["signature", "--exit-code", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == SIGNATURE


@pytest.mark.parametrize("code", ["256", "-1", "12345678901234567890", "999"])
def test_an_exit_code_outside_0_to_255_is_a_usage_error(tmp_path: Path, code: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "out.log"
    log.write_text("Error: boom\n")
    assert main(["signature", str(log), "--exit-code", code]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_exit_codes_0_and_255_are_taken(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    log.write_text("Error: boom\n")
    assert main(["signature", str(log), "--exit-code", "0"]) == 0
    assert main(["signature", str(log), "--exit-code", "255"]) == 0
