"""`replay farm run | report | history`: every collected capsule each night, the history,
what changed."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import Exit, UsageError
from ..replay.defaults import (DEFAULT_ATTEMPTS, DEFAULT_FARM_MAX_ATTEMPTS, DEFAULT_FIXED_AFTER, DEFAULT_MEMORY,
                               DEFAULT_TIMEOUT_S)
from .console import err, out, print_json
from ..verdict.rate import DEFAULT_CONFIDENCE
from .options import ConfidenceOpt, EnvOpt, MirrorOpt, QuietOpt, parse_env, timeout_opt, write_text

farm_app = typer.Typer(name="farm", no_args_is_help=True, add_completion=False,
                       help="Replay every collected capsule each night, keep the history, say what changed.")

DbOpt = Annotated[str | None, typer.Option(
    "--db", envvar="REPLAY_FARM_DB",
    help="The history: a SQLite file (default: farm.sqlite in the user's data dir) or postgresql://USER@HOST/DB.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object (the envelope every command uses).")]


def register(app: typer.Typer) -> None:
    app.add_typer(farm_app, name="farm")


def _store(db: str | None, create: bool) -> Any:
    from ..farm.store import SqlStore, default_db_path, is_server_url

    if not db:
        return SqlStore(default_db_path(), create=create)
    return SqlStore(db if is_server_url(db) else Path(db).expanduser(), create=create)


def _executor_maker(broker: str | None) -> Any:
    """Where a night's attempts run, as its options say (a resumed night's are the stored ones):
    here, or on `replay worker` processes through the broker. Made here, handed to the farm."""
    from ..farm.night import local_executor

    def make(options: Any, replayer: Any, progress: Any) -> Any:
        if options.executor != "celery":
            return local_executor(options, replayer, progress)
        from ..extras import require

        require("workers", "farm run --executor celery")
        from ..workers.dispatch import CeleryExecutor

        if not broker:
            raise UsageError("farm run --executor celery: give --broker redis://HOST:PORT/DB (or REPLAY_BROKER)")
        return CeleryExecutor(broker, progress.say)
    return make


def _enveloped(command: str, as_json: bool, body: Callable[[], tuple[int, Any]],
               show: Callable[[Any], None]) -> None:
    """Run the command; with --json its outcome as one object on stdout (an error reaches the one
    edge, runner/cli/main.py, whose envelope names the sub-command too)."""
    code, result = body()
    if not as_json:
        show(result)
        raise typer.Exit(code)
    from ..envelope import envelope

    print_json(envelope(command, code, result))
    raise typer.Exit(code)


@farm_app.command("run")
def run_cmd(
    sources: Annotated[list[Path] | None, typer.Argument(
        help="Folders (searched recursively), list files (one capsule or folder a line) or capsules.")] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=0, help="Attempts in parallel (0: the cores).")] = 0,
    ref: Annotated[str | None, typer.Option("--ref", help="Also replay at this commit: fixed there?")] = None,
    repo: Annotated[str | None, typer.Option("--repo", help="Clone, fork or mirror for the capsules that record a commit.")] = None,
    mirror: MirrorOpt = [],  # in force through its callback (build/mirrors.py)
    attempts: Annotated[int, typer.Option("--attempts", "-n", min=1, max=50, help="Attempts per capsule (K).")] = DEFAULT_ATTEMPTS,
    max_attempts: Annotated[int, typer.Option("--max-attempts", min=1, max=100, help="Up to this many while they disagree (until the rate is known), and at --ref until the fix is decided.")] = DEFAULT_FARM_MAX_ATTEMPTS,
    confidence: ConfidenceOpt = DEFAULT_CONFIDENCE,
    timeout: Annotated[float, timeout_opt("per attempt", DEFAULT_TIMEOUT_S)] = DEFAULT_TIMEOUT_S,
    memory: Annotated[str, typer.Option("--memory", help="Memory limit per attempt.")] = DEFAULT_MEMORY,
    env: EnvOpt = [],
    trust_key: Annotated[list[Path], typer.Option(
        "--trust-key", help="PEM public key of a trusted signer (repeatable), as replay takes it.")] = [],
    require_valid: Annotated[bool, typer.Option(
        "--require-valid", help="A capsule without a valid signature from a --trust-key is broken (not replayed).")] = False,
    resume: Annotated[bool, typer.Option("--resume", help="Continue the last unfinished night (after a kill).")] = False,
    executor: Annotated[str | None, typer.Option("--executor", help="local (default) or celery (replay worker processes).")] = None,
    broker: Annotated[str | None, typer.Option("--broker", envvar="REPLAY_BROKER",
                                               help="With --executor celery: the Redis broker, redis://HOST:PORT/DB.")] = None,
    db: DbOpt = None,
    gc_after: Annotated[bool, typer.Option("--gc", help="After the night: `replay gc --images --cache` with its "
                                                        "defaults (images unused 14d, caches down to 20G).")] = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Replay every capsule: exit 0 each got a verdict or is broken, 1 none got a verdict (all broken),
    3 any could not be judged (infrastructure), 2 bad usage or no capsule found."""
    def body() -> tuple[int, Any]:
        from ..farm.night import run_night
        from ..farm.options import FarmOptions
        from ..farm.progress import FarmProgress

        _check_run_args(sources or [], resume, ref, repo, memory)
        supplied = parse_env(env)
        options = FarmOptions(attempts=attempts, max_attempts=max_attempts, confidence=confidence, jobs=jobs, timeout=timeout,
                              memory=memory, ref=ref, repo=repo, executor=executor or "local",
                              supplied=tuple(name for name, _ in supplied),
                              trust_keys=tuple(str(k) for k in trust_key), require_valid=require_valid)
        store = _store(db, create=True)
        # a resumed night runs where it began (its stored executor); only the broker and --env are given again
        outcome, used = run_night(store, sources or [], options, FarmProgress(None if quiet or as_json else err),
                                  resume=resume, env=supplied, make_executor=_executor_maker(broker))
        night = store.night(outcome.night_id)
        if gc_after:  # its lines go to stderr; a removal that fails is said there, the night's exit stands
            from .gc import after_night

            after_night()
        return night_exit(night), night

    def show(night: Any) -> None:
        from ..report.farm import show_run

        show_run(night, out)

    if as_json:
        from ..report.farm import run_json

        _enveloped("farm run", True, lambda: _mapped(body, run_json), show)
    else:
        _enveloped("farm run", False, body, show)


