"""The global options on every command (-q, -v, --color, --no-color, --json, --debug), before or after it, help fitted to the terminal (80 in a
pipe) without internal paths, and a closed pipe that is no error (issue 31)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from runner.cli.main import main
from runner.commands.catalog import COMMANDS
from runner.commands.common import GLOBALS
from tests.examples import ROOT, TZ_CAPSULE

ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
ENV.pop("COLUMNS", None)


def replay(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "runner", *args], capture_output=True, text=True, timeout=120,
                          env=env or ENV)


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: c.name)
def test_every_command_takes_the_global_options(cmd: object, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*cmd.words, "--help"]) == 0  # type: ignore[attr-defined]
    out = capsys.readouterr().out
    for g in GLOBALS:
        assert g.option in out


def test_inspect_quiet_and_colour_never(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "-q", "--color", "never", str(TZ_CAPSULE)]) == 0
    out = capsys.readouterr().out
    assert "outcome" in out and "\x1b[" not in out


def test_colour_always_colours_a_pipe_and_never_does_not() -> None:
    assert "\x1b[" in replay("inspect", "--color", "always", str(TZ_CAPSULE)).stdout
    assert "\x1b[" not in replay("inspect", "--color", "never", str(TZ_CAPSULE), env={**ENV, "FORCE_COLOR": "1"}).stdout


def test_a_bad_colour_is_a_usage_error() -> None:
    done = replay("inspect", "--color", "pink", str(TZ_CAPSULE))
    assert done.returncode == 2 and "one of auto, always, never" in done.stderr


@pytest.mark.parametrize("topic", ["settings", "verdicts", "exit-codes", "formats", "durations"])
def test_help_topics_fit_80_columns_in_a_pipe_and_name_no_internal_path(topic: str) -> None:
    done = replay("help", topic)
    assert done.returncode == 0
    assert max(len(line) for line in done.stdout.splitlines()) <= 80
    assert "runner/" not in done.stdout and "read in:" not in done.stdout


def test_help_of_a_command_fits_80_columns_in_a_pipe() -> None:
    done = replay("help", "run")
    assert max(len(line) for line in done.stdout.splitlines()) <= 80


@pytest.mark.parametrize("args", [["help"], ["inspect", str(TZ_CAPSULE)], ["help", "settings"]])
def test_a_closed_pipe_is_not_an_error(args: list[str]) -> None:
    """`replay ... | head -1`: the reader went away; replay ends quietly, exit 0."""
    proc = subprocess.Popen([sys.executable, "-m", "runner", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=ENV)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # before replay has written the rest
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert "Traceback" not in err and "error" not in err


@pytest.mark.parametrize("topic", ["verdicts", "exit-codes", "formats", "durations"])
def test_a_topics_paragraph_is_one_line_filled_to_the_width_not_cut_at_a_fixed_one(topic: str) -> None:
    """A paragraph cut at a fixed width in the source comes out ragged at any other (a short line,
    then one that would have fitted after it): no source line goes on a sentence the line above began."""
    from runner.commands.topics import TOPICS, wrapped

    text = TOPICS[topic].text()
    lines = text.splitlines()
    row = re.compile(r"^\s*\S.*?\S {2,}\S")  # a table row: its own line
    indent = [len(line) - len(line.lstrip()) for line in lines]
    for i in range(1, len(lines)):
        above, line = lines[i - 1], lines[i]
        if above.strip() and line.strip() and indent[i] == indent[i - 1] and not row.match(line):
            assert not line.lstrip()[0].islower(), f"{topic}: {above!r} is cut before {line!r}"
    assert wrapped(text, 2000) == text  # at any width that holds a paragraph, the source's lines as they are


@pytest.mark.parametrize("args,expected", [
    (["-q", "doctor"], ["doctor", "-q"]),
    (["--json", "inspect", "x.json"], ["inspect", "--json", "x.json"]),
    (["--color", "never", "-v", "farm", "report"], ["farm", "report", "--color", "never", "-v"]),
    (["--color=never", "version"], ["version", "--color=never"]),
    (["-q", "x.json"], ["run", "-q", "x.json"]),  # before a capsule: run's options already
    (["inspect", "-q", "x.json"], ["inspect", "-q", "x.json"]),
])
def test_global_options_go_before_or_after_the_command(args: list[str], expected: list[str]) -> None:
    from runner.commands.words import normal_argv as _argv

    assert _argv(args) == expected


def test_global_options_before_the_command_work_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--json", "inspect", str(TZ_CAPSULE)]) == 0
    assert json.loads(capsys.readouterr().out)["command"] == "inspect"
    assert main(["-q", "--no-color", "inspect", str(TZ_CAPSULE)]) == 0
    assert "outcome" in capsys.readouterr().out


@pytest.mark.parametrize("args", [["version", "--json"], ["--json", "version"]])
def test_version_answers_json_in_the_envelope(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from runner import __version__
    from runner.schemas import check

    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    check(doc)
    assert doc["result"] == {"version": __version__}


def test_help_and_completion_take_the_global_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-q", "help", "verdicts"]) == 0 and "reproduced" in capsys.readouterr().out
    assert main(["completion", "bash", "--no-color"]) == 0 and "_REPLAY_COMPLETE" in capsys.readouterr().out


def test_no_color_and_the_no_color_variable_win_over_a_forced_terminal() -> None:
    forced = {**ENV, "FORCE_COLOR": "1"}
    assert "\x1b[" in replay("inspect", str(TZ_CAPSULE), env=forced).stdout  # the control: colour when forced
    assert "\x1b[" not in replay("--no-color", "inspect", str(TZ_CAPSULE), env=forced).stdout
    assert "\x1b[" not in replay("inspect", str(TZ_CAPSULE), env={**forced, "NO_COLOR": "1"}).stdout


def test_run_help_groups_its_options_in_panels_in_order() -> None:
    from runner.commands.common import PANELS

    out = replay("run", "--help").stdout
    found = [title for title in re.findall(r"^╭─ (.+?) ─", out, re.MULTILINE) if title in PANELS]
    assert found == list(PANELS)
    assert out.index("--patch") > out.index("What to replay") and out.index("--trust-key") > out.index("Trust")
    assert out.index("--json") > out.index("Output") > out.index("--keep") > out.index("After it reproduces")


def test_a_wrong_shell_lists_the_shells(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "powershell"]) == 2
    err = capsys.readouterr().err
    assert "bash, zsh, fish" in err and "longer than" not in err


def test_help_completes_its_topics_and_commands() -> None:
    env = {**ENV, "_REPLAY_COMPLETE": "complete_bash", "COMP_WORDS": "replay help ver", "COMP_CWORD": "2"}
    words = subprocess.run([sys.executable, "-m", "runner"], env=env, capture_output=True, text=True,
                           timeout=60).stdout.split()
    assert {"verdicts", "verify", "version"} <= set(words) and "inspect" not in words


def test_a_usage_error_of_a_sub_command_points_at_its_own_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--json", "farm", "history"]) == 2
    captured = capsys.readouterr()
    assert "(see replay farm history --help)" in captured.err
    assert json.loads(captured.out)["command"] == "farm history"
