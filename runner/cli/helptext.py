"""Help people read: examples under every command, and no Python types.

typer shows each option's Python type (`<list[str]>`, `<bool>`, `<float range>`);
to a user those say nothing. `tidy()` walks the click command tree once, before it
runs, and gives every option a word for what it takes (flags none), and every
command its examples as an epilog. The examples live here, in one table, so that
`replay help CMD` and docs/cli.md say the same thing.
"""
from __future__ import annotations

from typing import Any

EXAMPLES: dict[str, tuple[str, ...]] = {
    "run": (
        "replay examples/tz-clock/capsule.json --repo examples/tz-clock/repo.bundle",
        "replay capsule.json --env TZ=UTC --timeout 15m -n 5",
        "replay https://ci.example.com/artifacts/capsule.json --json",
    ),
    "inspect": ("replay inspect capsule.json", "replay inspect capsule.json --all", "replay inspect capsule.json --json"),
    "diff": ("replay diff failing.json passing.json", "replay diff failing.json passing.json --json"),
    "verify": ("replay verify capsule-dir/ --trust-key dana.pub.pem",),
    "signature": ("npm test > test.log 2>&1; replay signature test.log --exit-code $?",),
    "render": ("replay render capsule.json > Dockerfile", "replay render capsule.json -o ctx/ --repo ../app.git"),
    "shell": ("replay shell capsule.json --repo ../app.git",),
    "bisect": (
        "replay bisect failing.json --good passing.json --repo ../app.git",
        "replay bisect failing.json --good passing.json --commits",
        "replay bisect failing.json --good passing.json --sweep runtime:node",
    ),
    "capture": (
        "replay capture -o capsule.json -- npm test",
        "replay capture --only-on-failure -o capsule.json -- pytest -x",
        "TZ=UTC replay capture -o utc.json -- npm test; replay diff capsule.json utc.json",
    ),
    "doctor": ("replay doctor", "replay doctor --json"),
    "mcp": ("replay mcp", "claude mcp add replay -- replay mcp"),
    "gc": ("replay gc --dry-run", "replay gc --label farm-20261201T020000Z-4f2a1c"),
    "help": ("replay help run", "replay help farm run"),
    "farm": ("replay farm run capsules/ --repo ../app.git", "replay farm report --html farm.html"),
    "farm run": ("replay farm run capsules/ nightly.txt --repo ../app.git --timeout 10m", "replay farm run --resume"),
    "farm report": ("replay farm report", "replay farm report --html farm.html --junit farm.xml --since 7"),
    "farm history": ("replay farm history capsules/ci/fetch.json",),
}

# What an option's value is, by its Python type, when the option gives no metavar.
_WORDS = {"int": "N", "float": "NUMBER", "str": "TEXT", "Path": "PATH", "bool": ""}


def epilog(name: str) -> str | None:
    lines = EXAMPLES.get(name)
    if not lines:
        return None
    # typer's rich help keeps single line breaks only inside a "\b" paragraph.
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


def tidy(command: Any, path: str = "") -> Any:
    """The command tree with plain metavars and examples (changed in place, returned)."""
    if path and command.epilog is None:
        command.epilog = epilog(path)
    for param in command.params:
        _plain(param)
    make_help = command.get_help_option
    # click makes --help lazily, per invocation: plain it as it is made
    command.get_help_option = lambda ctx: _plain(make_help(ctx))
    for name, sub in (getattr(command, "commands", None) or {}).items():
        tidy(sub, f"{path} {name}".strip())
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
