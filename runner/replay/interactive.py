"""`replay CAPSULE --debugger` and `--watch`: runs that print as they go, lines rather than a report."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import UsageError
from .debugrun import Debugged, debug_capsule
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
        done = debug_capsule(given, options, progress, port, say)
        say(ended_line(done))
        return done.exit_code
    if options.workdir is None or options.attempts != 1:
        raise UsageError("--watch goes with --workdir DIR and --attempts 1")
    from .watch import watch

    return watch(given, options, progress, say)


def ended_line(done: Debugged) -> str:
    """How the debugged run ended, in the test's own terms (under Delve: the test binary's verdict,
    not Delve's exit code, which is 0 whatever the tests said)."""
    verdict = "as recorded" if done.exit_code == 0 else done.attempt.classification
    code = done.attempt.exit_code
    if done.runtime == "go" and code != done.debugger_exit:
        return (f"the command ended: {verdict} (the tests {'passed' if code == 0 else 'failed'}: exit {code} as go "
                f"test gives it; Delve itself exited {done.debugger_exit})")
    return f"the command ended: {verdict} (exit {code})"
