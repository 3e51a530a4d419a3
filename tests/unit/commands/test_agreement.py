"""The CLI and the MCP tools are made from one declaration per command, and agree on every command:
the same parameters, the same bounds, and an MCP call's words parse, by the CLI's own parser, into
the values the agent gave."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer

from runner.cli.build import params_of
from runner.cli.main import app
from runner.commands.catalog import COMMANDS, tools
from runner.commands.common import GLOBALS
from runner.commands.spec import Command, Param
from runner.units import parse_duration


def _click(cmd: Command) -> Any:
    group = typer.main.get_command(app)
    for word in cmd.words:
        group = group.commands[word]
    return group


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: c.name)
def test_the_cli_command_has_exactly_the_declared_parameters(cmd: Command) -> None:
    click_cmd = _click(cmd)
    assert [p.name for p in click_cmd.params] == [p.name for p in params_of(cmd)]
    for declared, made in zip(params_of(cmd), click_cmd.params):
        assert tuple(made.opts + made.secondary_opts) == declared.flags or (not declared.flags and not made.opts[1:])


def _required(cmd: Command, but: str) -> list[str]:
    """Words for the command's required parameters but one (positionals last)."""
    words: list[str] = []
    for p in cmd.params:
        if p.required and p.name != but:
            sample = _sample(p)
            values = sample if isinstance(sample, list) else [sample]
            words += [f"{p.option}={v}" for v in values] if p.option else []
    return words + [str(_sample(p)) for p in cmd.params if p.required and not p.flags and p.name != but]


BOUNDED = [(cmd, p) for cmd in COMMANDS for p in cmd.params if p.kind in ("count", "number") and p.flags]


@pytest.mark.parametrize(("cmd", "p"), BOUNDED, ids=[f"{c.name} {p.name}" for c, p in BOUNDED])
def test_the_cli_holds_the_declared_bounds(cmd: Command, p: Param) -> None:
    """The bound the declaration gives is the CLI's (and, below, the MCP schema's)."""
    assert p.option is not None and p.high is not None
    cast = int if p.kind == "count" else float
    ok, over = cast(p.high), cast(p.high) + 1
    ctx = _click(cmd).make_context(f"replay {cmd.name}", [*_required(cmd, p.name), f"{p.option}={ok}"])
    assert ctx.params[p.name] == ok
    with pytest.raises(Exception, match="less than or equal"):
        _click(cmd).make_context(f"replay {cmd.name}", [*_required(cmd, p.name), f"{p.option}={over}"])


def _sample(p: Param) -> Any:
    """A valid value of the parameter, as an agent would send it."""
    return {"capsule": "c.json", "path": "some/file", "paths": ["k1.pem", "k2.pem"], "text": "word",
            "texts": ["a=b"], "env": ["TZ=UTC", "EMPTY="], "count": int(p.high if p.high is not None else 5),
            "number": (float(p.low or 0) + float(p.high if p.high is not None else 2)) / 2, "duration": "90s", "size": "512m", "flag": True,
            "commit": "abc1234", "choice": p.choices[-1] if p.choices else None}[p.kind]


def _as_parsed(p: Param, value: Any) -> Any:
    """What the CLI's parser makes of the agent's value."""
    if p.kind == "duration":
        return parse_duration(value)
    if p.kind == "path":
        return Path(value)
    if p.kind == "paths":
        return [Path(v) for v in value]
    return value


@pytest.mark.parametrize("cmd", tools(), ids=lambda c: str(c.mcp))
def test_an_mcp_call_parses_on_the_cli_into_the_values_given(cmd: Command) -> None:
    arguments = {p.name: _sample(p) for p in cmd.mcp_params()}
    words = cmd.argv(arguments)
    assert words[: len(cmd.words)] == list(cmd.words) and "--json" in words
    ctx = _click(cmd).make_context(f"replay {cmd.name}", words[len(cmd.words):])
    for p in cmd.mcp_params():
        assert ctx.params[p.name] == _as_parsed(p, arguments[p.name]), p.name
    assert ctx.params["json"] is True


@pytest.mark.parametrize("cmd", tools(), ids=lambda c: str(c.mcp))
def test_the_mcp_schema_has_the_declared_bounds(cmd: Command) -> None:
    props = cmd.input_schema()["properties"]
    assert set(props) == {p.name for p in cmd.mcp_params()}
    assert not {g.name for g in GLOBALS} & set(props)  # --json is the server's own; -q, -v, --color a terminal's
    for p in cmd.mcp_params():
        if p.kind == "count":
            assert props[p.name]["minimum"] == p.low and props[p.name].get("maximum") == p.high


def test_bisect_jobs_is_bounded_the_same_on_both_sides() -> None:
    """MCP capped bisect's jobs at 64 where the CLI did not (issue 31)."""
    bisect = next(c for c in COMMANDS if c.name == "bisect")
    with pytest.raises(Exception, match="less than or equal to 64"):
        _click(bisect).make_context("replay bisect", ["--good=g", "--jobs=65", "b"])
    assert bisect.input_schema()["properties"]["jobs"]["maximum"] == 64


def test_replay_offers_mirror_over_mcp_too() -> None:
    """Its error said "pass --mirror" where the tool had no such argument (issue 31)."""
    run = next(c for c in COMMANDS if c.name == "run")
    assert "mirror" in run.input_schema()["properties"]
