"""`replay capture -- CMD`: run a command here, streaming its output, and record it as a capsule.

Exits with the command's own code (a signal as 128+N), so a CI step keeps its meaning.
Its own failures: a usage error exits 2 before the command runs; a capsule that cannot be
written is one line on stderr and exit 3 when the command passed (its code wins when it failed).
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..capture import FORMATS, CaptureOptions, CapsuleNotWritten, capture, env_hint, redaction_line
from ..errors import Exit, UsageError
from ..textsafe import shown
from .console import err, error_line

_CONTEXT = {"allow_interspersed_args": False}  # the first word of CMD ends replay's options


def register(app: typer.Typer) -> None:
    app.command("capture", context_settings=_CONTEXT)(capture_command)


def capture_command(
    command: Annotated[list[str] | None, typer.Argument(metavar="-- CMD [ARG...]", show_default=False,
                                                        help="The command to run and record.")] = None,
    output: Annotated[Path, typer.Option("--output", "-o", metavar="FILE", help="Where to write the capsule.")] = Path("capsule.json"),
    fmt: Annotated[str, typer.Option("--format", metavar="FORMAT", help=f"Capsule format: {', '.join(FORMATS)}.")] = "twin",
    only_on_failure: Annotated[bool, typer.Option("--only-on-failure", help="Write the capsule only when the command fails.")] = False,
    include_env: Annotated[list[str], typer.Option("--include-env", metavar="NAME", help="Also record this variable's value, scrubbed (refused for one whose name says it is a secret).")] = [],
    salt: Annotated[str | None, typer.Option("--salt", envvar="REPLAY_SALT", help="Record a salted hash of each value that is not recorded (compare with `replay --salt`).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No closing line on stderr (errors still go there).")] = False,
) -> int:
    """Run CMD here and record it as a twin capsule; exit with CMD's own exit code."""
    argv = list(command or [])
    for name in include_env:
        if not name or "=" in name:
            raise UsageError(f"--include-env {name!r}: a variable's name (without =VALUE)")
    opts = CaptureOptions(output=output, only_on_failure=only_on_failure, include_env=tuple(include_env),
                          salt=salt or None, fmt=fmt)
    try:
        captured = capture(argv, opts)
    except CapsuleNotWritten as exc:
        code = exc.run_code
        error_line(exc.line())
        return code if code != 0 else int(Exit.ENVIRONMENT)
    result = captured.result
    if not quiet:
        ending = (f"fail: {result.signal}" if result.signal else
                  f"fail: exit {result.exit_code}" if result.failed else "pass")
        if captured.written is None:
            err.print(f"replay capture: {ending}; no capsule written (--only-on-failure)", markup=False)
        else:
            err.print(redaction_line(captured.doc), markup=False, highlight=False)
            hint = env_hint(captured.doc) if result.failed else None
            if hint is not None:
                err.print(hint, markup=False, highlight=False)
            said = f", signature {captured.doc['command']['failure']['signature']}" if result.failed else ""
            err.print(f"replay capture: {ending}{said}; capsule written to {shown(str(captured.written))}",
                      markup=False, highlight=False)
    return result.shell_code
