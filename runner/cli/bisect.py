"""`replay bisect BAD --good GOOD`: which environment facts make BAD fail (the text view: report/bisect_view.py)."""
from __future__ import annotations

import time
from pathlib import Path

from ..bisect import (BisectResult, BisectSettings, CommitsResult, Registry, SweepResult, bisect_capsules,
                      bisect_commits, bisect_sweep, cores, git_history)
from ..bisect.env import fill_only_of
from ..bisect.fixes import FixResult, check_modes, find_fix
from ..bisect.resume import run_context
from ..commands.spelled import next_step
from ..config import settings as load_settings
from ..build.sources.providers import registry_http, pypi
from ..build.plan import PlanOptions
from ..replay import Progress, Replayer, ReplayOptions
from ..pinning.pinrun import bisect_pin
from . import console
from ..commands.catalog import BISECT
from ..commands.replayed import Bisected
from ..commands.arguments import BisectArgs
from ..replay.inputs import check_repo, parse_env, use_mirrors, write_text
from ..replay.inputs import trust as make_trust
from ..replay.loading import Loader


def _versions(registry: Registry, package: str) -> list[str]:
    settings = load_settings()
    return registry_http.npm_versions(settings, package) if registry == "npm" else pypi.versions(settings, package)


Result = BisectResult | CommitsResult | SweepResult | FixResult


def _bisect(loader: Loader, replayer: Replayer, bad: Path, good: Path | None, settings: BisectSettings, progress: Progress,
            commits: bool, sweep: str | None, fixed_at: str | None = None) -> Result:
    if good is None:  # check_modes: --fixed-at was given
        return find_fix(loader, replayer, bad, fixed_at or "", settings, progress, git_history)
    if commits:
        return bisect_commits(loader, replayer, bad, good, settings, progress, git_history)
    if sweep is not None:
        return bisect_sweep(loader, replayer, bad, good, sweep, settings, progress, _versions)
    return bisect_capsules(loader, replayer, bad, good, settings, progress)


def bisect(a: BisectArgs) -> Bisected:
    check_modes(a.commits, a.sweep, a.fixed_at, a.good is not None, a.junit is not None)
    trust = make_trust(a.values)  # both ends: refused unless they verify
    progress = Progress(console.err, quiet=a.quiet or a.json)
    use_mirrors(a.mirror)
    check_repo(a.repo)
    supplied = parse_env(a.env)  # a variable recorded by name only is filled in where it was set
    good = Path(a.good) if a.good else None
    plan_opts = PlanOptions(repo=a.repo, env_overrides=supplied, salt=a.salt, http_ignore=tuple(a.http_ignore),
                            fill_only=fill_only_of((Path(a.bad), *([good] if good else [])), trust, supplied),
                            pin_settings=bisect_pin(a.values, trust, progress))
    options = ReplayOptions(timeout=a.timeout, verbose=a.verbose, plan=plan_opts, secret_env=plan_opts.env_overrides,
                            trust=trust, share_tool_cache=not a.no_cache_reuse)
    replayer = Replayer(options, progress)
    start = time.monotonic()
    try:
        outcomes = load_settings().cache_dir / "bisect-trials"
        settings = BisectSettings(a.attempts, a.jobs or cores(), not a.no_cache_reuse, a.confidence, a.max_runs,
                                  a.budget, a.keep, outcomes, a.resume, run_context(outcomes, supplied, a.timeout))
        result = _bisect(Loader(options), replayer, Path(a.bad), good, settings, progress, a.commits, a.sweep, a.fixed_at)
    finally:
        replayer.close()
    then = None if isinstance(result, BisectResult) else next_step(a.values, BISECT, result.walk)
    answer = Bisected(Path(a.bad), good, result, time.monotonic() - start,
                      replayer.keeper.kept if a.keep else None, then)
    if a.junit is not None and not isinstance(result, FixResult):
        from ..report.junit import bisect_junit

        write_text(a.junit, bisect_junit(result, str(a.bad)))
    return answer
