"""The `replay` command: thin typer commands, one module each, calling the stages.

`replay CAPSULE [...]` is `replay run CAPSULE [...]`.
"""
from __future__ import annotations

import difflib
import os
import signal
import sys
import traceback
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import Exit, ReplayError, UsageError
from ..envelope import envelope, error_of
from .console import error_line, install_meter, print_json, refresh
from .helptext import tidy
from . import topics

app = typer.Typer(
    name="replay",
    help="Hermetic replay of recorded runs: rebuild the recorded environment as an image, "
    "rerun the command, say whether the recorded outcome came back.\n\n"
    "`replay CAPSULE` is `replay run CAPSULE`. `replay help CMD` shows a command's help.",
    epilog="\b\nExamples:\n  replay capsule.json --repo ../app.git\n  replay inspect capsule.json\n"
    "  replay doctor\n  replay --install-completion   # tab completion for bash, zsh, fish",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks of unexpected errors."),
    version: bool = typer.Option(False, "--version", "-V", is_eager=True, callback=lambda v: _version() if v else None,
                                 help="Print replay's version and exit (engine and SDK versions: replay doctor)."),
) -> None:
    """Exit codes: 0 success, 1 negative answer, 2 bad input or usage, 3 environment failure."""


# Each command and the module of runner/cli that registers it (help and version are here): the one
# list of command names. A call loads the module of its own command only, so `replay farm
# history` does not pay for loading the builder; help, completion and an unknown word load all.
COMMANDS: dict[str, str | None] = {
    "run": "run", "inspect": "inspect", "diff": "diff", "verify": "verify", "signature": "signature",
    "render": "render", "shell": "shell", "bisect": "bisect", "doctor": "doctor", "farm": "farm", "gc": "gc",
    "worker": "worker", "mcp": "mcp", "capture": "capture", "ci": "ci", "help": None, "version": None,
}
_loaded: set[str] = set()


def load(command: str | None = None) -> typer.Typer:
    """The app with `command`'s module registered (every command's when None); each module once."""
    import importlib

    wanted = [COMMANDS[command]] if command in COMMANDS else list(COMMANDS.values())
    for name in wanted:
        if name is not None and name not in _loaded:
            importlib.import_module(f".{name}", __package__).register(app)
            _loaded.add(name)
    return app


@app.command("help")
def help_command(
    command: Annotated[list[str] | None, typer.Argument(
        metavar="COMMAND|TOPIC",
        help=f"A command (farm run: two words) or a topic: {', '.join(topics.TOPICS)}.")] = None,
) -> None:
    """Show a command's help or a topic; without one, the commands and the topics."""
    words = list(command or [])
    if words in (["topics"], *([name] for name in topics.TOPICS)):
        sys.stdout.write(topics.listing() if words == ["topics"] else topics.TOPICS[words[0]].text())
        return
    unknown = next((w for w in words[:1] if w not in _COMMANDS), None)
    if unknown is not None:
        raise UsageError(_no_such_help(unknown))
    code = main([*words, "--help"])
    if not words:
        sys.stdout.write("\n" + topics.listing())
    raise typer.Exit(code)


@app.command("version")
def version_command() -> None:
    """Print replay's version (= replay --version; engine and SDK versions: replay doctor)."""
    _print_version()


def _no_such_help(word: str) -> str:
    match = difflib.get_close_matches(word, sorted(_COMMANDS | set(topics.TOPICS)), n=1, cutoff=0.6)
    hint = (f"; did you mean `replay help {match[0]}`?" if match else
            f" (topics: {', '.join(topics.TOPICS)}; commands: {', '.join(sorted(_COMMANDS))})")
    return f"no such command or topic {word!r}{hint}"


_COMMANDS = frozenset(COMMANDS)  # `replay CAPSULE` is `replay run` unless the word is one of these
_VERSION = ("--version", "-V")


def _argv(args: list[str]) -> list[str]:
    """`replay [OPTIONS] CAPSULE ...` is `replay run [OPTIONS] CAPSULE ...`."""
    if any(a in ("-h", "--help", *_VERSION) or a.endswith("-completion") for a in args[:1]):
        return args
    first_word = next((a for a in args if not a.startswith("-")), None)
    if first_word is None or first_word in _COMMANDS:
        return args
    if args[0] == first_word and _looks_mistyped(first_word):  # an option's value is never a typo
        raise UsageError(_no_such(first_word))
    return ["run", *args]


