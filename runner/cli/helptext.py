"""Help people read: no Python types in it.

typer shows each option's Python type (`<list[str]>`, `<bool>`, `<float range>`); to a user
those say nothing. `tidy()` walks the click command tree once, before it runs, and gives every
option a word for what it takes (flags none). The words themselves come from the declarations
(runner/commands): an option declared without a metavar gets one from its Python type.
"""
from __future__ import annotations

from typing import Any

# What an option's value is, by its Python type, when the option gives no metavar.
_WORDS = {"int": "N", "float": "NUMBER", "str": "TEXT", "Path": "PATH", "bool": ""}


def tidy(command: Any) -> Any:
    """The command tree with plain metavars (changed in place, returned)."""
    for param in command.params:
        _plain(param)
    make_help = command.get_help_option
    # click makes --help lazily, per invocation: plain it as it is made
    command.get_help_option = lambda ctx: _plain(make_help(ctx))
    for sub in (getattr(command, "commands", None) or {}).values():
        tidy(sub)
    return command


def _plain(param: Any) -> Any:
    """A word for what the value is (flags: none) instead of its Python type."""
    if param is None:
        return None
    if param.param_type_name == "option" and param.metavar is None:
        param.metavar = "" if param.is_flag else _word(param)
    elif param.param_type_name == "argument":
        param.metavar = param.metavar or param.name.upper()
        param.display_type_rich = lambda ctx: None  # the name (CAPSULE, FILE|-) says it
    return param


def _word(param: Any) -> str:
    name = str(param.bare_type())
    if name.startswith("list[") and name.endswith("]"):  # a repeatable option: one value a time
        name = name[5:-1]
    return _WORDS.get(name, "VALUE")
