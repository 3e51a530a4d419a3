"""`replay capture -- CMD`: run a command here, streaming its output, and record it as a capsule.

Exits with the command's own code (a signal as 128+N), so a CI step keeps its meaning.
Its own failures: a usage error exits 2 before the command runs; a capsule that cannot be
written is one line on stderr and exit 3 when the command passed (its code wins when it failed).
"""
from __future__ import annotations

from ..capture import CaptureOptions, CapsuleNotWritten, cache_warning
from ..capture import capture as run_capture
from ..commands.answers import CaptureAnswer, not_written_exit
from ..commands.arguments import CaptureArgs
from ..errors import UsageError
from .console import err, error_line


def capture(a: CaptureArgs) -> CaptureAnswer | int:
    argv, include_env = list(a.command or []), list(a.include_env)
    for name in include_env:
        if not name or "=" in name:
            raise UsageError(f"--include-env {name!r}: a variable's name (without =VALUE)")
    opts = CaptureOptions(output=a.output, only_on_failure=a.only_on_failure, include_env=tuple(include_env),
                          salt=a.salt or None, fmt=a.format)
    try:
        captured = run_capture(argv, opts)
    except CapsuleNotWritten as exc:
        error_line(exc.line())
        return not_written_exit(exc)
    warning = cache_warning(captured.doc)
    if warning is not None and not a.quiet:  # with --json too: stderr is not the answer
        err.print(warning, markup=False, highlight=False)
    return CaptureAnswer(captured)
