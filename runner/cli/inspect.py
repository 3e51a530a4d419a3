"""`replay inspect CAPSULE`: what a capsule records, group by group."""
from __future__ import annotations

import dataclasses
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from ..capsules import read_capsule
from ..capsules.model import to_data
from ..capsules.fetch import origin
from ..facts.inspect import Section, printable, sections
from . import console
from .options import CapsuleArg


# rich lays a table out in time that grows faster than its rows (50,000 resolved packages:
# 20 s); a long section is printed as aligned lines instead, in a fraction of a second.
TABLE_ROWS = 500


def section_view(section: Section) -> Table | Text:
    """A section as a two-column table, or one dim line saying why it is empty."""
    if not section.rows:
        return Text.assemble((section.title, "bold"), (f": {section.empty}", "dim"))
    if len(section.rows) > TABLE_ROWS:
        return _lines_view(section)
    table = Table(
        title=section.title, title_justify="left", title_style="bold", show_header=False, box=None,
        padding=(0, 2, 0, 2),
    )
    table.add_column(style="cyan", overflow="fold")
    table.add_column(overflow="fold")
    table.add_column(style="yellow")
    for row in section.rows:
        # Text(), not a markup string: capsule values are untrusted and may hold "[...]".
        table.add_row(Text(printable(row.label)), Text(printable(row.value)), Text(row.flag or ""))
    return table


def _lines_view(section: Section) -> Text:
    width = min(max(len(row.label) for row in section.rows), 60)
    text = Text(section.title + "\n", "bold", no_wrap=True, overflow="ignore")
    for row in section.rows:
        flag = f"  {row.flag}" if row.flag else ""
        text.append(f"  {printable(row.label):<{width}}  ", "cyan")
        text.append(f"{printable(row.value)}{flag}\n")
    return text


def register(app: typer.Typer) -> None:
    @app.command("inspect")
    def inspect_command(
        capsule: CapsuleArg,
        as_json: Annotated[bool, typer.Option("--json", help="Print the whole model as JSON.")] = False,
        full: Annotated[bool, typer.Option("--all", help="List every resolved package.")] = False,
    ) -> None:
        """Show what a capsule records: command, outcome, platform, runtimes, packages, env..."""
        model = read_capsule(capsule)
        given = origin(capsule)  # a downloaded capsule is shown by its URL
        model = dataclasses.replace(model, provenance=dataclasses.replace(model.provenance, path=given))
        if as_json:
            console.print_result("inspect", 0, to_data(model))
            return
        for section in sections(model, full=full):
            console.out.print(section_view(section))
