"""`replay capture -- CMD`: run a command here, streaming its output, and record it as a capsule.

Exits with the command's own code (a signal as 128+N), so a CI step keeps its meaning.
Its own failures: a usage error exits 2 before the command runs; a capsule that cannot be
written is one line on stderr and exit 3 when the command passed (its code wins when it failed).
"""
from __future__ import annotations

from ..capture import CaptureOptions, CapsuleNotWritten
from ..capture import capture as run_capture
from ..commands.spec import Args
from ..errors import Exit, UsageError
from ..textsafe import shown
from .console import err, error_line, print_result


def capture(a: Args) -> int:
    """Run CMD here and record it as a twin capsule; exit with CMD's own exit code."""
    argv, include_env = list(a.command or []), list(a.include_env)
    for name in include_env:
        if not name or "=" in name:
            raise UsageError(f"--include-env {name!r}: a variable's name (without =VALUE)")
    opts = CaptureOptions(output=a.output, only_on_failure=a.only_on_failure, include_env=tuple(include_env),
                          salt=a.salt or None, fmt=a.format)
    try:
        captured = run_capture(argv, opts)
    except CapsuleNotWritten as exc:
        code = exc.run_code
        error_line(exc.line())
        return code if code != 0 else int(Exit.ENVIRONMENT)
    result = captured.result
    if a.json:
        signature = captured.doc["command"]["failure"]["signature"] if result.failed and captured.doc else None
        print_result("capture", result.shell_code, {
            "written": None if captured.written is None else str(captured.written), "failed": result.failed,
            "exit_code": result.exit_code, "signal": result.signal, "signature": signature})
    elif not a.quiet:
        ending = (f"fail: {result.signal}" if result.signal else
                  f"fail: exit {result.exit_code}" if result.failed else "pass")
        if captured.written is None:
            err.print(f"replay capture: {ending}; no capsule written (--only-on-failure)", markup=False)
        else:
            said = f", signature {captured.doc['command']['failure']['signature']}" if result.failed else ""
            err.print(f"replay capture: {ending}{said}; capsule written to {shown(str(captured.written))}",
                      markup=False, highlight=False)
    return result.shell_code
