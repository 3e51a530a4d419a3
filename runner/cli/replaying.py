"""The commands that rebuild a capsule's world: `replay CAPSULE` (= `replay run CAPSULE`: rebuild,
rerun, judge), `replay shell CAPSULE` (or --kept ID, --last: an interactive shell in the replay's
world) and `replay pin CAPSULE` (the use case: pinning/pinrun.py; the text: report/pinned.py)."""
from __future__ import annotations

from pathlib import Path

from ..commands.arguments import PinArgs, RunArgs, ShellArgs
from ..commands.replayed import Pinned, Replayed
from ..errors import UsageError
from ..pinning.pinrun import pin_command
from ..replay import Progress, ReplayOptions, replay_capsule
from ..replay import inputs as o
from ..replay.interactive import interactive
from ..replay.shell import open_shell
from ..replay.workdir import checked
from ..report import ReplayReport
from ..textsafe import escaped
from .console import err, out


def write_comment(path: Path, report: ReplayReport, ref: str | None) -> None:
    from ..report.comment import render_comment

    try:
        path.write_text(render_comment(report, ref), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot write the comment ({exc.strerror})") from exc


def run(a: RunArgs) -> Replayed | int:
    trust = o.trust(a.values)  # checked before anything is read
    plan_opts = o.plan_options(a.values)
    workdir = str(checked(a.workdir)) if a.workdir is not None else None
    opts = ReplayOptions(timeout=a.timeout, memory=a.memory, verbose=a.verbose, plan=plan_opts,
                         secret_env=plan_opts.env_overrides, trust=trust, alternatives=not a.no_alternatives,
                         workdir=workdir, keep=a.keep, **o.stopping(a.values))
    if a.debugger or a.watch or a.debugger_port is not None:
        return interactive(a.capsule, opts, Progress(err, quiet=a.quiet),
                           lambda line: out.print(line, markup=False, highlight=False), debugger=a.debugger,
                           port=a.debugger_port, watching=a.watch, as_json=a.json)
    report = replay_capsule(a.capsule, opts, Progress(err, quiet=a.quiet or a.json))  # names the capsule as given
    if a.comment is not None:
        write_comment(a.comment, report, a.ref)
    if a.junit is not None:
        from ..report.junit import replay_junit

        o.write_text(a.junit, replay_junit(report))
    return Replayed(report, workdir)


def shell(a: ShellArgs) -> int:
    if sum((a.capsule is not None, a.kept is not None, a.last)) != 1:
        raise UsageError("replay shell takes one of CAPSULE, --kept ID or --last")
    trust = o.trust(a.values)
    plan_opts = o.plan_options(a.values)
    options = ReplayOptions(plan=plan_opts, secret_env=plan_opts.env_overrides, trust=trust)
    return open_shell(a.capsule, options, Progress(err, quiet=a.quiet),
                      lambda line: err.print(f"replay: {escaped(line)}", markup=False), kept=a.kept, last=a.last)


def pin(a: PinArgs) -> Pinned:
    return Pinned(pin_command(a.values, err, quiet=a.quiet or a.json))
