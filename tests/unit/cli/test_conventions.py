"""CLI conventions: did you mean, `replay help`, bare `replay`, -V, completion, plain help with examples,
durations with units, --quiet."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from runner.cli.main import main
from runner.units import format_duration, parse_duration
from tests.examples import TZ_CAPSULE

ROOT = Path(__file__).resolve().parents[3]


def test_a_mistyped_command_suggests_the_right_one(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["inpsect", "x.json"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1 and "did you mean `replay inspect`" in err[0] and "inpsect" in err[0]


def test_a_capsule_named_like_a_command_is_still_replayed_as_a_capsule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Only a word that is no file is a typo: `replay inspekt` with a file called so replays it."""
    monkeypatch.chdir(tmp_path)
    Path("inspekt").write_text("{not json")
    assert main(["inspekt"]) == 2
    assert "did you mean" not in capsys.readouterr().err


def test_an_option_value_like_a_command_is_no_typo(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--salt", "shelf", "nope.json"]) == 2
    err = capsys.readouterr().err
    assert "did you mean" not in err and "nope.json" in err


def test_help_of_a_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["help", "run"]) == 0
    out = capsys.readouterr().out
    assert "Usage: replay run" in out and "--attempts" in out and "Examples" in out


def test_help_of_a_sub_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["help", "farm", "run"]) == 0
    assert "Usage: replay farm run" in capsys.readouterr().out


def test_help_of_an_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["help", "inspct"]) == 2
    assert "did you mean `replay help inspect`" in capsys.readouterr().err


@pytest.mark.parametrize("args", [[], ["farm"]])
def test_bare_group_prints_its_help_without_an_error(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "Usage: replay" in captured.out and "error" not in captured.err


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version(capsys: pytest.CaptureFixture[str], flag: str) -> None:
    from runner import __version__

    assert main([flag]) == 0
    assert capsys.readouterr().out.strip() == f"replay {__version__}"


@pytest.mark.parametrize("command", ["run", "bisect", "farm run", "verify", "render", "doctor"])
def test_help_shows_no_python_types_and_has_examples(capsys: pytest.CaptureFixture[str], command: str) -> None:
    assert main(["help", *command.split()]) == 0
    out = capsys.readouterr().out
    assert not re.search(r"<(bool|str|int|float|path|list\[[^\]]*\])[^>]*>", out), out
    assert "Examples:" in out and f"replay {command}" in out


def test_completion_is_offered(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "replay completion bash" in capsys.readouterr().out
    for shell in ("bash", "zsh", "fish"):
        assert main(["completion", shell]) == 0
        assert "_REPLAY_COMPLETE" in capsys.readouterr().out
    assert main(["completion", "tcsh"]) == 2  # read as a command's argument, never as a capsule
    assert "tcsh" in capsys.readouterr().err


def test_completion_completes_commands() -> None:
    """The shell's request (as bash's completion function sends it) gets the command names."""
    env = {**os.environ, "_REPLAY_COMPLETE": "complete_bash", "COMP_WORDS": "replay ins", "COMP_CWORD": "1",
           "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "runner"], env=env, capture_output=True, text=True, timeout=60)
    assert "inspect" in proc.stdout.split()


@pytest.mark.parametrize("text,seconds", [("15m", 900), ("90s", 90), ("1h", 3600), ("1h30m", 5400), ("15", 15),
                                          ("2.5", 2.5), ("1.5h", 5400), ("500ms", 0.5), (" 10M ", 600)])
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "15x", "m", "1h-2m", "abc", "15 minutes"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration(text)


def test_durations_read_back() -> None:
    assert [format_duration(s) for s in (900, 5400, 2.5, 45, 600)] == ["15m", "1h30m", "2.5s", "45s", "10m"]


def test_timeout_15m_is_900_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The value the command hands the replayer, not only the parser's."""
    from runner.cli import replaying as run_cli

    seen: list[float] = []

    def fake_replay(path: Path, options: object, progress: object, trust_keys: object = ()) -> object:
        seen.append(options.timeout)  # type: ignore[attr-defined]
        raise KeyboardInterrupt

    monkeypatch.setattr(run_cli, "replay_capsule", fake_replay)
    main([str(TZ_CAPSULE), "--timeout", "15m"])
    main([str(TZ_CAPSULE), "--timeout", "15"])
    assert seen == [900.0, 15.0]


@pytest.mark.parametrize("command", [["run", str(TZ_CAPSULE)], ["bisect", str(TZ_CAPSULE), "--good", str(TZ_CAPSULE)],
                                     ["farm", "run", str(TZ_CAPSULE)]])
def test_a_bad_duration_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    assert main([*command, "--timeout", "15x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a duration" in err[0]


def test_quiet_prints_no_progress(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from runner.cli import replaying as run_cli

    def fake_replay(path: Path, options: object, progress: object, trust_keys: object = ()) -> object:
        progress.say("building")  # type: ignore[attr-defined]
        raise KeyboardInterrupt

    monkeypatch.setattr(run_cli, "replay_capsule", fake_replay)
    main([str(TZ_CAPSULE)])
    assert "replay: building" in capsys.readouterr().err
    main([str(TZ_CAPSULE), "--quiet"])
    assert "building" not in capsys.readouterr().err


@pytest.mark.parametrize("checkout", [True, False])
def test_no_engine_points_at_scripts_setup_only_in_a_clone(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch, checkout: bool) -> None:
    import runner.resources
    from tests.examples import CI

    monkeypatch.setattr(runner.resources, "source_checkout", lambda: checkout)
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-such.sock")
    assert main([str(CI), "-n", "1"]) == 3
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("replay: error:")]
    assert len(errors) == 1 and "DOCKER_HOST" in errors[0]
    assert ("scripts/setup" in errors[0]) == checkout
