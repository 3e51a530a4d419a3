"""`replay diff A B`: the environment facts that differ between two capsules."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from ..capsules import read_capsule
from ..capsules.model import Capsule
from ..diff import CapsuleDiff, FactDiff, diff_capsules, diff_to_data
from ..errors import Exit
from ..inspect import printable
from . import console


def _cell(value: str) -> Text:
    return Text(printable(value))


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE)
    for name in columns:
        table.add_column(name, overflow="fold")
    return table


def _group_table(group: str, facts: tuple[FactDiff, ...]) -> Table:
    table = _table(group, "key", "A", "B", "could change outcome", "note")
    for f in facts:
        could = Text("yes", "red") if f.could_change_outcome else Text("no", "dim")
        table.add_row(_cell(f.key), _cell(f.a), _cell(f.b), could, _cell(f.note or ""))
    return table


def _lone_table(d: CapsuleDiff) -> Table:
    table = _table("not comparable (not counted)", "key", "recorded in", "value", "why")
    for n in d.not_comparable:
        table.add_row(_cell(n.key), n.recorded_in.upper(), _cell(n.value), _cell(n.note))
    return table


def _show(a: Capsule, b: Capsule, d: CapsuleDiff) -> None:
    for side, c in (("A", a), ("B", b)):
        console.out.print(Text(f"{side}: {printable(c.provenance.path)} ({c.provenance.format.value})"))
    for group, facts in d.grouped():
        console.out.print(_group_table(group, facts))
    if d.not_comparable:
        console.out.print(_lone_table(d))
    for c in d.caveats:
        console.out.print(Text(f"note: {c.key}: {printable(c.note)}", "dim"))
    count = len(d.outcome_keys)
    summary = f"{count} difference(s) that could change the outcome" if count else (
        "no difference that could change the outcome"
    )
    console.out.print(Text(summary, "bold"))


def register(app: typer.Typer) -> None:
    @app.command("diff")
    def diff_command(
        a: Annotated[Path, typer.Argument(help="First capsule (A).")],
        b: Annotated[Path, typer.Argument(help="Second capsule (B).")],
        as_json: Annotated[bool, typer.Option("--json", help="Print the differences as JSON.")] = False,
    ) -> None:
        """Compare the recorded environments of two capsules; exit 1 when they differ."""
        ca, cb = read_capsule(a), read_capsule(b)
        d = diff_capsules(ca, cb)
        if as_json:
            console.print_result("diff", int(Exit.NEGATIVE if d.differ else Exit.OK), diff_to_data(d))
        else:
            _show(ca, cb, d)
        if d.differ:
            raise typer.Exit(int(Exit.NEGATIVE))
