"""The `replay` command: typer commands made from the declarations (runner/commands), and the one
edge that turns typed errors into one line and an exit code.

`replay CAPSULE [...]` is `replay run CAPSULE [...]`.
"""
from __future__ import annotations

import difflib
import os
import signal
import sys
import traceback
from typing import Any

import typer

from ..commands.catalog import BY_NAME, COMMANDS, GROUPS
from ..commands.answers import Versioned
from ..commands.common import VERSION
from ..commands.words import COMMAND_WORDS as _COMMANDS, normal_argv, safe_argv
from ..commands.arguments import CompletionArgs, HelpArgs, VersionArgs
from ..errors import Exit, PathError, ReplayError, UsageError
from ..codec import envelope, error_of
from ..commands import topics
from .build import register
from .console import error_line, install_meter, print_json, refresh

app = typer.Typer(
    name="replay",
    help="Hermetic replay of recorded runs: rebuild the recorded environment as an image, "
    "rerun the command, say whether the recorded outcome came back.\n\n"
    "`replay CAPSULE` is `replay run CAPSULE`. `replay help CMD` shows a command's help.",
    epilog="\b\nExamples:\n  replay capsule.json --repo ../app.git\n  replay inspect capsule.json\n"
    "  replay doctor\n  replay completion bash   # tab completion: bash, zsh, fish",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def _root(
    version: bool = typer.Option(False, *VERSION.flags, is_eager=True, callback=lambda v: _version() if v else None,
                                 help=VERSION.help),
) -> None:
    """Exit codes: 0 success, 1 negative answer, 2 bad input or usage, 3 environment failure."""


_groups: dict[str, typer.Typer] = {}
for _cmd in COMMANDS:
    register(app, _cmd, _groups)

_VERSION = VERSION.flags


def help_words() -> list[str]:
    """What `replay help <TAB>` offers: every command and group, every topic."""
    return sorted(_COMMANDS | set(topics.TOPICS) | {"topics"})


def help_command(a: HelpArgs) -> int:
    words = list(a.command or [])
    if words in (["topics"], *([name] for name in topics.TOPICS)):
        from .console import help_width

        text = topics.listing() if words == ["topics"] else topics.TOPICS[words[0]].text()
        sys.stdout.write(topics.wrapped(text, help_width()))
        return 0
    unknown = next((w for w in words[:1] if w not in _COMMANDS), None)
    if unknown is not None:
        raise UsageError(_no_such_help(unknown))
    code = main([*words, "--help"])
    if not words:
        from .console import help_width

        sys.stdout.write("\n" + topics.wrapped(topics.listing(), help_width()))
    return code


def version_command(a: VersionArgs) -> Versioned:
    from .. import __version__

    return Versioned(__version__)


def completion_command(a: CompletionArgs) -> int:
    from typer._completion_shared import get_completion_script

    sys.stdout.write(get_completion_script(prog_name="replay", complete_var="_REPLAY_COMPLETE", shell=a.shell) + "\n")
    return 0


def _no_such_help(word: str) -> str:
    match = difflib.get_close_matches(word, sorted(_COMMANDS | set(topics.TOPICS)), n=1, cutoff=0.6)
    hint = (f"; did you mean `replay help {match[0]}`?" if match else
            f" (topics: {', '.join(topics.TOPICS)}; commands: {', '.join(sorted(_COMMANDS))})")
    return f"no such command or topic {word!r}{hint}"


def _print_version() -> None:
    from .. import __version__

    print(f"replay {__version__}")


def _version() -> None:
    _print_version()
    raise typer.Exit(0)


def _command_tree() -> Any:
    """The click command of the app, plain metavars in its help."""
    from .helptext import tidy

    return tidy(typer.main.get_command(app))


def _is_usage_error(exc: BaseException) -> bool:
    """click's usage and parameter errors, without importing click's internals."""
    return hasattr(exc, "format_message") and getattr(exc, "exit_code", None) == 2


def _is_help_shown(exc: BaseException) -> bool:
    """A group run bare (`replay farm`): click printed its help, which is the answer."""
    return type(exc).__name__ == "NoArgsIsHelpError"


def _is_abort(exc: BaseException) -> bool:
    return type(exc).__name__ == "Abort"


def _command(args: list[str]) -> str:
    """The command the words name ("farm history "), for a usage error's hint and the error envelope."""
    words = [a for a in safe_argv(args) if not a.startswith("-")]
    if not words or words[0] not in _COMMANDS:
        return ""
    named = " ".join(words[:2]) if words[0] in GROUPS and len(words) > 1 and " ".join(words[:2]) in BY_NAME else words[0]
    return f"{named} "


def threading_main() -> bool:
    """Signal handlers can only be set from the main thread (`help` re-enters main())."""
    import threading

    return threading.current_thread() is threading.main_thread()


def _terminate(signum: int, frame: object) -> None:
    """SIGTERM (a cancelled CI job) and SIGHUP (the terminal closed) clean up like Ctrl-C: containers, networks, rules."""
    raise KeyboardInterrupt


class _PipeClosed(Exception):
    """What rich's consoles raise when the reader of stdout went away (in place of rich's exit 1)."""


def _pipe_closed_by_rich(console: object) -> None:
    raise _PipeClosed


def _prepare(ours: list[str]) -> None:
    from rich.console import Console
    from typer._completion_classes import completion_init

    Console.on_broken_pipe = _pipe_closed_by_rich  # type: ignore[method-assign,assignment]  # every console, typer's help too

    completion_init()  # a shell's tab completion request (_REPLAY_COMPLETE) is answered in typer's terms
    if threading_main():
        signal.signal(signal.SIGTERM, _terminate)
        signal.signal(signal.SIGHUP, _terminate)  # the terminal closed: the same cleanup
    refresh()
    _colour_early(ours)
    if "runner.build.sources.mirrors" in sys.modules:  # --mirror rules hold for one command: one without the option has none
        from ..build.sources import mirrors

        mirrors.use(mirrors.Mirrors())
    # Progress bars (downloads) only for people: not with --quiet, not with --json.
    install_meter(enabled=not any(a in ("--quiet", "-q", "--json") for a in ours))


def _colour_early(ours: list[str]) -> None:
    """--no-color / --color never hold for the help too, which click prints before the command runs."""
    from .console import configure

    unsaid = not any(a.startswith("--color") for a in ours)
    never = "--no-color" in ours or (unsaid and bool(os.environ.get("NO_COLOR"))) or "--color=never" in ours or any(
        a == "--color" and b == "never" for a, b in zip(ours, ours[1:]))
    if never:
        configure(color="never")


def _split(argv: list[str] | None) -> tuple[list[str], list[str], bool]:
    """(the words without --debug, replay's own words, --debug): what follows `--` is another
    program's (replay capture -- CMD), never read as replay's."""
    args = list(sys.argv[1:] if argv is None else argv)
    ours = args[: args.index("--")] if "--" in args else args
    debug = "--debug" in ours or os.environ.get("REPLAY_DEBUG") == "1"
    return [a for a in ours if a != "--debug"] + args[len(ours):], ours, debug


def main(argv: list[str] | None = None) -> int:
    args, ours, debug = _split(argv)
    if len(args) == 1 and args[0] in _VERSION:
        _print_version()
        return 0
    if not args:  # bare `replay`: its help, not an error
        args = ["--help"]
    _prepare(ours)
    failure = _Failure(ours)
    try:
        # Not standalone: usage errors come here as exceptions and become one line.
        argv = normal_argv(args)
        result = _command_tree().main(args=argv, prog_name="replay", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
        if type(sys.stdout).__name__ == "PacifyFlushWrapper":  # click's answer to a closed pipe (EPIPE): exit 1
            return _pipe_closed()
        if code == 130:  # typer turns Ctrl-C into Exit(130) itself; cleanup has run by now
            return failure.say(KeyboardInterrupt(), "interrupted", 130, "interrupted")
        return code
    except (BrokenPipeError, _PipeClosed):  # `replay doctor | head`: the reader has what it wanted
        return _pipe_closed()
    except ReplayError as e:  # expected: one line, even with --debug
        return failure.say(e, e.line(), int(e.exit_code))
    except KeyboardInterrupt as e:
        return failure.say(e, "interrupted", 130, "interrupted")
    except Exception as e:  # the unexpected: one line, the traceback only with --debug
        return _unexpected(e, args, failure, debug)


def _unexpected(e: Exception, args: list[str], failure: _Failure, debug: bool) -> int:
    if _is_help_shown(e):
        return 0
    if _is_usage_error(e):
        message = f"{e.format_message()} (see replay {_command(args)}--help)"  # type: ignore[attr-defined]
        return failure.say(e, message, int(Exit.BAD_INPUT), "usage")
    if _is_abort(e):
        return failure.say(e, "interrupted", 130, "interrupted")
    if isinstance(e, OSError) and e.filename is not None:  # a path the stages did not name themselves
        named = PathError.of(os.fsdecode(e.filename) if isinstance(e.filename, (str, bytes)) else str(e.filename), e)
        return failure.say(named, named.line(), int(named.exit_code))
    if debug:
        traceback.print_exc()
    message = f"internal error: {type(e).__name__}: {e} (run with --debug for the traceback)"
    return failure.say(e, message, int(Exit.ENVIRONMENT), "internal")


def _pipe_closed() -> int:
    """Nothing more can be written: point stdout at /dev/null so the interpreter's last flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 0


class _Failure:
    """How a failed command ends: one line on stderr and, with --json, the envelope on stdout."""

    def __init__(self, args: list[str]) -> None:
        self.json = "--json" in args
        self.command = _command(args).strip() or "run"  # a group's sub-command names its own schema

    def say(self, exc: BaseException, message: str, code: int, kind: str | None = None) -> int:
        error_line(message)  # the error's own line: it names a capsule as given (capsules/opening.py)
        if self.json:
            print_json(envelope(self.command, code, None, error_of(exc, kind, message)))
        return code


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
