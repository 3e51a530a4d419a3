"""`replay bisect BAD --good GOOD`: which environment facts make BAD fail."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from ..bisect import BisectResult, Trial, result_data
from ..bisect_session import BisectSettings, bisect_capsules
from ..errors import Exit
from ..inspect import printable
from ..planner import PlanOptions
from ..replay import Progress, Replayer, ReplayOptions
from . import console
from .options import RepoOpt

_VERDICT_STYLE = {"recorded": "red", "pass": "green", "other": "yellow", "inconclusive": "dim"}
_STATUS_LINE = {
    "found": "minimal set found",
    "baseline fails": "baseline fails: the good environment does not pass here",
    "not reproduced": "not reproduced: the bad environment does not fail the recorded way here",
    "no culprit": "no culprit among the facts that can be varied",
}


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _cell(value: str | None) -> Text:
    return Text("(absent)", "dim") if value is None else Text(printable(value))


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE)
    for name in columns:
        table.add_column(name, overflow="fold")
    return table


def _applied(t: Trial, everything: int) -> str:
    if t.role in ("good end", "both ends"):
        return "none (good end)"
    if t.role == "bad end":
        return f"all {everything} (bad end)"
    return ", ".join(t.keys)


def _build_cell(t: Trial) -> Text:
    if t.built:
        return Text(f"{t.build_s:.1f}s")
    return Text("cached" if t.build_s == 0 else f"cached, {t.build_s:.1f}s", "dim")


def _trials_table(r: BisectResult) -> Table:
    table = _table("trials", "#", "facts applied", "verdict", "signature", "build", "run")
    for t in r.trials:
        verdict = Text(t.verdict, _VERDICT_STYLE[t.verdict])
        if len(set(t.attempts)) > 1:  # mixed attempts say how flaky the trial was
            verdict.append(f" ({', '.join(t.attempts)})", "dim")
        elif len(t.attempts) > 1:
            verdict.append(f" ×{len(t.attempts)}", "dim")
        table.add_row(str(t.number), printable(_applied(t, len(r.candidates))), verdict,
                      _cell(t.signature or ""), _build_cell(t), f"{t.run_s:.1f}s")
    return table


def _show(bad: Path, good: Path, r: BisectResult) -> None:
    out = console.out
    out.print(Text(f"bad:  {printable(str(bad))}\ngood: {printable(str(good))}"))
    candidates = _table("candidates", "fact", "stage", "good", "bad")
    for c in r.candidates:
        candidates.add_row(printable(c.key), c.stage, _cell(c.good), _cell(c.bad))
    out.print(candidates if r.candidates else Text("no candidate: no fact that can be varied differs", "dim"))
    out.print(_trials_table(r))
    if r.also_failing:
        also = _table("also failing, but not the recorded way", "#", "facts applied", "signature")
        for t in r.also_failing:
            also.add_row(str(t.number), printable(_applied(t, len(r.candidates))), _cell(t.signature or ""))
        out.print(also)
    if r.not_varied:
        nv = _table("not varied", "fact", "good", "bad", "why")
        for n in r.not_varied:
            nv.add_row(printable(n.key), _cell(n.good), _cell(n.bad), printable(n.reason))
        out.print(nv)
    for note in r.notes:
        out.print(Text(f"note: {printable(note)}", "dim"))
    out.print(Text(f"{len(r.trials)} trial(s), {r.variant_builds} variant image(s) built", "dim"))
    if r.found:
        out.print(Text(f"minimal set: {printable(' + '.join(r.minimal))}", "bold red"))
    else:
        out.print(Text(_STATUS_LINE[r.status], "bold"))


def register(app: typer.Typer) -> None:
    @app.command("bisect")
    def bisect_command(
        bad: Annotated[Path, typer.Argument(metavar="BAD", help="Capsule of the run that failed.")],
        good: Annotated[Path, typer.Option("--good", metavar="GOOD", help="Capsule of a run that passed.")],
        attempts: Annotated[int, typer.Option("--attempts", min=1, max=100,
                                              help="Runs per trial: one failing the recorded way decides; "
                                                   "a pass needs all to pass.")] = 1,
        jobs: Annotated[int | None, typer.Option("--jobs", "-j", min=1, show_default="cores",
                                                 help="Trials run at the same time.")] = None,
        timeout: Annotated[float, typer.Option("--timeout", min=1.0, help="Seconds per run.")] = 600.0,
        repo: RepoOpt = None,  # both capsules' commits are fetched from it
        as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
        verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show build logs and output.")] = False,
    ) -> None:
        """Find a minimal set of environment facts that turns GOOD into BAD's recorded failure.

        Exit 0 when a minimal set is found, 1 when not (baseline fails, not reproduced, no culprit).
        """
        progress = Progress(console.err)
        replayer = Replayer(ReplayOptions(timeout=timeout, verbose=verbose, plan=PlanOptions(repo=repo)), progress)
        try:
            result = bisect_capsules(replayer, bad, good, BisectSettings(attempts, jobs or _cores()), progress)
        finally:
            replayer.close()
        if as_json:
            console.print_json({"bad": str(bad), "good": str(good), **result_data(result)})
        else:
            _show(bad, good, result)
        raise typer.Exit(int(Exit.OK if result.found else Exit.NEGATIVE))
