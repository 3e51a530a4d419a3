"""Typer commands made from the declarations (runner/commands): each parameter's kind gives its
Python type, its click options and its check; the command's handler is imported only when it runs.
"""
from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from ..commands.catalog import GROUPS
from ..commands.common import GLOBALS, PANELS
from ..commands.outputs import Answer
from ..commands import arguments
from ..commands.spec import ArgumentError, Command, Param
from ..units import bare_number_note, parse_duration

_TYPES: dict[str, Any] = {"capsule": str, "path": Path, "paths": list[Path], "text": str, "texts": list[str],
                          "env": list[str], "count": int, "number": float, "duration": float, "size": str,
                          "flag": bool, "commit": str, "choice": str}
_CHECKED = ("env", "size", "commit", "choice")  # kinds whose check typer's own types do not make


def duration(text: str | float) -> float:
    """A --timeout value: `15m`, `90s`, `1h`, or seconds (a bare number gets a note: twin counts minutes)."""
    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    if seconds < 0:
        raise typer.BadParameter(f"{text!r}: not a negative duration")
    note = bare_number_note(text)
    if note is not None:
        sys.stderr.write(f"replay: note: {note}\n")
    return seconds


def _checker(p: Param) -> Callable[[Any, Any, Any], Any]:
    def check(ctx: Any, param: Any, value: Any) -> Any:
        if value is None or (p.repeatable and not value):
            return value
        try:
            p.check(list(value) if p.repeatable else value)
        except ArgumentError as exc:
            raise typer.BadParameter(str(exc).removeprefix(f"{p.name}: ")) from None
        if p.kind == "duration" and p.low is not None and value < p.low:
            raise typer.BadParameter(f"at least {p.low:g}s")
        return value
    return check


def _suggester(p: Param) -> Callable[[str], list[str]]:
    """Tab completion of a free text from the words its declaration names (help's commands and topics)."""
    def suggest(incomplete: str) -> list[str]:
        assert p.suggest is not None
        return [w for w in _resolve(p.suggest)() if w.startswith(incomplete)]
    return suggest


def _info(p: Param) -> Any:
    common: dict[str, Any] = {"help": p.help, "hidden": p.hidden, "metavar": p.metavar, "rich_help_panel": p.panel}
    if p.suggest is not None:
        common["autocompletion"] = _suggester(p)
    if p.kind in _CHECKED or p.kind == "duration":
        common["callback"] = _checker(p)
    if p.kind == "duration":
        common["parser"] = duration
        common["metavar"] = p.metavar or "DURATION"
    if p.kind == "choice" and not p.metavar:
        common["metavar"] = "|".join(p.choices)
    if p.kind in ("count", "number"):
        common.update(min=p.low, max=p.high)
    if not p.flags:
        return typer.Argument(show_default=False, **common)
    shown: Any = p.default_shown if p.default_shown else (p.default not in (None, [], False) and p.kind != "duration")
    return typer.Option(*p.flags, envvar=p.envvar, show_default=shown, **common)


def _parameter(p: Param) -> inspect.Parameter:
    tp: Any = _TYPES[p.kind]
    if p.default is None and not p.repeatable and p.kind != "flag":
        tp = tp | None
    if p.repeatable and not p.flags and not p.required:
        tp = tp | None
    default: Any = inspect.Parameter.empty if p.required else p.default
    if p.repeatable and p.default is None and not p.required:
        default = None
    return inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=Annotated[tp, _info(p)])


def params_of(cmd: Command) -> tuple[Param, ...]:
    """The CLI's parameters: the declared ones and the global options, in help-panel order (help lists
    the panels as their first options come; the arguments, in no panel, first in declared order)."""
    return tuple(sorted((*cmd.params, *GLOBALS), key=lambda p: PANELS.index(p.panel) + 1 if p.panel else 0))


def _resolve(where: str) -> Any:
    """A "module:function" the declarations name, under runner.cli, imported only when used."""
    module, _, function = where.partition(":")
    return getattr(importlib.import_module(f"runner.cli.{module}"), function)


def _handler(cmd: Command) -> Callable[[arguments.Arguments], Answer | int | None]:
    found: Callable[[arguments.Arguments], Answer | int | None] = _resolve(cmd.handler)
    return found


def function_of(cmd: Command) -> Callable[..., int]:
    """The typer callback: the declared signature; calls the handler with its typed arguments."""
    def invoke(**values: Any) -> int:
        from .console import configure, emit

        configure(color="never" if values["no_color"] else values["color"], quiet=values["quiet"] or values["json"])
        typed: type[arguments.Arguments] = getattr(arguments, cmd.arguments)
        answer = _handler(cmd)(typed(**values))
        if isinstance(answer, Answer):  # a typed result: the one renderer writes it
            return emit(cmd.name, answer, values["json"], bool(values.get("show_all")) or values["verbose"],
                        values["quiet"])
        return int(answer or 0)

    parameters = [_parameter(p) for p in params_of(cmd)]
    invoke.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    invoke.__annotations__ = {p.name: p.annotation for p in parameters}
    invoke.__name__ = cmd.name.replace(" ", "_")
    invoke.__doc__ = help_text(cmd)
    return invoke


def help_text(cmd: Command) -> str:
    """The summary, the longer help and the exit rule: the command's help, from its declaration."""
    parts = [cmd.summary]
    if cmd.help:
        parts.append(cmd.help)
    parts.append(f"Exit {cmd.exit_rule()}.")
    return "\n\n".join(parts)


def epilog(cmd: Command) -> str | None:
    if not cmd.examples:
        return None
    # typer's rich help keeps single line breaks only inside a "\b" paragraph.
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in cmd.examples)


def register(app: typer.Typer, cmd: Command, groups: dict[str, typer.Typer]) -> None:
    """Add the declared command to the app (a two-word command to its group's own Typer)."""
    settings: dict[str, Any] = {"help_option_names": ["-h", "--help"]}
    if cmd.stop_at_first_word:
        settings["allow_interspersed_args"] = False
    target = app
    if len(cmd.words) > 1:
        group = cmd.words[0]
        if group not in groups:
            groups[group] = typer.Typer(name=group, no_args_is_help=True, add_completion=False, help=GROUPS[group])
            app.add_typer(groups[group], name=group)
        target = groups[group]
    target.command(cmd.words[-1], epilog=epilog(cmd), context_settings=settings,
                   short_help=cmd.summary)(function_of(cmd))
