"""Each command is one declaration, one typed argument class and one typed result: the handler's
arguments are the declared parameters by name and type (so mypy sees every option), and a command
that declares a result returns it for the one renderer (issue 40)."""
from __future__ import annotations

import dataclasses
import importlib
import inspect
import typing
from pathlib import Path

import pytest

from runner.cli.build import params_of
from runner.commands import arguments
from runner.commands.catalog import COMMANDS
from runner.commands.outputs import Answer, result_type
from runner.commands.spec import Command


def _handler(cmd: Command) -> typing.Any:
    module, _, name = cmd.handler.partition(":")
    return getattr(importlib.import_module(f"runner.cli.{module}"), name)


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: c.name)
def test_the_typed_arguments_are_the_declared_parameters(cmd: Command) -> None:
    typed = getattr(arguments, cmd.arguments)
    assert sorted(f.name for f in dataclasses.fields(typed)) == sorted(p.name for p in params_of(cmd))
    hints = typing.get_type_hints(typed)
    for p in params_of(cmd):
        if p.kind == "choice":
            literal = next(t for t in (hints[p.name], *typing.get_args(hints[p.name]))
                           if typing.get_origin(t) is typing.Literal)
            assert typing.get_args(literal) == p.choices, p.name
        if p.required and not p.repeatable:
            assert type(None) not in typing.get_args(hints[p.name]), f"{p.name} is required: never None"


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: c.name)
def test_the_handler_takes_its_typed_arguments_and_returns_its_declared_result(cmd: Command) -> None:
    hints = typing.get_type_hints(_handler(cmd))
    assert hints["a"] is getattr(arguments, cmd.arguments)
    returned = hints["return"]
    found = {t for t in (returned, *typing.get_args(returned)) if isinstance(t, type) and issubclass(t, Answer)}
    if cmd.result is None:
        assert not found, f"{cmd.name} returns a result its declaration does not name"
    else:
        assert found == {result_type(cmd)}


def test_a_result_carries_its_exit_rule(tmp_path: Path) -> None:
    from runner.commands.replayed import History

    assert History("x.json", "x.json", []).exit_code == 1  # no night recorded: a negative answer
    assert inspect.isabstract(Answer)


def test_a_required_list_argument_missing_is_usage_not_an_internal_error(capsys: pytest.CaptureFixture[str]) -> None:
    from runner.cli.main import main

    assert main(["ci", "post", "--repo", "a/b", "--pr", "1"]) == 2
    assert "Missing argument 'FILE...'" in capsys.readouterr().err
