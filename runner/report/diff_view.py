"""`replay diff`'s text: both recorded outcomes, the facts that could change them, and the command
to run next. Equal-by-name variables, dependency changes and facts that cannot change the
outcome are counted; `--all` lists them."""
from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Sequence

from rich.console import Console

from ..capsules.model import Capsule
from ..facts.diff import CapsuleDiff, FactDiff, next_step, outcome_of
from ..facts.diffrank import by_evidence
from ..facts.inspect import printable
from .layout import View


def _outcome(c: Capsule) -> str:
    o = outcome_of(c)
    if not o["failed"]:
        return f"pass (exit {o['exit_code'] or 0})"
    end = o["signal"] or (f"exit {o['exit_code']}" if o["exit_code"] is not None else "exit ?")
    return f"fail {end}" + (f", {o['signature']}" if o["signature"] else "")


def _rows(facts: tuple[FactDiff, ...]) -> list[tuple[str, ...]]:
    return [(f.key, printable(f.a), printable(f.b), printable(f.note or "")) for f in facts]


def _ranked_rows(facts: Sequence[FactDiff]) -> list[tuple[str, ...]]:
    """A cause's row says its evidence; one that follows from it sits under it (└)."""
    return [(f"└ {f.key}" if f.follows else f.key, printable(f.a), printable(f.b),
             printable("; ".join(filter(None, (f.note if not f.follows else "", f.evidence))))) for f in facts]


def _pins(view: View, pins: list[FactDiff]) -> None:
    """Dependency changes as counts per ecosystem: hundreds of rows say less than one line; a
    single differing package is named."""
    for eco in sorted({f.key.split(":")[1] for f in pins}):
        mine = [f for f in pins if f.key.split(":")[1] == eco]
        if len(mine) == 1:
            view.line(f"  {mine[0].key}: {printable(mine[0].a)} → {printable(mine[0].b)}")
            continue
        kinds = Counter("only in B" if f.a_value is None else "only in A" if f.b_value is None else "another version"
                        for f in mine)
        view.line(f"  pin:{eco}:* {len(mine)} package(s) differ ("
                  + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) + ")")


def _short(view: View, d: CapsuleDiff) -> None:
    outcome = [f for f in d.differences if f.could_change_outcome]
    plain = [f for f in by_evidence(d.differences) if not f.key.startswith("pin:")]
    if outcome:
        view.line(f"could change the outcome ({len(outcome)}):", "bold")
        if plain:
            rows = _ranked_rows(plain)
            if any(r[3] for r in rows):
                view.table("", ("key", "A", "B", "note"), rows, free=3)
            else:  # no note to give: no empty column
                view.table("", ("key", "A", "B"), [r[:3] for r in rows])
        _pins(view, [f for f in outcome if f.key.startswith("pin:")])
    info = [f.key for f in d.differences if not f.could_change_outcome and f not in plain]
    if info:
        view.line(f"{len(info)} other difference(s) that cannot change the outcome: " + ", ".join(info[:6])
                  + (", …" if len(info) > 6 else ""))
    if d.caveats:
        kinds = Counter(c.key.split(":", 1)[0] for c in d.caveats)
        named = [c.key for c in d.caveats] if len(d.caveats) <= 4 else [f"{k} {n}" for k, n in sorted(kinds.items())]
        view.line(f"{len(d.caveats)} fact(s) equal by name only, values not recorded: {', '.join(named)}")
    if d.not_comparable:
        view.line(f"{len(d.not_comparable)} fact(s) not comparable: one format does not record them")


def _full(view: View, d: CapsuleDiff) -> None:
    for group, facts in d.grouped():
        rows = [(*r[:3], "yes" if f.could_change_outcome else "no", r[3]) for r, f in zip(_rows(facts), facts)]
        view.table(group, ("key", "A", "B", "could change outcome", "note"), rows, free=4)
    if d.not_comparable:
        view.table("not comparable (not counted)", ("key", "recorded in", "value", "why"),
                   [(n.key, n.recorded_in.upper(), printable(n.value), printable(n.note)) for n in d.not_comparable],
                   free=3)
    for caveat in d.caveats:
        view.line(f"note: {caveat.key}: {printable(caveat.note)}")


def show_diff(a: Capsule, b: Capsule, d: CapsuleDiff, out: Console, show_all: bool = False,
              carry: Sequence[str] = ()) -> None:
    view = View(out)
    for side, c in (("A", a), ("B", b)):
        view.line(f"{side}: {printable(c.provenance.path)} ({c.provenance.format.value}), recorded {_outcome(c)}",
                  wrap=False)
    (_full if show_all else _short)(view, d)
    count = len(d.outcome_keys)
    view.line(f"{count} difference(s) that could change the outcome" if count else
              "no difference that could change the outcome", "bold")
    if not show_all and (d.differences or d.caveats or d.not_comparable):
        view.line("(--all lists every fact)")
    argv, why = next_step(a, b, d, carry)
    if argv is not None:
        view.line(f"next: {printable(shlex.join(argv))}", wrap=False)
        if argv[1:2] != ["bisect"] or "fill in" in why or "--commits" in argv:
            view.line(f"({printable(why)})")


