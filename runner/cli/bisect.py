"""`replay bisect BAD --good GOOD`: which environment facts make BAD fail."""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from rich.text import Text

from ..build import source as git_source
from ..bisect import (BisectResult, BisectSettings, CommitsResult, Registry, SweepResult, Trial, Walk, bisect_capsules,
                      bisect_commits, bisect_sweep, commits_data, result_data, summary, sweep_data, totals)
from ..config import settings as load_settings
from ..errors import Exit, UsageError
from ..build.plan import Source
from ..build.providers import fetch, pypi
from ..facts.inspect import printable
from ..report.layout import Cell, Styled, View
from ..build.plan import PlanOptions
from ..replay import Progress, Replayer, ReplayOptions
from ..verdict.facts import FACTS
from . import console
from ..commands.spec import Args
from ..replay.inputs import check_repo, parse_env, use_mirrors, write_text
from ..replay.inputs import trust as make_trust

_STATUS_LINE = {
    "found": "minimal set found",
    "baseline fails": "baseline fails: the good environment does not pass here",
    "not-reproduced": "not-reproduced: the bad environment does not fail the recorded way here",
    "no culprit": "no culprit among the facts that can be varied",
}


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _cell(value: str | None) -> Cell:
    return Styled("(absent)", "dim") if value is None else printable(value)


def _applied(t: Trial, everything: int) -> str:
    if t.role in ("good end", "both ends"):
        return "none (good end)"
    if t.role == "bad end":
        return f"all {everything} (bad end)"
    return ", ".join(t.keys)


def _build_cell(t: Trial) -> Cell:
    if t.built:
        return f"{t.build_s:.1f}s"
    return Styled("cached" if t.build_s == 0 else f"cached, {t.build_s:.1f}s", "dim")


TRIALS = ("#", "facts applied", "verdict", "signature", "build", "run")


def _trials_table(view: View, r: BisectResult) -> None:
    view.table("trials", TRIALS, [(str(t.number), printable(_applied(t, len(r.candidates))), _verdict_cell(t),
                                   _cell(t.signature or ""), _build_cell(t), f"{t.run_s:.1f}s") for t in r.trials],
               free=1)


def _verdict_cell(t: Trial) -> Cell:
    said: str = t.verdict
    if len(set(t.attempts)) > 1:  # mixed attempts say how flaky the trial was
        said += f" ({', '.join(t.attempts)})"
    elif len(t.attempts) > 1:
        said += f" ×{len(t.attempts)}"
    return Styled(said, FACTS[t.verdict].style)


def _spent(trials: tuple[Trial, ...], wall_s: float) -> Text:
    t = totals(trials, wall_s)
    return Text(f"{t['trials']} trial(s), {t['attempts']} attempt(s), {t['builds']} image(s) built, "
                f"{t['wall_s']:.1f} s", "dim")


def _show(bad: Path, good: Path, r: BisectResult, wall_s: float) -> None:
    out = console.out
    out.print(Text(f"bad:  {printable(str(bad))}\ngood: {printable(str(good))}"))
    view = View(out)
    if r.candidates:
        view.table("candidates", ("fact", "stage", "good", "bad"),
                   [(printable(c.key), c.stage, _cell(c.good), _cell(c.bad)) for c in r.candidates])
    else:
        view.line("no candidate: no fact that can be varied differs", "dim")
    _trials_table(view, r)
    if r.also_failing:
        view.table("also failing, but not the recorded way", ("#", "facts applied", "signature"),
                   [(str(t.number), printable(_applied(t, len(r.candidates))), _cell(t.signature or ""))
                    for t in r.also_failing], free=1)
    if r.not_varied:
        view.table("not varied", ("fact", "good", "bad", "why"),
                   [(printable(n.key), _cell(n.good), _cell(n.bad), printable(n.reason)) for n in r.not_varied],
                   free=3)
    _notes(r.notes)
    out.print(_spent(r.trials, wall_s))
    if r.found:
        out.print(Text(f"minimal set: {printable(' + '.join(r.minimal))}", "bold red"))
    else:
        out.print(Text(_STATUS_LINE[r.status], "bold"))


def _notes(notes: tuple[str, ...]) -> None:
    for note in notes:
        console.out.print(Text(f"note: {printable(note)}", "dim"))


def _probes_table(w: Walk, item: str, shown: Callable[[Trial], str]) -> None:
    def role(t: Trial) -> str:
        return "" if t.role == "search" else f" ({t.role})"

    View(console.out).table("trials", ("#", item, "verdict", "signature", "build", "run"),
                            [(str(t.number), printable(shown(t) + role(t)), _verdict_cell(t), _cell(t.signature or ""),
                              _build_cell(t), f"{t.run_s:.1f}s") for t in w.trials], free=1)


_COMMITS_STATUS = {
    "baseline fails": "baseline fails: the good commit does not pass in the bad environment",
    "not-reproduced": "not-reproduced: the bad commit does not fail the recorded way here",
}


