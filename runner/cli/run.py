"""`replay CAPSULE` (= `replay run CAPSULE`): rebuild, rerun, judge."""
from __future__ import annotations

from pathlib import Path

from ..commands.spec import Args
from ..errors import UsageError
from ..replay import Progress, ReplayOptions, replay_capsule
from ..report import ReplayReport, show, to_json
from ..replay import inputs as o
from ..replay.workdir import checked, workdir_diff
from .console import err, out, print_result


def write_comment(path: Path, report: ReplayReport, ref: str | None) -> None:
    from ..report.comment import render_comment

    try:
        path.write_text(render_comment(report, ref), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot write the comment ({exc.strerror})") from exc


def run(a: Args) -> int:
    trust = o.trust(a.values)  # checked before anything is read
    plan_opts = o.plan_options(a.values)
    workdir = str(checked(a.workdir)) if a.workdir is not None else None
    opts = ReplayOptions(timeout=a.timeout, memory=a.memory, verbose=a.verbose, plan=plan_opts,
                         secret_env=plan_opts.env_overrides, trust=trust, alternatives=not a.no_alternatives,
                         workdir=workdir, **o.stopping(a.values))
    if a.debugger or a.watch:
        return _interactive(a, opts)
    report = replay_capsule(a.capsule, opts, Progress(err, quiet=a.quiet or a.json))  # names the capsule as given
    if a.comment is not None:
        write_comment(a.comment, report, a.ref)
    if a.junit is not None:
        from ..report.junit import replay_junit

        o.write_text(a.junit, replay_junit(report))
    if a.json:
        print_result("run", report.exit_code, to_json(report))
    else:
        show(report, out, show_all=a.show_all)
        if workdir is not None:
            out.print(workdir_diff(workdir, _commit(report)).diff, markup=False, highlight=False, end="")
    return report.exit_code


def _commit(report: ReplayReport) -> str | None:
    return next((n.split("the recorded commit ", 1)[1].split(":")[0] for n in report.notes
                 if n.startswith("--workdir") and "the recorded commit " in n), None)


def _interactive(a: Args, opts: ReplayOptions) -> int:
    """--debugger (one attempt, waiting for a client) and --watch (the fix loop): lines, not a report."""
    if a.json:
        raise UsageError("--debugger and --watch print as they go: they do not go with --json")
    if a.debugger and a.watch:
        raise UsageError("--debugger and --watch do not go together")
    if a.debugger_port is not None and not a.debugger:
        raise UsageError("--debugger-port goes with --debugger")
    progress = Progress(err, quiet=a.quiet)

    def say(line: str) -> None:
        out.print(line, markup=False, highlight=False)

    if a.debugger:
        from ..replay.debugrun import debug_capsule

        done = debug_capsule(a.capsule, opts, progress, a.debugger_port, say)
        say(f"the command ended: {'as recorded' if done.exit_code == 0 else done.attempt.classification} "
            f"(exit {done.attempt.exit_code})")
        return done.exit_code
    if opts.workdir is None or opts.attempts != 1:
        raise UsageError("--watch goes with --workdir DIR and --attempts 1")
    from ..replay.watch import watch

    return watch(a.capsule, opts, progress, say)
