"""`replay render CAPSULE [-o DIR]`: the Dockerfile and build context, without building;
with -o, also the `docker build` and `docker run` lines that reproduce by hand."""
from __future__ import annotations

import re
import shlex
import shutil
import tempfile
from pathlib import Path
from typing import Annotated, cast

import typer

from ..build.baseimage import base_ref
from ..capsules.opening import open_capsule
from ..config import Settings, registry_secrets, settings
from ..resources import source_checkout
from ..errors import ReplayError, SourceUnavailable, UsageError
from ..build.source import RemoteFailed
from ..build.plan import Plan
from ..build.planner import make_plan
from ..build.render import Builder, Context, render, workdir, write_context
from ..replay.runenv import command_env
from . import options as o
from .console import err, out

_TAG = "replay-by-hand"
BUILDERS = ("classic", "buildkit")
BuilderOpt = Annotated[str, typer.Option(
    "--builder", metavar="classic|buildkit",
    help="The Dockerfile for this builder: classic (the default; builds with either) or buildkit "
         "(cache mounts, and for an npm lockfile that runs no install scripts an installer node: "
         "it reads the lockfile, so it restores the source)."),
]


def by_hand_tag(plan: Plan) -> str:
    """One tag per capsule, so two capsules rendered by hand do not overwrite each other's image."""
    return f"{_TAG}:{re.sub(r'[^a-z0-9_.-]', '', plan.capsule_id.lower())[:40] or 'latest'}"


def register(app: typer.Typer) -> None:
    @app.command("render")
    def render_cmd(
        capsule: o.CapsuleArg,
        output: Annotated[Path | None, typer.Option("--output", "-o", metavar="DIR", help="Write the whole build context here (removed again if writing it fails).")] = None,
        env: o.EnvOpt = [],
        all_runtimes: o.AllRuntimesOpt = False,
        no_pin: o.NoPinOpt = False,
        repo: o.RepoOpt = None,
        ref: o.RefOpt = None,
        patch: o.PatchOpt = None,
        source: o.SourceOpt = None,
        builder: BuilderOpt = "classic",
        trust_key: o.TrustKeyOpt = [],
        require_valid: o.RequireValidOpt = False,
        allow_unverified: o.AllowUnverifiedOpt = False,
    ) -> None:
        """Print the Dockerfile (dry run), or write the build context with -o DIR and the
        `docker build` / `docker run` lines that replay it by hand."""
        if builder not in BUILDERS:
            raise UsageError(f"--builder {builder!r}: one of {', '.join(BUILDERS)}")
        trust = o.trust(trust_key, require_valid, allow_unverified)
        s = settings()
        options = o.plan_options(env=env, all_runtimes=all_runtimes, no_pin=no_pin, repo=repo, ref=ref, patch=patch,
                                 source=source)
        opened = open_capsule(capsule, trust)  # refused (exit 1) when it does not verify, unless --allow-unverified
        with opened.naming():
            plan = make_plan(opened.capsule, s, options)
        capsule = opened.name  # how the lines below name it
        kind = cast(Builder, builder)
        if output is None and kind == "classic":
            out.print(render(plan, s), markup=False, highlight=False)
            return
        if output is None:  # the BuildKit Dockerfile depends on the lockfile: a context of its own, then gone
            with tempfile.TemporaryDirectory(prefix="replay-render-") as tmp:
                ctx = _write(plan, s, Path(tmp) / "ctx", repo_given=repo is not None, capsule=capsule, builder=kind)
                out.print(ctx.dockerfile, markup=False, highlight=False)
            _deps_node_line(ctx)
            return
        _check_output(output)
        ctx = _write(plan, s, output, repo_given=repo is not None, capsule=capsule, builder=kind)
        _deps_node_line(ctx)
        _by_hand(plan, s, output, supplied=[name for name, _ in options.env_overrides], builder=kind)


# Left in every context `render -o` writes: the one proof that replacing DIR loses nothing of the user's.
MARKER = ".replay-render"


