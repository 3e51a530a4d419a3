"""The replay report: one value, shown as rich tables or as JSON."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .capsules.verification import VerifyResult
from .plan import Fidelity
from .replay import Attempt, Expected, Verdict

EXIT_FOR: dict[str, int] = {"reproduced": 0, "fixed": 0}


@dataclass(frozen=True)
class ReplayReport:
    verdict: Verdict
    capsule: dict[str, Any]
    expected: Expected
    attempts: tuple[Attempt, ...]
    fidelity: tuple[Fidelity, ...]
    steps: tuple[tuple[str, float], ...] = ()
    image: dict[str, Any] = field(default_factory=dict)
    verification: dict[str, Any] = field(default_factory=dict)
    drift: tuple[dict[str, str], ...] = ()
    http: dict[str, Any] | None = None
    notes: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        return EXIT_FOR.get(self.verdict, 1)

    def to_json(self) -> dict[str, Any]:
        exp = asdict(self.expected)
        exp["stdout"] = None if self.expected.stdout is None else self.expected.stdout.decode("utf-8", "replace")
        attempts = []
        for a in self.attempts:
            d = asdict(a)
            d["stdout"] = a.stdout.decode("utf-8", "replace")
            attempts.append(d)
        return {
            "verdict": self.verdict, "exit_code": self.exit_code, "capsule": self.capsule, "expected": exp,
            "attempts": attempts, "fidelity": [asdict(f) for f in self.fidelity],
            "steps": [{"name": n, "seconds": round(s, 3)} for n, s in self.steps], "image": self.image,
            "verification": self.verification, "drift": list(self.drift), "http": self.http, "notes": list(self.notes),
        }


def verification_summary(result: VerifyResult | None, error: str | None = None) -> dict[str, Any]:
    if result is None:
        return {"valid": None, "error": error}
    return {
        "valid": result.valid, "sealed": result.sealed, "trusted": result.trusted,
        "problems": [f"{p.severity}: {p.message}" for p in result.problems],
    }


def show(report: ReplayReport, console: Any) -> None:
    """The human view on stdout."""
    from rich.table import Table

    c = report.capsule
    console.print(f"{c.get('format')} capsule {c.get('path')}  ({c.get('id')})", markup=False)
    v = report.verification
    if v:
        trust = {True: "trusted signer", False: "signer NOT trusted", None: "signer not checked"}[v.get("trusted")]
        state = "valid" if v.get("valid") else ("invalid" if v.get("valid") is False else "not verified")
        console.print(f"verification: {state}" + (f", sealed, {trust}" if v.get("sealed") else ""))
        for p in v.get("problems", [])[:10]:
            console.print(f"  {p}", markup=False)
    steps = Table(title="steps", show_header=True, header_style="bold")
    steps.add_column("step")
    steps.add_column("time", justify="right")
    for name, secs in report.steps:
        steps.add_row(*_plain(name, f"{secs:.1f}s"))
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
            f"{d['name']} {d['installed']}→{d['recorded']}" for d in report.drift[:20]), markup=False)
    if report.http:
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


def _show_http(http: dict[str, Any], console: Any) -> None:
    console.print(f"http: {len(http.get('served', []))} served, {len(http.get('unmatched', []))} unmatched, "
                  f"{len(http.get('unused', []))} unused", markup=False)
    for c in http.get("served", []):
        extra = f" ({c['approximated']})" if c.get("approximated") else ""
        console.print(f"  served #{c['seq']}: {c['method']} {c['url']} -> {c['outcome']}{extra}", markup=False)
    for u in http.get("unmatched", []):
        why = "; ".join(f"{d['part']}: {d['why']}" for d in u.get("differences", []))
        near = f", nearest #{u['nearest']} {u['nearest_request']}" if u.get("nearest") is not None else ""
        console.print(f"  UNMATCHED (not forwarded): {u['method']} {u['url']}{near}{': ' + why if why else ''}",
                      markup=False)
    for c in http.get("unused", []):
        console.print(f"  never requested: #{c['seq']} {c['method']} {c['url']}", markup=False)
    for note in http.get("notes", []):
        console.print(f"  note: {note}", markup=False)
