"""`replay CAPSULE --debugger` and `--watch`: runs that print as they go, lines rather than a report."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import UsageError
from .options import ReplayOptions
from .progress import Progress


def interactive(given: Path | str, options: ReplayOptions, progress: Progress, say: Callable[[str], None], *,
                debugger: bool, port: int | None, watching: bool, as_json: bool) -> int:
    """One run under the debugger (exit 0 when it ended as recorded), or the fix loop."""
    if as_json:
        raise UsageError("--debugger and --watch print as they go: they do not go with --json")
    if debugger and watching:
        raise UsageError("--debugger and --watch do not go together")
    if port is not None and not debugger:
        raise UsageError("--debugger-port goes with --debugger")
    if options.keep:
        raise UsageError("--keep keeps an attempt of a replay: it does not go with --debugger or --watch")
    if debugger:
        from .debugrun import debug_capsule

        done = debug_capsule(given, options, progress, port, say)
        say(f"the command ended: {'as recorded' if done.exit_code == 0 else done.attempt.classification} "
            f"(exit {done.attempt.exit_code}"
            + (", Delve's: the program's own exit status showed in the client)" if done.runtime == "go" else ")"))
        return done.exit_code
    if options.workdir is None or options.attempts != 1:
        raise UsageError("--watch goes with --workdir DIR and --attempts 1")
    from .watch import watch

    return watch(given, options, progress, say)