def _check_output(output: Path) -> None:
    """-o DIR is new, empty, or a context this command wrote before (its marker file is there)."""
    if output.is_symlink():
        raise UsageError(f"-o {output}: a symbolic link{'' if output.exists() else ' (dangling)'}; "
                         "give a directory path that is not a link")
    if output.exists() and not output.is_dir():
        raise UsageError(f"-o {output}: not a directory")
    if not output.parent.is_dir():
        raise UsageError(f"-o {output}: {output.parent} does not exist")
    if output.exists() and any(output.iterdir()) and not (output / MARKER).is_file():
        raise UsageError(f"-o {output}: exists, is not empty and was not written by `replay render`; "
                         "refusing to replace it")


def _write(plan: Plan, s: Settings, output: Path, repo_given: bool, capsule: Path | str = "",
           builder: Builder = "classic") -> Context:
    """The context, or nothing: a half-written DIR would build into a wrong image."""
    try:
        ctx = write_context(plan, s, output, builder)
        (output / MARKER).write_text("written by `replay render -o`: a later `replay render -o` replaces this directory\n")
        return ctx
    except BaseException as exc:  # Ctrl-C too: never leave half a context behind
        shutil.rmtree(output, ignore_errors=True)
        if isinstance(exc, RemoteFailed) and capsule:  # names the capsule whose remote it is
            raise exc.naming(capsule) from None
        if isinstance(exc, SourceUnavailable) and plan.source is not None and plan.source.remote and not repo_given:
            raise _with_repo_hint(exc) from None
        if isinstance(exc, ReplayError):
            exc.message = f"{exc.message} (nothing was left in {output})"
        raise


def _with_repo_hint(exc: SourceUnavailable) -> SourceUnavailable:
    if "--repo" in exc.message:
        return exc
    return SourceUnavailable(f"{exc.message}: the capsule's remote cannot be reached; "
                             "pass --repo PATH_OR_URL (a clone, fork, mirror or bundle that has the commit)")


def _deps_node_line(ctx: Context) -> None:
    """Which node installs the npm dependencies (BuildKit), as the report says it."""
    if ctx.deps_node is not None:
        err.print(f"replay: {ctx.deps_node.note()}", markup=False)
    elif ctx.deps_node_why_not:
        err.print(f"replay: dependencies installed on the plan's node: {ctx.deps_node_why_not}", markup=False)


def _by_hand(plan: Plan, s: Settings, ctx: Path, supplied: list[str], builder: Builder = "classic") -> None:
    """What `replay` would run, as two shell lines (every capsule value shlex-quoted)."""
    base = base_ref(s, plan.base)
    setup = "scripts/setup makes it" if source_checkout() else "`replay doctor` says how to get it"
    err.print(f"replay: build context written to {ctx}; the base image {base} must exist ({setup})", markup=False)
    secrets = sorted(registry_secrets(s)) if builder == "buildkit" else []
    if secrets:  # never their content: the user has the credentials already
        err.print(f"replay: the build mounts registry credentials as BuildKit secrets ({', '.join(secrets)}): "
                  "add --secret id=ID,src=FILE for each", markup=False)
    err.print("replay: to replay by hand:", markup=False)
    build = "DOCKER_BUILDKIT=1 docker build" if builder == "buildkit" else "docker build"
    out.print(f"{build} -t {by_hand_tag(plan)} {shlex.quote(str(ctx))}", markup=False, highlight=False)
    out.print(run_line(plan, supplied), markup=False, highlight=False, soft_wrap=True)
    if plan.http_calls or plan.clock_start or plan.values:
        err.print("replay: (by hand, the recorded HTTP calls, clock and random values are not served: "
                  "`replay CAPSULE` does that)", markup=False)


def run_line(plan: Plan, supplied: list[str]) -> str:
    """`docker run` with the recorded env, TZ and argv; supplied --env values by name only
    (docker reads them from your environment: never printed)."""
    absent = {name: "" for name, setting in plan.env.items() if setting.state == "absent"}
    env, argv = command_env(plan, absent)  # unset-when-absent, whatever the image sets
    network = "bridge" if plan.network == "allow" else "none"
    words = ["docker", "run", "--rm", "-it", f"--network={network}", "-w", workdir(plan)]
    for name, value in env:
        words += ["-e", f"{name}={value}"]
    for name in supplied:
        words += ["-e", name]
    return " ".join(shlex.quote(w) for w in [*words, by_hand_tag(plan), *argv])