def _show_commits(bad: Path, good: Path, r: CommitsResult, wall_s: float) -> None:
    out = console.out
    out.print(Text(f"bad:  {printable(str(bad))}\ngood: {printable(str(good))}"))
    out.print(Text(f"{len(r.commits)} commit(s) after {r.walk.good[:12]} up to {r.commits[-1].sha[:12]} "
                   "(first parents)", "dim"))
    subjects = {c.sha: c.subject for c in r.commits}
    _probes_table(r.walk, "commit", lambda t: f"{(t.item or '')[:12]} {subjects.get(t.item or '', '')}".rstrip())
    _notes(r.walk.notes)
    out.print(_spent(r.walk.trials, wall_s))
    first = r.first_failing
    if first is not None:
        out.print(Text(f"first failing commit: {first.sha} {printable(first.subject)}", "bold red"))
    else:
        out.print(Text(_COMMITS_STATUS[r.walk.status], "bold"))


def _show_sweep(bad: Path, good: Path, r: SweepResult, wall_s: float) -> None:
    out = console.out
    out.print(Text(f"bad:  {printable(str(bad))}\ngood: {printable(str(good))}"))
    out.print(Text(printable(f"{r.fact}: {r.walk.good} (good) to {r.walk.line[-1]} (bad), "
                             f"the versions between from {r.source}"), "dim"))
    _probes_table(r.walk, r.name, lambda t: t.item or "")
    _notes(r.walk.notes)
    out.print(_spent(r.walk.trials, wall_s))
    out.print(Text(printable(summary(r)), "bold red" if r.found else "bold"))


def _history(src: Source, good: str) -> list[tuple[str, str]]:
    assert src.remote and src.commit  # bisect_commits checked both
    return git_source.commits_between(load_settings(), src.remote, src.remote_from_user, good, src.commit)


def _versions(registry: Registry, package: str) -> list[str]:
    settings = load_settings()
    return fetch.npm_versions(settings, package) if registry == "npm" else pypi.versions(settings, package)


Result = BisectResult | CommitsResult | SweepResult


def _bisect(replayer: Replayer, bad: Path, good: Path, settings: BisectSettings, progress: Progress,
            commits: bool, sweep: str | None) -> Result:
    if commits:
        return bisect_commits(replayer, bad, good, settings, progress, _history)
    if sweep is not None:
        return bisect_sweep(replayer, bad, good, sweep, settings, progress, _versions)
    return bisect_capsules(replayer, bad, good, settings, progress)


def _data(result: Result, wall_s: float) -> dict[str, object]:
    if isinstance(result, CommitsResult):
        return {"mode": "commits", **commits_data(result), "totals": totals(result.walk.trials, wall_s)}
    if isinstance(result, SweepResult):
        return {"mode": "sweep", **sweep_data(result), "totals": totals(result.walk.trials, wall_s)}
    return {"mode": "facts", **result_data(result), "totals": totals(result.trials, wall_s)}


def _report(bad: Path, good: Path, result: Result, as_json: bool, wall_s: float) -> None:
    if as_json:
        console.print_result("bisect", int(Exit.OK if result.found else Exit.NEGATIVE),
                             {"bad": str(bad), "good": str(good), **_data(result, wall_s)})
    elif isinstance(result, CommitsResult):
        _show_commits(bad, good, result, wall_s)
    elif isinstance(result, SweepResult):
        _show_sweep(bad, good, result, wall_s)
    else:
        _show(bad, good, result, wall_s)


def bisect(a: Args) -> int:
    if a.commits and a.sweep is not None:
        raise UsageError("--commits and --sweep bisect different things: give one of them")
    trust = make_trust(a.values)  # both ends: refused unless they verify
    progress = Progress(console.err, quiet=a.quiet or a.json)
    use_mirrors(a.mirror)
    check_repo(a.repo)
    plan_opts = PlanOptions(repo=a.repo, env_overrides=parse_env(a.env), salt=a.salt,
                            http_ignore=tuple(a.http_ignore))
    replayer = Replayer(ReplayOptions(timeout=a.timeout, verbose=a.verbose, plan=plan_opts,
                                      secret_env=plan_opts.env_overrides, trust=trust), progress)
    start = time.monotonic()
    try:
        settings = BisectSettings(a.attempts, a.jobs or _cores(), not a.no_cache_reuse)
        result = _bisect(replayer, a.bad, Path(a.good), settings, progress, a.commits, a.sweep)
    finally:
        replayer.close()
    wall_s = time.monotonic() - start
    _report(Path(a.bad), Path(a.good), result, a.json, wall_s)
    if a.junit is not None:
        from ..report.junit import bisect_junit

        write_text(a.junit, bisect_junit(result, str(a.bad)))
    return int(Exit.OK if result.found else Exit.NEGATIVE)
