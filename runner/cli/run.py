"""`replay CAPSULE` (= `replay run CAPSULE`): rebuild, rerun, judge."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from ..errors import UsageError

from ..replay import Progress, ReplayOptions, replay_capsule
from ..report import ReplayReport, show, to_json
from ..replay.defaults import DEFAULT_MEMORY, DEFAULT_TIMEOUT_S
from ..verdict.rate import DEFAULT_CONFIDENCE
from . import options as o
from .console import err, out, print_result


def write_comment(path: Path, report: ReplayReport, ref: str | None) -> None:
    from ..report.comment import render_comment

    try:
        path.write_text(render_comment(report, ref), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot write the comment ({exc.strerror})") from exc


def register(app: typer.Typer) -> None:
    @app.command("run")
    def run_cmd(
        capsule: o.CapsuleArg,
        attempts: o.AttemptsOpt = None,
        max_attempts: o.MaxAttemptsOpt = None,
        budget: o.BudgetOpt = None,
        confidence: o.ConfidenceOpt = DEFAULT_CONFIDENCE,
        timeout: Annotated[float, o.timeout_opt("per attempt", DEFAULT_TIMEOUT_S)] = DEFAULT_TIMEOUT_S,
        memory: Annotated[str, typer.Option("--memory", help="Memory limit per attempt.")] = DEFAULT_MEMORY,
        env: o.EnvOpt = [],
        salt: o.SaltOpt = None,
        all_runtimes: o.AllRuntimesOpt = False,
        no_pin: o.NoPinOpt = False,
        repo: o.RepoOpt = None,
        mirror: o.MirrorOpt = [],  # in force through its callback (build/mirrors.py)
        ref: o.RefOpt = None,
        patch: o.PatchOpt = None,
        source: o.SourceOpt = None,
        http: o.HttpOpt = None,
        trust_key: o.TrustKeyOpt = [],
        require_valid: o.RequireValidOpt = False,
        allow_unverified: o.AllowUnverifiedOpt = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
        show_all: Annotated[bool, typer.Option("--all", help="List every fidelity row and step, the exact ones too.")] = False,
        verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Stream the build and the command's output.")] = False,
        quiet: o.QuietOpt = False,
        comment: Annotated[Path | None, typer.Option("--comment", help="Also write a pull-request comment (Markdown) to FILE.")] = None,
        junit: o.JunitOpt = None,
    ) -> None:
        """Replay CAPSULE: exit 0 reproduced (or fixed), 1 another verdict, 2 bad input, 3 environment failure."""
        if not re.fullmatch(r"[1-9][0-9]*[bkmg]?", memory.strip().lower()):
            raise UsageError(f"--memory {memory!r}: a size like 512m or 4g")
        trust = o.trust(trust_key, require_valid, allow_unverified)  # checked before anything is read
        plan_opts = o.plan_options(env=env, salt=salt, all_runtimes=all_runtimes, no_pin=no_pin, repo=repo, ref=ref,
                                   patch=patch, source=source, http=http)
        opts = ReplayOptions(attempts=attempts, timeout=timeout, memory=memory, verbose=verbose, plan=plan_opts,
                             secret_env=plan_opts.env_overrides, trust=trust,
                             **o.stopping(attempts, max_attempts, budget, confidence))
        report = replay_capsule(capsule, opts, Progress(err, quiet=quiet or as_json))  # names the capsule as given
        if comment is not None:
            write_comment(comment, report, ref)
        if junit is not None:
            from ..report.junit import replay_junit

            o.write_text(junit, replay_junit(report))
        if as_json:
            print_result("run", report.exit_code, to_json(report))
        else:
            show(report, out, show_all=show_all)
        raise typer.Exit(report.exit_code)
