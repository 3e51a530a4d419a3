"""`replay inspect CAPSULE`: what a capsule records, group by group."""
from __future__ import annotations

import shlex
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from ..capsules.model import Capsule, Command
from ..codec import encode
from ..capsules.opening import open_capsule
from ..capsules.trust import Trust
from ..facts.inspect import Section, printable, sections
from ..textsafe import cut
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


_FORMATS = {"twin": "twin capsule v{}", "novafabric": "NovaFabric Run Capsule {}", "codeinstances": "CodeInstances codeinstances/{}"}
COMMAND_LIMIT = 300  # the headline's command; the Command section below shows it whole


def outcome_line(cmd: Command) -> str:
    """The recorded outcome in a few words: failed (exit 1, signature ...), passed, not recorded."""
    ends = [f"exit {cmd.exit_code}" if cmd.exit_code is not None else "", f"signal {cmd.signal}" if cmd.signal else ""]
    if cmd.failure is not None and cmd.failure.signature:
        ends.append(f"signature {cmd.failure.signature}")
    detail = ", ".join(e for e in ends if e)
    word = {"fail": "failed", "pass": "passed"}.get(cmd.outcome or "", "not recorded")
    return f"{word} ({detail})" if detail else word


def headline(model: Capsule) -> Text:
    """The answer first: the capsule, its format and id, the command, the recorded outcome."""
    p, cmd = model.provenance, model.command
    fmt = _FORMATS.get(p.format.value, p.format.value + " {}").format(p.format_version)
    rows = (("format", fmt), ("id", p.capsule_id or f"none ({p.format.value} records no id)"),
            ("command", cut(shlex.join(cmd.argv), COMMAND_LIMIT) if cmd.argv else "not recorded"), ("outcome", outcome_line(cmd)))
    text = Text(printable(p.path) + "\n", "bold", no_wrap=True, overflow="ignore")
    for label, value in rows:
        text.append(f"  {label:<8} ", "cyan")
        text.append(printable(value) + "\n", "bold" if label == "outcome" else "")
    return text


def register(app: typer.Typer) -> None:
    @app.command("inspect")
    def inspect_command(
        capsule: CapsuleArg,
        as_json: Annotated[bool, typer.Option("--json", help="Print the whole model as JSON.")] = False,
        full: Annotated[bool, typer.Option("--all", help="List every resolved package.")] = False,
    ) -> None:
        """Show what a capsule records: format, id, command and outcome first, then every fact. `-`: a JSON capsule on stdin."""
        model = open_capsule(capsule, Trust().showing()).shown  # named as given: the URL, <stdin>, the path
        if as_json:
            console.print_result("inspect", 0, encode(model))
            return
        console.out.print(headline(model))
        for section in sections(model, full=full):
            console.out.print(section_view(section))