def _print_version() -> None:
    from .. import __version__

    print(f"replay {__version__}")


def _version() -> None:
    _print_version()
    raise typer.Exit(0)


def _safe_argv(args: list[str]) -> list[str]:
    try:
        return _argv(args)
    except UsageError:
        return args


def _looks_mistyped(word: str) -> bool:
    """A word close to a command that is no capsule (no such file, no URL): a typo, not a capsule."""
    from ..capsules.fetch import is_url  # the capsules package, only for a word that is no command

    if is_url(word) or Path(word).exists() or "/" in word or "." in word:
        return False
    return bool(difflib.get_close_matches(word, sorted(_COMMANDS), n=1, cutoff=0.6))


def _no_such(word: str) -> str:
    match = difflib.get_close_matches(word, sorted(_COMMANDS), n=1, cutoff=0.6)
    hint = f"; did you mean `replay {match[0]}`?" if match else f" (commands: {', '.join(sorted(_COMMANDS))})"
    return f"no such command {word!r}{hint}"


def _command_tree(args: list[str]) -> Any:
    """The click command of this call (its command's module loaded), plain metavars and examples in its help."""
    word = next((a for a in args if not a.startswith("-")), None)
    return tidy(typer.main.get_command(load(None if word == "help" else word)))


def _is_usage_error(exc: BaseException) -> bool:
    """click's (typer-vendored) usage and parameter errors, without importing click's internals."""
    return hasattr(exc, "format_message") and getattr(exc, "exit_code", None) == 2


def _is_help_shown(exc: BaseException) -> bool:
    """A group run bare (`replay farm`): click printed its help, which is the answer."""
    return type(exc).__name__ == "NoArgsIsHelpError"


def _is_abort(exc: BaseException) -> bool:
    return type(exc).__name__ == "Abort"


def _command(args: list[str]) -> str:
    word = next((a for a in _safe_argv(args) if not a.startswith("-")), None)
    return f"{word} " if word in _COMMANDS else ""


def threading_main() -> bool:
    """Signal handlers can only be set from the main thread (`help` re-enters main())."""
    import threading

    return threading.current_thread() is threading.main_thread()


def _terminate(signum: int, frame: object) -> None:
    """SIGTERM (a cancelled CI job) cleans up like Ctrl-C: containers, networks, rules."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    # What follows `--` is another program's (replay capture -- CMD): never read as replay's.
    ours = args[: args.index("--")] if "--" in args else args
    debug = "--debug" in ours or os.environ.get("REPLAY_DEBUG") == "1"
    args = [a for a in ours if a != "--debug"] + args[len(ours):]
    if len(args) == 1 and args[0] in _VERSION:
        _print_version()
        return 0
    if not args:  # bare `replay`: its help, not an error
        args = ["--help"]
    if threading_main():
        signal.signal(signal.SIGTERM, _terminate)
    refresh()
    if "runner.build.mirrors" in sys.modules:  # --mirror rules hold for one command: one without the option has none
        from ..build import mirrors

        mirrors.use(mirrors.Mirrors())
    # Progress bars (downloads) only for people: not with --quiet, not with --json.
    install_meter(enabled=not any(a in ("--quiet", "-q", "--json") for a in ours))
    failure = _Failure(ours)
    try:
        # Not standalone: usage errors come here as exceptions and become one line.
        argv = _argv(args)
        result = _command_tree(argv).main(args=argv, prog_name="replay", standalone_mode=False)
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
        if _is_help_shown(e):
            return 0
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
        words = [a for a in _safe_argv(args) if not a.startswith("-")]
        self.command = _command(args).strip() or "run"
        if self.command == "farm" and len(words) > 1:  # a sub-command names its own schema
            self.command = f"farm {words[1]}"

    def say(self, exc: BaseException, message: str, code: int, kind: str | None = None) -> int:
        error_line(message)  # the error's own line: it names a capsule as given (capsules/opening.py)
        if self.json:
            print_json(envelope(self.command, code, None, error_of(exc, kind, message)))
        return code


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
