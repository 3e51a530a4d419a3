"""`replay inspect CAPSULE`: what a capsule records, group by group."""
from __future__ import annotations

import shlex
from typing import Annotated

import typer
from rich.text import Text

from ..capsules.model import Capsule, Command
from ..codec import encode
from ..capsules.opening import open_capsule
from ..capsules.trust import Trust
from ..facts.inspect import Section, printable, sections
from ..report.layout import Styled, View
from ..textsafe import cut
from . import console
from .options import CapsuleArg


def section_view(view: View, section: Section) -> None:
    """A section as a label/value/flag table, or one line saying why it is empty."""
    if not section.rows:
        view.line(f"{section.title}: {section.empty}", "dim")
        return
    # values are shown whole (digests too): inspect is where a capsule's facts are read
    view.table(section.title, ("fact", "value", "flag"),
               [(Styled(printable(r.label), "cyan"), printable(r.value), Styled(r.flag or "", "yellow"))
                for r in section.rows], free=1, header=False, shorten=False, indent=2)


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
        view = View(console.out)
        for section in sections(model, full=full):
            section_view(view, section)
