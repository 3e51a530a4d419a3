"""`replay bisect`'s text view: the candidates and trials (facts) or the items tried (--commits,
--sweep), the notes, the bad end's rate and the answer with how sure it is."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from ..bisect import (BisectResult, Chance, CommitsResult, SweepResult, Trial, Walk, candidates_said, chance_said, chances_said,
                      summary, totals)
from ..bisect.fixes import FixResult
from ..facts.inspect import printable
from ..verdict.vocabulary import FACTS
from ..verdict.rate import Rate
from .layout import Cell, Styled, View

_STATUS_LINE = {
    "found": "minimal set found",
    "baseline fails": "baseline fails: the good environment does not pass here",
    "not-reproduced": "not-reproduced: the bad environment does not fail the recorded way here",
    "no culprit": "no culprit among the facts that can be varied",
    "undecided": "undecided: no minimal set held the confidence within the budget",
}


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


def _show(out: Console, bad: Path, good: Path, r: BisectResult, wall_s: float) -> None:
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
    _notes(out, r.notes)
    _removals(view, r)
    _rate_line(out, r.rate)
    out.print(_spent(r.trials, wall_s))
    sure = f" (confidence {chance_said(r.confidence)}, asked {r.target:g})"
    if r.found:
        out.print(Text(f"minimal set: {printable(' + '.join(r.minimal))}{sure}", "bold red"))
    elif r.status == "undecided" and r.minimal:
        out.print(Text(f"undecided: {printable(' + '.join(r.minimal))} so far{sure}", "bold"))
    else:
        out.print(Text(_STATUS_LINE[r.status], "bold"))


def _removals(view: View, r: BisectResult) -> None:
    """The answer's checks: each member's removal, its runs and how likely a pass that often is luck."""
    for removal in r.removals:
        luck = "" if removal.failed else f"; a failing set passes that often with chance {removal.luck:.3f}"
        view.line(printable(f"without {removal.key}: {removal.failed} of {removal.runs} run(s) failed as recorded"
                            + luck), "dim")


def _notes(out: Console, notes: tuple[str, ...]) -> None:
    for note in notes:
        out.print(Text(f"note: {printable(note)}", "dim"))


def _rate_line(out: Console, rate: Rate | None, end: str = "the bad end") -> None:
    if rate is not None and rate.runs:
        out.print(Text(f"{end} failed as recorded in {rate.failed} of {rate.runs} run(s): "
                               f"it {rate.phrase()}", "dim"))


def _items_table(out: Console, w: Walk, item: str, shown: Callable[[str], str],
                 roles: dict[str, str] | None = None, fixes: tuple[Chance, ...] | None = None) -> None:
    """One row per item tried, in line order: its runs and how likely it is the first bad one (with
    `fixes`: the first fixed one)."""
    chance = {c.item: c.probability for c in (w.candidates if fixes is None else fixes)}
    rows = []
    for position in sorted({t.position for t in w.trials if t.position is not None}):
        mine = [t for t in w.trials if t.position == position]
        kinds = [k for t in mine for k in t.attempts]
        role = next((f" ({(roles or {}).get(t.role, t.role)})" for t in mine if t.role != "search"), "")
        name = mine[0].item or ""
        rows.append((printable(shown(name) + role), str(len(kinds)), str(kinds.count("recorded")),
                     str(kinds.count("pass")), str(len(kinds) - kinds.count("recorded") - kinds.count("pass")),
                     _cell(next((t.signature for t in mine if t.signature), "")), _build_cell(mine[0]),
                     chance_said(chance[name]) if name in chance else ""))
    View(out).table("items tried", (item, "runs", "failed", "passed", "other", "signature", "build",
                                    "first bad" if fixes is None else "fixed first"), rows, free=5)


def _walk_answer(w: Walk, found: str, shown: Callable[[str], str]) -> Text:
    sure = f" (probability {chance_said(w.confidence)}, asked {w.target:g})"
    if w.found:
        return Text(found + sure, "bold red")
    if w.status == "undecided":
        return Text(printable(f"undecided, {candidates_said(w, shown)}"), "bold")
    return Text(_COMMITS_STATUS.get(w.status, w.status), "bold")


_COMMITS_STATUS = {
    "baseline fails": "baseline fails: the good commit does not pass in the bad environment",
    "not-reproduced": "not-reproduced: the bad commit does not fail the recorded way here",
}


def _show_commits(out: Console, bad: Path, good: Path, r: CommitsResult, wall_s: float) -> None:
    out.print(Text(f"bad:  {printable(str(bad))}\ngood: {printable(str(good))}"))
    out.print(Text(f"{len(r.commits)} commit(s) after {r.walk.good[:12]} up to {r.commits[-1].sha[:12]} "
                   "(first parents)", "dim"))
    subjects = {c.sha: c.subject for c in r.commits}
    _items_table(out, r.walk, "commit", lambda sha: f"{sha[:12]} {subjects.get(sha, '')}".rstrip())
    _notes(out, r.walk.notes)
    _rate_line(out, r.walk.rate)
    out.print(_spent(r.walk.trials, wall_s))
    first = r.first_failing
    found = f"first failing commit: {first.sha} {printable(first.subject)}" if first is not None else ""
    out.print(_walk_answer(r.walk, found, lambda sha: f"{sha[:12]} {subjects.get(sha, '')}".rstrip()))


def _show_fix(out: Console, bad: Path, r: FixResult, wall_s: float) -> None:
    out.print(Text(f"capsule: {printable(str(bad))}"))
    out.print(Text(f"{len(r.commits)} commit(s) after the recorded {r.recorded[:12]} up to {r.commits[-1].sha[:12]} "
                   "(first parents), walked back from the fixed end", "dim"))
    subjects = {c.sha: c.subject for c in r.commits}
    _items_table(out, r.walk, "commit", lambda sha: f"{sha[:12]} {subjects.get(sha, '')}".rstrip(),
                 roles={"good end": "fixed end", "bad end": "recorded"}, fixes=r.fix_candidates)
    _notes(out, r.walk.notes)
    _rate_line(out, r.walk.rate, "the recorded commit")
    out.print(_spent(r.walk.trials, wall_s))
    fixing, w = r.fixing, r.walk
    if fixing is not None:
        out.print(Text(f"fixed by commit: {fixing.sha} {printable(fixing.subject)} (probability "
                       f"{chance_said(w.confidence)}, asked {w.target:g})", "bold green"))
    elif w.status == "undecided":
        out.print(Text(printable("undecided, fixing commit " + chances_said(
            r.fix_candidates, lambda sha: f"{sha[:12]} {subjects.get(sha, '')}".rstrip())), "bold"))
    else:
        out.print(Text(_FIX_STATUS.get(w.status, w.status), "bold"))


_FIX_STATUS = {
    "baseline fails": "not fixed: the recorded failure still comes back at --fixed-at",
    "not-reproduced": "not-reproduced: the recorded commit does not fail the recorded way here",
}


def _show_sweep(out: Console, bad: Path, good: Path, r: SweepResult, wall_s: float) -> None:
    out.print(Text(f"bad:  {printable(str(bad))}\ngood: {printable(str(good))}"))
    out.print(Text(printable(f"{r.fact}: {r.walk.good} (good) to {r.walk.line[-1]} (bad), "
                             f"the versions between from {r.source}"), "dim"))
    _items_table(out, r.walk, r.name, str)
    _notes(out, r.walk.notes)
    _rate_line(out, r.walk.rate)
    out.print(_spent(r.walk.trials, wall_s))
    out.print(Text(printable(summary(r)), "bold red" if r.found else "bold"))




def show(out: Console, bad: Path, good: Path | None, result: BisectResult | CommitsResult | SweepResult | FixResult,
         wall_s: float, then: dict[str, Any] | None = None) -> None:
    """The text view of any mode's result, and the next step when more runs would likely decide it."""
    if isinstance(result, FixResult):
        _show_fix(out, bad, result, wall_s)
    elif good is None:
        raise ValueError("every mode but --fixed-at has a good end")
    elif isinstance(result, CommitsResult):
        _show_commits(out, bad, good, result, wall_s)
    elif isinstance(result, SweepResult):
        _show_sweep(out, bad, good, result, wall_s)
    else:
        _show(out, bad, good, result, wall_s)
    if then is not None:
        out.print(Text(printable(f"next: {then['why']}: {then['command']}")))
