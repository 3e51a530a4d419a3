"""Every command line replay prints for a person to run next parses, as printed, by the CLI's own
parser into what it means (issue 40): diff's next step, the report's "try:" lines. (The
integration test tests/integration/test_next_steps.py runs diff's next step in a shell.)"""
from __future__ import annotations

import dataclasses
import shlex
from typing import Any

from runner.build.plan import PlanOptions
from runner.capsules.model import EnvFact, FrozenMap, Repo
from runner.cli.main import _command_tree
from runner.commands.words import normal_argv
from runner.facts.diff import diff_capsules, next_step
from runner.replay.job import rerun_words
from runner.replay.options import ReplayOptions
from runner.capsules import read_capsule
from tests.examples import TZ_CAPSULE


def parsed(printed: list[str] | str) -> tuple[str, dict[str, Any]]:
    """The command and its values, as `replay` parses the printed words (a line through the shell's rules)."""
    words = shlex.split(printed) if isinstance(printed, str) else printed
    assert words[0] == "replay"
    argv = normal_argv(words[1:])
    group = _command_tree()
    cmd = group.commands[argv[0]]
    return argv[0], cmd.make_context(argv[0], argv[1:]).params


def test_diffs_next_bisect_parses_with_every_option_it_carries() -> None:
    failing = dataclasses.replace(read_capsule(TZ_CAPSULE), repo=Repo("/home/me/app", "c" * 40, "main", False, ""),
                                  env=FrozenMap({"APP_LANG": EnvFact("APP_LANG", "set")}))
    passing = dataclasses.replace(failing, env=FrozenMap({}), command=dataclasses.replace(
        failing.command, exit_code=0, outcome="pass", failure=None))
    d = diff_capsules(failing, passing)
    for carry, repo in ((["--repo=../app.git", "--mirror=https://x=/m"], "../app.git"), ([], "PATH_OR_URL")):
        argv, _ = next_step(failing, passing, d, carry)
        name, values = parsed(argv)
        assert name == "bisect" and values["repo"] == repo and values["env"] == ["APP_LANG=…"]
        assert values["bad"] == failing.provenance.path and values["good"]
        assert argv.count("--repo") + sum(w.startswith("--repo=") for w in argv) == 1  # asked once, never twice


def test_the_reports_rerun_line_parses_as_a_replay_with_what_it_was_given() -> None:
    options = ReplayOptions(plan=PlanOptions(repo="../app.git", env_overrides=(("TOKEN", "s3cret"),)))
    words = rerun_words("-odd.json", options)
    assert "s3cret" not in " ".join(words)  # a supplied value is the shell's, never printed
    name, values = parsed([*words, "--http-ignore=ts"])
    assert name == "run" and values["capsule"] == "./-odd.json" and values["repo"] == "../app.git"
    assert values["env"] == ["TOKEN=$TOKEN"] and values["http_ignore"] == ["ts"]
