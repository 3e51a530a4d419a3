"""`replay render`, the use case: the Dockerfile and build context of a capsule, without building;
with an output directory, also the `docker build` and `docker run` lines that replay it by hand."""
from __future__ import annotations

import re
import shlex
import shutil
import tempfile
from pathlib import Path

from ..build.sources.baseimage import base_ref
from ..build.plan import PlanOptions
from ..capsules.opening import open_capsule
from ..capsules.trust import Trust
from ..config import Settings, registry_secrets, settings
from ..resources import source_checkout
from ..errors import ReplayError, SourceUnavailable, UsageError
from ..build.sources.repo import NoRemote, RemoteFailed
from ..build.plan import Plan
from ..build.planner import make_plan
from ..build.render import Builder, Context, render, workdir, write_context
from ..textsafe import shell_word
from .runenv import command_env
from ..outcome.runreport import Rendered

_TAG = "replay-by-hand"
def by_hand_tag(plan: Plan) -> str:
    """One tag per capsule, so two capsules rendered by hand do not overwrite each other's image."""
    return f"{_TAG}:{re.sub(r'[^a-z0-9_.-]', '', plan.capsule_id.lower())[:40] or 'latest'}"


def render_capsule(capsule: str, options: PlanOptions, trust: Trust, output: Path | None = None,
                   builder: Builder = "classic") -> Rendered:
    """The Dockerfile (a dry run), or with `output` the whole context there and the two by-hand lines."""
    s = settings()
    opened = open_capsule(capsule, trust)  # refused (exit 1) when it does not verify, unless allowed
    with opened.naming():
        plan = make_plan(opened.capsule, s, options)
    name = opened.name  # how the lines below name it
    repo_given = options.repo is not None
    if output is None and builder == "classic":
        return Rendered(render(plan, s), builder)
    if output is None:  # the BuildKit Dockerfile depends on the lockfile: a context of its own, then gone
        with tempfile.TemporaryDirectory(prefix="replay-render-") as tmp:
            ctx = _write(plan, s, Path(tmp) / "ctx", repo_given=repo_given, capsule=name, builder=builder)
        return Rendered(ctx.dockerfile, builder, _deps_node_notes(ctx))
    _check_output(output)
    ctx = _write(plan, s, output, repo_given=repo_given, capsule=name, builder=builder)
    return _by_hand(plan, s, ctx, output, [n for n, _ in options.env_overrides], builder)


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
        if isinstance(exc, (RemoteFailed, NoRemote)) and capsule:  # names the capsule whose remote it is
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


def _deps_node_notes(ctx: Context) -> tuple[str, ...]:
    """Which node installs the npm dependencies (BuildKit), as the report says it."""
    if ctx.deps_node is not None:
        return (ctx.deps_node.note(),)
    if ctx.deps_node_why_not:
        return (f"dependencies installed on the plan's node: {ctx.deps_node_why_not}",)
    return ()


def _by_hand(plan: Plan, s: Settings, ctx: Context, output: Path, supplied: list[str],
             builder: Builder = "classic") -> Rendered:
    """What `replay` would run, as two shell lines (every capsule value shlex-quoted)."""
    base = base_ref(s, plan.base)
    setup = "scripts/setup makes it" if source_checkout() else "`replay doctor` says how to get it"
    notes = [*_deps_node_notes(ctx), f"build context written to {output}; the base image {base} must exist ({setup})"]
    secrets = sorted(registry_secrets(s)) if builder == "buildkit" else []
    if secrets:  # never their content: the user has the credentials already
        notes.append(f"the build mounts registry credentials as BuildKit secrets ({', '.join(secrets)}): "
                     "add --secret id=ID,src=FILE for each")
    build = "DOCKER_BUILDKIT=1 docker build" if builder == "buildkit" else "docker build"
    caveat = ("(by hand, the recorded HTTP calls, clock and random values are not served: `replay CAPSULE` does that)"
              if plan.http_calls or plan.clock_start or plan.values else None)
    return Rendered(ctx.dockerfile, builder, tuple(notes), output,
                    f"{build} -t {by_hand_tag(plan)} {shlex.quote(str(output))}", run_line(plan, supplied), caveat)


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
    return " ".join(shell_word(w) for w in [*words, by_hand_tag(plan), *argv])  # a control: as $'\x1b'
