"""`replay render CAPSULE [-o DIR]`: the Dockerfile and build context, without building."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ..capsules import read_capsule
from ..baseimage import base_ref
from ..config import settings
from ..errors import UsageError
from ..planner import make_plan
from ..render import render, write_context
from . import options as o
from .console import err, out


def register(app: typer.Typer) -> None:
    @app.command("render")
    def render_cmd(
        capsule: Annotated[Path, typer.Argument(help="The capsule to render.")],
        output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the whole build context here.")] = None,
        env: o.EnvOpt = [],
        all_runtimes: o.AllRuntimesOpt = False,
        no_pin: o.NoPinOpt = False,
        repo: o.RepoOpt = None,
        ref: o.RefOpt = None,
        patch: o.PatchOpt = None,
        source: o.SourceOpt = None,
    ) -> None:
        """Print the Dockerfile (dry run), or write the build context with -o DIR."""
        s = settings()
        plan = make_plan(read_capsule(capsule), s, o.plan_options(env=env, all_runtimes=all_runtimes, no_pin=no_pin, repo=repo, ref=ref, patch=patch, source=source))
        if output is None:
            out.print(render(plan, s), markup=False, highlight=False)
            return
        if output.exists() and not output.is_dir():
            raise UsageError(f"-o {output}: not a directory")
        if not output.parent.is_dir():
            raise UsageError(f"-o {output}: {output.parent} does not exist")
        if output.exists() and any(output.iterdir()) and not (output / "replay-tools").is_dir():
            raise UsageError(f"-o {output}: exists and is not a replay build context; refusing to overwrite it")
        ctx = write_context(plan, s, output)
        err.print(f"replay: build context written to {ctx.path}; build it with `DOCKER_BUILDKIT=1 docker build "
                  f"{ctx.path}` (the base image {base_ref(s, plan.base)} must exist: scripts/setup makes it)",
                  markup=False)
