"""`replay farm run | report | history`: every collected capsule each night, the history,
what changed."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..commands.replayed import FarmView, History, NightRun
from ..commands.arguments import FarmHistoryArgs, FarmReportArgs, FarmRunArgs
from ..errors import UsageError
from ..farm.night_options import FarmOptions
from .console import err
from ..replay.inputs import check_repo, parse_env, use_mirrors, write_text


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


def _options(a: FarmRunArgs, supplied: tuple[tuple[str, str], ...]) -> FarmOptions:
    if a.resume and a.sources:
        raise UsageError("farm run --resume continues the last night with its own capsules: give no SOURCE")
    if not a.resume and not a.sources:
        raise UsageError("farm run: name at least one SOURCE (a folder, a list file or a capsule)")
    check_repo(a.repo)
    use_mirrors(a.mirror)
    return FarmOptions(attempts=a.attempts, max_attempts=a.max_attempts, confidence=a.confidence, jobs=a.jobs,
                       timeout=a.timeout,
                       memory=a.memory, ref=a.ref, repo=a.repo, executor=a.executor or "local",
                       supplied=tuple(name for name, _ in supplied), trust_keys=tuple(str(k) for k in a.trust_key),
                       require_valid=a.require_valid, mirrors=tuple(a.mirror), repo_url=a.repo_url)


def run(a: FarmRunArgs) -> NightRun:
    from ..bisect.farmfix import fixes_at_ref
    from ..farm.night import run_night
    from ..farm.night_progress import FarmProgress

    if a.find_fix and not (a.ref or a.resume):
        raise UsageError("farm run --find-fix finds the commit that fixed a capsule at --ref: give --ref COMMIT")
    supplied = parse_env(a.env)
    options = _options(a, supplied)
    store = _store(a.db, create=True)
    # a resumed night runs where it began (its stored executor); only the broker and --env are given again
    outcome, _ = run_night(store, a.sources or [], options, FarmProgress(None if a.quiet or a.json else err),
                           resume=a.resume, env=supplied, make_executor=_executor_maker(a.broker))
    night = store.night(outcome.night_id)
    say = lambda line: err.print(f"replay: {line}", markup=False)  # noqa: E731 (one use)
    fixes = fixes_at_ref(night.results, night.ref, a.values, say) if a.find_fix and night.ref else None
    if a.gc:  # its lines go to stderr; a removal that fails is said there, the night's exit stands
        from ..machine.cleanup import after_night
        from .console import error_line

        for problem in after_night(lambda line: err.print(line, markup=False)):
            error_line(problem)
    return NightRun(night, fixes)


def report(a: FarmReportArgs) -> FarmView:
    from ..farm.attention import attention

    # the last night's attempts: on the capsule pages, in the JUnit and the JSON, not in the text
    view = attention(_store(a.db, create=False), a.since, a.window,
                     attempts=a.html is not None or a.junit is not None or a.json, fixed_after=a.fixed_after)
    if a.html is not None:
        from ..report.html import write_site

        write_site(a.html, view)
    if a.junit is not None:
        if view.last is None:
            raise UsageError("farm report --junit: no night recorded yet")
        from ..report.junit import farm_junit

        write_text(a.junit, farm_junit(view.last))
    return FarmView(view)


def history(a: FarmHistoryArgs) -> History:
    from ..farm.lookup import find_capsule

    matched, results = find_capsule(_store(a.db, create=False), a.capsule)
    return History(a.capsule, matched, results)
