"""The report's human view on stdout (rich tables; capsule strings never read as markup)."""
from __future__ import annotations

from typing import Any

from ..httpreplay.report import HttpReport
from .model import ReplayReport


def show(report: ReplayReport, console: Any) -> None:
    """The human view on stdout."""
    from rich.table import Table

    c = report.capsule
    console.print(f"{c.format} capsule {c.path}  ({c.id})", markup=False)
    v = report.verification
    trust = {True: "trusted signer", False: "signer NOT trusted", None: "signer not checked"}[v.trusted]
    state = "valid" if v.valid else ("invalid" if v.valid is False else "not verified")
    console.print(f"verification: {state}" + (f", sealed, {trust}" if v.sealed else ""), markup=False)
    for p in v.problems[:10]:
        console.print(f"  {p}", markup=False)
    steps = Table(title="steps", show_header=True, header_style="bold")
    steps.add_column("step")
    steps.add_column("time", justify="right")
    for step in report.steps:
        steps.add_row(*_plain(step.name, f"{step.seconds:.1f}s"))
    console.print(steps)
    att = Table(title="attempts", header_style="bold")
    for col in ("#", "exit", "signature", "as recorded?", "time"):
        att.add_column(col)
    for i, a in enumerate(report.attempts, 1):
        end = a.signal or ("timeout" if a.timed_out else str(a.exit_code))
        att.add_row(*_plain(str(i), end, a.signature, a.classification, f"{a.duration_s:.1f}s"))
    console.print(att)
    exp = report.expected
    console.print(f"recorded: {'fail' if exp.failed else 'pass'}"
                  + (f" exit {exp.exit_code}" if exp.exit_code is not None else "")
                  + (f" {exp.signal}" if exp.signal else "")
                  + (f", signature {exp.signature} ({exp.signature_source})" if exp.signature else ""), markup=False)
    _show_key_lines(report, console)
    fid = Table(title="fidelity", header_style="bold")
    for col in ("fact", "recorded", "replayed", "status", "why"):
        fid.add_column(col, overflow="fold")
    for f in report.fidelity:
        fid.add_row(*_plain(f.fact, f.recorded, f.replayed, f.status, f.why))
    console.print(fid)
    if report.drift:
        console.print(f"drifted packages ({len(report.drift)}): " + ", ".join(
            f"{d.name} {d.installed}→{d.recorded}" for d in report.drift[:20]), markup=False)
    if report.http is not None:
        _show_http(report.http, console)
    for note in report.notes:
        console.print(f"note: {note}", markup=False)
    console.print(f"[bold]verdict: {report.verdict}[/bold]")


def _plain(*values: str) -> list[Any]:
    """Table cells as plain text: capsule strings are never read as rich markup."""
    from rich.text import Text

    return [Text(str(v)) for v in values]


def _show_key_lines(report: ReplayReport, console: Any) -> None:
    exp = report.expected
    differing = [a for a in report.attempts if a.key_lines != exp.key_lines and a.classification != "pass"]
    if not differing or not exp.failed:
        return
    console.print("key lines in the capsule:", markup=False)
    for line in exp.key_lines:
        console.print(f"  {line}", markup=False)
    console.print("key lines here:", markup=False)
    for line in differing[0].key_lines:
        console.print(f"  {line}", markup=False)


def _show_http(http: HttpReport, console: Any) -> None:
    for line in http.lines():
        console.print(line, markup=False)
