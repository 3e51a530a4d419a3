"""The replay report: one value, shown as rich tables or as JSON."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .capsules.model import to_data
from .capsules.verification import VerifyResult
from .httpreplay.report import HttpReport
from .plan import Fidelity
from .replay import Attempt, Drift, Expected, Verdict

EXIT_FOR: dict[str, int] = {"reproduced": 0, "fixed": 0}


@dataclass(frozen=True)
class CapsuleRef:
    path: str
    format: str
    id: str


@dataclass(frozen=True)
class ImageInfo:
    ref: str
    built: bool
    build_s: float
    steps_run: int
    builder: str
    base: str


@dataclass(frozen=True)
class Verification:
    valid: bool | None
    sealed: bool = False
    trusted: bool | None = None
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReplayReport:
    verdict: Verdict
    capsule: CapsuleRef
    expected: Expected
    attempts: tuple[Attempt, ...]
    fidelity: tuple[Fidelity, ...]
    image: ImageInfo
    verification: Verification
    steps: tuple[tuple[str, float], ...] = ()
    drift: tuple[Drift, ...] = ()
    http: HttpReport | None = None
    notes: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        return EXIT_FOR.get(self.verdict, 1)

    def to_json(self) -> dict[str, Any]:
        data = to_data(self)
        data["exit_code"] = self.exit_code
        data["expected"]["stdout"] = _text(self.expected.stdout)
        for d, a in zip(data["attempts"], self.attempts):
            d["stdout"] = _text(a.stdout)
        data["steps"] = [{"name": n, "seconds": round(s, 3)} for n, s in self.steps]
        data["image"]["build_s"] = round(self.image.build_s, 3)
        return data


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "replace")


def verification_of(result: VerifyResult) -> Verification:
    return Verification(result.valid, result.sealed, result.trusted,
                        tuple(f"{p.severity}: {p.message}" for p in result.problems))


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
            f"{d.name} {d.installed}→{d.recorded}" for d in report.drift[:20]), markup=False)
    if report.http is not None:
        _show_http(to_data(report.http), console)
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
    for h in http.get("unrecorded_hosts", []):
        near = f"nearest recorded host: {h['nearest']}" if h.get("nearest") else "no host was recorded"
        console.print(f"  contacted, not in the recording: {h['host']} ({near})", markup=False)
    for note in http.get("notes", []):
        console.print(f"  note: {note}", markup=False)
