"""Options shared by the commands that replay (run, render, shell, bisect)."""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..durations import HELP as DURATION_HELP
from ..durations import bare_number_note, format_duration, parse_duration
from ..errors import UsageError

# The stages (planning, opening a capsule, the mirror rules) are imported where an option is
# used, not here: every command imports this module, and `replay farm history` should not
# pay for loading the builder.
if TYPE_CHECKING:
    from ..build.plan import PlanOptions
    from ..capsules.trust import Trust

EnvOpt = Annotated[list[str], typer.Option("--env", "-e", help="NAME=VALUE: supply or override a variable (NAME= sets it empty).")]
SaltOpt = Annotated[str | None, typer.Option("--salt", envvar="REPLAY_SALT", help="The salt twin hashed values with, to check --env values.")]
RepoOpt = Annotated[str | None, typer.Option("--repo", help="Fetch the commit from this clone, fork or mirror (path or URL).")]


def _mirror_rules(items: list[str] | None) -> list[str]:
    """--mirror PREFIX=PATH_OR_URL, checked (exit 2, one line), then in force with REPLAY_MIRRORS's
    for this command (mirrors.py): the fetch of every capsule's source asks the rules."""
    from ..build import mirrors

    mirrors.use(mirrors.parse_rules(items or ()))  # UsageError: the CLI's edge makes it one line, exit 2
    mirrors.from_env()  # a bad REPLAY_MIRRORS file is a usage error before any work too
    return items or []


MirrorOpt = Annotated[list[str], typer.Option(
    "--mirror", metavar="PREFIX=PATH_OR_URL", callback=_mirror_rules,
    help="Fetch a recorded remote that starts with PREFIX from PATH_OR_URL instead (the rest of the remote "
         "kept; the longest PREFIX wins, as git's insteadOf); repeatable; beside the REPLAY_MIRRORS file's rules. "
         "--repo still serves every capsule.")]
RefOpt = Annotated[str | None, typer.Option("--ref", help="Replay the environment against another commit, without the diff.")]
PatchOpt = Annotated[Path | None, typer.Option("--patch", help="Apply this fix on top (verdict: fixed / not-fixed).")]
SourceOpt = Annotated[Path | None, typer.Option("--source", help="Use this directory as the source (capsules that record none).")]
HttpOpt = Annotated[Path | None, typer.Option("--http", help="Serve this CodeInstances instance's recorded HTTP calls.")]
AllRuntimesOpt = Annotated[bool, typer.Option("--all-runtimes", help="Install every recorded runtime a source offers.")]
NoPinOpt = Annotated[bool, typer.Option("--no-pin", help="Keep the lockfile's versions instead of the recorded installed ones.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress on stderr (errors still go there).")]
CapsuleArg = Annotated[str, typer.Argument(  # opened by the command (capsules/opening.py), never here
    metavar="CAPSULE", show_default=False,
    help="A twin capsule, a NovaFabric capsule directory, or a CodeInstances file; "
         "or an https:// or http:// URL of a capsule file (downloaded to the cache, then read like a file).")]

# The trust policy of every command that replays or builds (run, bisect, render, shell; farm run has its own).
TrustKeyOpt = Annotated[list[Path], typer.Option("--trust-key", help="PEM public key of a trusted signer.")]
RequireValidOpt = Annotated[bool, typer.Option(
    "--require-valid", help="Also refuse (exit 1) a capsule whose signer is not one of the --trust-keys.")]
AllowUnverifiedOpt = Annotated[bool, typer.Option(
    "--allow-unverified", help="Replay a capsule that does not verify (refused, exit 1, by default).")]


def trust(keys: list[Path], require_valid: bool, allow_unverified: bool) -> Trust:
    """--trust-key, --require-valid, --allow-unverified: checked before any capsule is read."""
    from ..capsules.trust import Trust

    return Trust(tuple(keys), require_valid, allow_unverified)


def duration(text: str | float) -> float:
    """A --timeout value: `15m`, `90s`, `1h`, or seconds."""
    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    if seconds < 1:
        raise typer.BadParameter(f"{text!r}: at least 1s")
    note = bare_number_note(text)
    if note is not None:  # twin's --timeout counts minutes: say how a bare number was read
        sys.stderr.write(f"replay: note: {note}\n")
    return seconds


def timeout_opt(per: str, default_s: float) -> Any:
    """--timeout with units, the same on every command that takes one (typer's OptionInfo)."""
    return typer.Option("--timeout", parser=duration, metavar="DURATION", show_default=False,
                        help=f"Time limit {per} ({DURATION_HELP}; default {format_duration(default_s)}).")


