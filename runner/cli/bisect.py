"""`replay bisect BAD --good GOOD`: which environment facts make BAD fail (the text view: report/bisect.py)."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..bisect import (BisectResult, BisectSettings, CommitsResult, Registry, SweepResult, bisect_capsules,
                      bisect_commits, bisect_sweep, commits_data, cores, git_history, result_data, sweep_data, totals)
from ..bisect.env import fill_only_of
from ..bisect.fixes import FixResult, check_modes, find_fix, fix_data
from ..bisect.resume import next_step
from ..config import settings as load_settings
from ..errors import Exit
from ..build.plan import PlanOptions
from ..build.sources.providers import fetch, pypi
from ..report.bisect import show
from ..codec import encode
from ..replay import Progress, Replayer, ReplayOptions
from ..replay.keep import Kept
from . import console
from ..commands.spec import Args
from ..replay.inputs import check_repo, parse_env, use_mirrors, write_text, trust as make_trust


def _versions(registry: Registry, package: str) -> list[str]:
    settings = load_settings()
    return fetch.npm_versions(settings, package) if registry == "npm" else pypi.versions(settings, package)


Result = BisectResult | CommitsResult | SweepResult | FixResult


def _bisect(replayer: Replayer, bad: Path, good: Path | None, settings: BisectSettings, progress: Progress,
            commits: bool, sweep: str | None, fixed_at: str | None = None) -> Result:
    if good is None:  # check_modes: --fixed-at was given
        return find_fix(replayer, bad, fixed_at or "", settings, progress, git_history)
    if commits:
        return bisect_commits(replayer, bad, good, settings, progress, git_history)
    if sweep is not None:
        return bisect_sweep(replayer, bad, good, sweep, settings, progress, _versions)
    return bisect_capsules(replayer, bad, good, settings, progress)


def _data(result: Result, wall_s: float) -> dict[str, object]:
    if isinstance(result, FixResult):
        return {"mode": "fix", **fix_data(result), "totals": totals(result.walk.trials, wall_s)}
    if isinstance(result, CommitsResult):
        return {"mode": "commits", **commits_data(result), "totals": totals(result.walk.trials, wall_s)}
    if isinstance(result, SweepResult):
        return {"mode": "sweep", **sweep_data(result), "totals": totals(result.walk.trials, wall_s)}
    return {"mode": "facts", **result_data(result), "totals": totals(result.trials, wall_s)}


def _report(bad: Path, good: Path | None, result: Result, as_json: bool, wall_s: float, kept: Kept | None,
            then: dict[str, Any] | None) -> None:
    if as_json:
        console.print_result("bisect", int(Exit.OK if result.found else Exit.NEGATIVE), {
            "bad": str(bad), "good": good and str(good), **_data(result, wall_s), "kept": encode(kept), "next": then})
    else:
        show(console.out, bad, good, result, wall_s, then)
        if kept is not None:
            console.out.print(f"Kept the bad end's attempt's container {kept.id}; enter it: {kept.command}",
                              markup=False)


def bisect(a: Args) -> int:
    check_modes(a.commits, a.sweep, a.fixed_at, a.good is not None, a.junit is not None)
    trust = make_trust(a.values)  # both ends: refused unless they verify
    progress = Progress(console.err, quiet=a.quiet or a.json)
    use_mirrors(a.mirror)
    check_repo(a.repo)
    supplied = parse_env(a.env)  # a variable recorded by name only is filled in where it was set
    plan_opts = PlanOptions(repo=a.repo, env_overrides=supplied, salt=a.salt, http_ignore=tuple(a.http_ignore),
                            fill_only=fill_only_of((Path(a.bad), *([Path(a.good)] if a.good else [])), trust, supplied))
    replayer = Replayer(ReplayOptions(timeout=a.timeout, verbose=a.verbose, plan=plan_opts,
                                      secret_env=plan_opts.env_overrides, trust=trust), progress)
    start = time.monotonic()
    try:
        settings = BisectSettings(a.attempts, a.jobs or cores(), not a.no_cache_reuse, a.confidence, a.max_runs,
                                  a.budget, a.keep, load_settings().cache_dir / "bisect-trials", a.resume)
        good = Path(a.good) if a.good else None
        result = _bisect(replayer, a.bad, good, settings, progress, a.commits, a.sweep, a.fixed_at)
    finally:
        replayer.close()
    wall_s = time.monotonic() - start
    then = None if isinstance(result, BisectResult) else next_step(a.values, a.declared, result.walk)
    _report(Path(a.bad), good, result, a.json, wall_s, replayer.keeper.kept if a.keep else None, then)
    if a.junit is not None and not isinstance(result, FixResult):
        from ..report.junit import bisect_junit

        write_text(a.junit, bisect_junit(result, str(a.bad)))
    return int(Exit.OK if result.found else Exit.NEGATIVE)
