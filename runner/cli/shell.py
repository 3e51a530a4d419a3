"""`replay shell CAPSULE`: an interactive shell in the replayed environment."""
from __future__ import annotations

import dataclasses
import typer

from ..replay import Progress, Replayer, ReplayOptions
from . import options as o
from .console import err


def register(app: typer.Typer) -> None:
    @app.command("shell")
    def shell_cmd(
        capsule: o.CapsuleArg,
        env: o.EnvOpt = [],
        repo: o.RepoOpt = None,
        ref: o.RefOpt = None,
        source: o.SourceOpt = None,
        quiet: o.QuietOpt = False,
        trust_key: o.TrustKeyOpt = [],
        require_valid: o.RequireValidOpt = False,
        allow_unverified: o.AllowUnverifiedOpt = False,
    ) -> None:
        """Build the replay image and open bash in it, with the recorded environment set (no network)."""
        trust = o.trust(trust_key, require_valid, allow_unverified)
        plan_opts = o.plan_options(env=env, repo=repo, ref=ref, source=source)
        replayer = Replayer(ReplayOptions(plan=plan_opts, secret_env=plan_opts.env_overrides, trust=trust),
                            Progress(err, quiet=quiet))
        try:
            _, plan = replayer.load(capsule)  # refused (exit 1) when it does not verify, unless --allow-unverified
            image = replayer.image(plan)
            spec = replayer.run_spec(plan, image)
            spec = dataclasses.replace(spec, argv=("bash",), tty=True, stdin_open=True)
            err.print(f"replay: recorded command: {' '.join(plan.argv)}", markup=False)
            code = replayer.engine.interactive(spec)
        finally:
            replayer.close()
        raise typer.Exit(code)