def budget(text: str | float) -> float:
    """A --budget value: a duration, as --timeout takes it."""
    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    if seconds < 1:
        raise typer.BadParameter(f"{text!r}: at least 1s")
    return seconds


# When a replay stops (runner/verdict/sampling.py): decided, or the budget ends; --attempts N: exactly N.
AttemptsOpt = Annotated[int | None, typer.Option(
    "--attempts", "-n", min=1, max=50, show_default=False,
    help="Exactly N runs (each side of a fix check). Default: stop when decided: 3 runs that agree, "
         "more while they disagree (up to --max-attempts and --budget).")]
MaxAttemptsOpt = Annotated[int | None, typer.Option(
    "--max-attempts", min=1, max=1000, show_default=False,
    help="The most runs while they disagree (default 20); per side of a fix check.")]
BudgetOpt = Annotated[float | None, typer.Option(
    "--budget", parser=budget, metavar="DURATION", show_default=False,
    help=f"Time for the attempts while they disagree ({DURATION_HELP}; default: no limit but --max-attempts); "
         "per side of a fix check; the first 3 always run.")]
ConfidenceOpt = Annotated[float, typer.Option(
    "--confidence", min=0.5, max=0.9999,
    help="The confidence rates and fix checks are stated at (FIXED only when the patched rate is below "
         "the unpatched one's at it).")]


def stopping(attempts: int | None, max_attempts: int | None, budget: float | None,
             confidence: float) -> dict[str, Any]:
    """ReplayOptions' stopping fields; --attempts N (exactly N) does not go with --max-attempts or --budget."""
    from ..replay.defaults import DEFAULT_MAX_ATTEMPTS

    if attempts is not None and (max_attempts is not None or budget is not None):
        raise UsageError("--attempts N runs exactly N attempts: it does not go with --max-attempts or --budget")
    return {"max_attempts": max_attempts or DEFAULT_MAX_ATTEMPTS, "budget": budget, "confidence": confidence}


JunitOpt = Annotated[Path | None, typer.Option("--junit", metavar="FILE",
                                                  help="Also write the answer as JUnit XML (one testcase) to FILE.")]


def write_text(path: Path, text: str) -> None:
    """A report file, written whole or not at all (a reader never sees half of one)."""
    part = path.with_name(f".{path.name}.part")
    try:
        part.write_text(text, encoding="utf-8")
        part.replace(path)
    except OSError as exc:
        raise UsageError(f"{path}: cannot be written ({exc.strerror})") from exc


def parse_env(items: list[str]) -> tuple[tuple[str, str], ...]:
    out = []
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not name.replace("_", "a").isalnum() or name[0].isdigit():
            raise UsageError(f"--env {item!r}: expected NAME=VALUE")
        out.append((name, value))
    return tuple(out)


def plan_options(*, env: list[str] = [], salt: str | None = None, all_runtimes: bool = False,  # noqa: B006
                 no_pin: bool = False, repo: str | None = None, ref: str | None = None, patch: Path | None = None,
                 source: Path | None = None, http: Path | None = None) -> PlanOptions:
    from ..build.plan import PlanOptions
    from ..build.validate import is_valid
    from ..capsules.opening import open_capsule
    from ..capsules.trust import Trust

    patch_text = ""
    if patch is not None:
        try:
            patch_text = patch.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--patch {patch}: {exc.strerror if isinstance(exc, OSError) else 'not a text file'}") from exc
    if source is not None and not source.is_dir():
        raise UsageError(f"--source {source}: not a directory")
    if source is not None and (repo or ref or patch):
        raise UsageError("--source replaces the recorded commit: it does not go with --repo, --ref or --patch")
    if ref is not None and not is_valid("commit", ref):
        raise UsageError(f"--ref {ref!r}: not a commit id (7-64 hex digits)")
    if repo is not None and not re.match(r"^(https?|git|ssh|file)://|^[\w.-]+@[\w.-]+:", repo) \
            and not Path(repo).expanduser().exists():
        raise UsageError(f"--repo {repo}: no such clone, bundle or URL")
    instance = None
    if http is not None:
        instance = open_capsule(http, Trust().showing()).capsule
        if instance.provenance.format.value != "codeinstances":
            raise UsageError(f"--http {http}: not a CodeInstances instance ({instance.provenance.format.value})")
    return PlanOptions(env_overrides=parse_env(env), salt=salt, all_runtimes=all_runtimes, pin=not no_pin,
                       repo=repo, ref=ref, patch=patch_text, source_dir=str(source) if source else None, http=instance)

