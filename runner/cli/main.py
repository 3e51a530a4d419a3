"""The `replay` command: thin typer commands, one module each, calling the stages.

`replay CAPSULE [...]` is `replay run CAPSULE [...]`.
"""
from __future__ import annotations

import os
import signal
import sys
import traceback

import typer

from ..errors import Exit, ReplayError
from . import bisect, diff, farm, inspect, render, run, shell, signature, verify, worker
from ..envelope import envelope, error_of
from .console import error_line, print_json, refresh

app = typer.Typer(
    name="replay",
    help="Hermetic replay of recorded runs: rebuild the recorded environment as an image, "
    "rerun the command, say whether the recorded outcome came back.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)



@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks of unexpected errors."),
) -> None:
    """Exit codes: 0 success, 1 negative answer, 2 bad input or usage, 3 environment failure."""


for module in (run, inspect, diff, verify, signature, render, shell, bisect, farm, worker):
    module.register(app)

_COMMANDS = {"run", "inspect", "diff", "verify", "signature", "render", "shell", "bisect", "farm", "worker"}


def _argv(args: list[str]) -> list[str]:
    """`replay [OPTIONS] CAPSULE ...` is `replay run [OPTIONS] CAPSULE ...`."""
    if any(a in ("-h", "--help", "--version") for a in args[:1]):
        return args
    first_word = next((a for a in args if not a.startswith("-")), None)
    if first_word is None or first_word in _COMMANDS:
        return args
    return ["run", *args]


def _is_usage_error(exc: BaseException) -> bool:
    """click's (typer-vendored) usage and parameter errors, without importing click's internals."""
    return hasattr(exc, "format_message") and getattr(exc, "exit_code", None) == 2


def _is_abort(exc: BaseException) -> bool:
    return type(exc).__name__ == "Abort"


def _command(args: list[str]) -> str:
    word = next((a for a in _argv(args) if not a.startswith("-")), None)
    return f"{word} " if word in _COMMANDS else ""


def _terminate(signum: int, frame: object) -> None:
    """SIGTERM (a cancelled CI job) cleans up like Ctrl-C: containers, networks, rules."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get("REPLAY_DEBUG") == "1"
    args = [a for a in args if a != "--debug"]
    if args == ["--version"]:
        from .. import __version__

        print(f"replay {__version__}")
        return 0
    signal.signal(signal.SIGTERM, _terminate)
    refresh()
    failure = _Failure(args)
    try:
        # Not standalone: usage errors come here as exceptions and become one line.
        result = app(args=_argv(args), prog_name="replay", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
        if code == 130:  # typer turns Ctrl-C into Exit(130) itself; cleanup has run by now
            return failure.say(KeyboardInterrupt(), "interrupted", 130, "interrupted")
        return code
    except ReplayError as e:  # expected: one line, even with --debug
        return failure.say(e, e.line(), int(e.exit_code))
    except KeyboardInterrupt as e:
        return failure.say(e, "interrupted", 130, "interrupted")
    except Exception as e:  # the unexpected: one line, the traceback only with --debug
        if _is_usage_error(e):
            message = f"{e.format_message()} (see replay {_command(args)}--help)"  # type: ignore[attr-defined]
            return failure.say(e, message, int(Exit.BAD_INPUT), "usage")
        if _is_abort(e):
            return failure.say(e, "interrupted", 130, "interrupted")
        if debug:
            traceback.print_exc()
        message = f"internal error: {type(e).__name__}: {e} (run with --debug for the traceback)"
        return failure.say(e, message, int(Exit.ENVIRONMENT), "internal")


class _Failure:
    """How a failed command ends: one line on stderr and, with --json, the envelope on stdout."""

    def __init__(self, args: list[str]) -> None:
        self.json = "--json" in args
        words = [a for a in _argv(args) if not a.startswith("-")]
        self.command = _command(args).strip() or "run"
        if self.command == "farm" and len(words) > 1:  # a sub-command names its own schema
            self.command = f"farm {words[1]}"

    def say(self, exc: BaseException, message: str, code: int, kind: str | None = None) -> int:
        error_line(message)
        if self.json:
            print_json(envelope(self.command, code, None, error_of(exc, kind, message)))
        return code


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
