"""`replay inspect`'s text: the answer first (the capsule, its format and id, the command, the recorded
outcome), then every fact, section by section."""
from __future__ import annotations

import shlex
from rich.console import Console
from rich.text import Text

from ..capsules.model import Capsule, Command
from ..facts.inspect import Section, printable, sections
from .layout import Styled, View
from ..textsafe import cut


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


def show_inspect(model: Capsule, out: Console, full: bool = False) -> None:
    out.print(headline(model))
    view = View(out)
    for section in sections(model, full=full):
        section_view(view, section)