def night_exit(night: Any) -> int:
    """3 when any capsule ended infra-error; otherwise 1 when no capsule got a verdict (all broken);
    otherwise 0 (every capsule got a verdict or is broken: the report says which)."""
    verdicts = [r.verdict for r in night.results]
    if "infra-error" in verdicts:
        return int(Exit.ENVIRONMENT)
    return int(Exit.NEGATIVE) if all(v == "broken" for v in verdicts) else 0


def _mapped(body: Callable[[], tuple[int, Any]], fn: Callable[[Any], Any]) -> tuple[int, Any]:
    code, value = body()
    return code, fn(value)


def _check_run_args(sources: list[Path], resume: bool, ref: str | None, repo: str | None, memory: str) -> None:
    import re

    if resume and sources:
        raise UsageError("farm run --resume continues the last night with its own capsules: give no SOURCE")
    if not resume and not sources:
        raise UsageError("farm run: name at least one SOURCE (a folder, a list file or a capsule)")
    from ..build.validate import is_valid

    if ref is not None and not is_valid("commit", ref):
        raise UsageError(f"--ref {ref!r}: not a commit id (7-64 hex digits)")
    if repo is not None and not re.match(r"^(https?|git|ssh|file)://|^[\w.-]+@[\w.-]+:", repo) \
            and not Path(repo).expanduser().exists():
        raise UsageError(f"--repo {repo}: no such clone, bundle or URL")
    if not re.fullmatch(r"[1-9][0-9]*[bkmg]?", memory.strip().lower()):
        raise UsageError(f"--memory {memory!r}: a size like 512m or 4g")


@farm_app.command("report")
def report_cmd(
    db: DbOpt = None,
    html: Annotated[Path | None, typer.Option("--html", help="Write the report as one self-contained HTML file.")] = None,
    junit: Annotated[Path | None, typer.Option("--junit", help="Write the last night as JUnit XML.")] = None,
    since: Annotated[int | None, typer.Option("--since", min=1, help="Only the last N nights.")] = None,
    window: Annotated[int, typer.Option("--window", min=1, help="Reproduction rates over the last N nights.")] = 14,
    show_all: Annotated[bool, typer.Option("--all", help="List the steady capsules too (folded past 20).")] = False,
    fixed_after: Annotated[int, typer.Option(
        "--fixed-after", min=1, max=365,
        help="A capsule that reproduced counts as no longer reproducing only after N nights in a row without "
             "the failure.")] = DEFAULT_FIXED_AFTER,
    as_json: JsonOpt = False,
) -> None:
    """Attention first: new failures and changed verdicts, newly flaky, still flaky, never reproduced here,
    then steady."""
    def body() -> tuple[int, Any]:
        from ..farm.attention import attention

        # the last night's attempts: on the capsule pages, in the JUnit and the JSON, not in the text
        view = attention(_store(db, create=False), since, window,
                         attempts=html is not None or junit is not None or as_json, fixed_after=fixed_after)
        if html is not None:
            from ..report.html import write_site

            write_site(html, view)
        if junit is not None:
            if view.last is None:
                raise UsageError("farm report --junit: no night recorded yet")
            from ..report.junit import farm_junit

            write_text(junit, farm_junit(view.last))
        return 0, view

    def show(view: Any) -> None:
        from ..report.farm import show_report

        show_report(view, out, show_all=show_all)

    from ..report.farm import report_json

    _enveloped("farm report", as_json,
               (lambda: _mapped(body, report_json)) if as_json else body, show)


@farm_app.command("history")
def history_cmd(
    capsule: Annotated[str, typer.Argument(
        help="A path as the history records it (as `farm report` prints it), a capsule id prefix, or a capsule file.")],
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """One capsule's nights: exit 0, or 1 when the history holds none for it."""
    def body() -> tuple[int, Any]:
        from ..farm.lookup import find_capsule

        found = find_capsule(_store(db, create=False), capsule)
        return (0 if found[1] else int(Exit.NEGATIVE)), found

    def show(found: Any) -> None:
        from ..report.farm import show_history

        matched, results = found
        out.print(matched, markup=False)
        if results:
            show_history(results, out)
        else:
            out.print(f"no nights recorded for {capsule}", markup=False)

    from ..report.farm import history_json

    _enveloped("farm history", as_json,
               (lambda: _mapped(body, history_json)) if as_json else body, show)


