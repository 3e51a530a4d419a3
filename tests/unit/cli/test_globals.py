"""The global options on every command (-q, -v, --color, --json), help fitted to the terminal (80 in a
pipe) without internal paths, and a closed pipe that is no error (issue 31)."""
from __future__ import annotations

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


@pytest.mark.parametrize("cmd", [c for c in COMMANDS if c.globals], ids=lambda c: c.name)
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
