"""The farm's history as JSON results and as text on the terminal (HTML and JUnit are
html.py's and junit.py's)."""
from __future__ import annotations

from collections import Counter
from typing import Any

from ..capsules.model import to_data
from .model import CapsuleResult, History, Night

VERDICT_ORDER = ("reproduced", "flaky", "different-failure", "not-reproduced", "inconclusive", "broken",
                 "infra-error")
_LETTER = {"reproduced": "R", "flaky": "F", "different-failure": "D", "not-reproduced": "N", "inconclusive": "?",
           "broken": "B", "infra-error": "E", "fixed": "X", "not-fixed": "n"}


def counts(night: Night) -> dict[str, int]:
    c: Counter[str] = Counter(r.verdict for r in night.results)
    out = {v: c[v] for v in VERDICT_ORDER if c[v]}
    refs = Counter(r.ref_verdict for r in night.results if r.ref_verdict)
    out.update({f"ref:{v}": n for v, n in sorted(refs.items())})
    return out


def night_summary(night: Night) -> dict[str, Any]:
    return {"id": night.id, "started_at": night.started_at, "finished_at": night.finished_at, "ref": night.ref,
            "sources": list(night.sources), "capsules": len(night.results), "images": night.images,
            "builds": night.builds, "counts": counts(night)}


def result_json(r: CapsuleResult) -> dict[str, Any]:
    return to_data(r)  # type: ignore[no-any-return]


def run_json(night: Night) -> dict[str, Any]:
    return {"night": night_summary(night), "results": [result_json(r) for r in night.results]}


def strips(history: History) -> list[dict[str, Any]]:
    """Per capsule, its verdict on each night of the history (None where it was not collected)."""
    by_id: dict[str, dict[str, Any]] = {}
    for i, night in enumerate(history.nights):
        for r in night.results:
            row = by_id.setdefault(r.capsule_id, {"capsule_id": r.capsule_id, "path": r.path,
                                                  "verdicts": [None] * len(history.nights)})
            row["path"] = r.path
            row["verdicts"][i] = r.verdict
    return sorted(by_id.values(), key=lambda row: row["path"])


def report_json(history: History) -> dict[str, Any]:
    last = history.nights[-1] if history.nights else None
    return {
        "nights": [night_summary(n) for n in history.nights],
        "last_night": run_json(last) if last else None,
        "since_last_night": [to_data(t) for t in history.transitions],
        "capsules": strips(history),
    }


def history_json(results: list[CapsuleResult]) -> dict[str, Any]:
    first = results[-1] if results else None
    return {"capsule_id": first.capsule_id if first else None, "path": first.path if first else None,
            "nights": [result_json(r) for r in results]}


def show_run(night: Night, console: Any) -> None:
    from rich.table import Table

    table = Table(title=f"night {night.id}", header_style="bold")
    for col in ("capsule", "format", "verdict", "rate", "at ref", "signature", "why"):
        table.add_column(col, overflow="fold")
    for r in night.results:
        table.add_row(*_plain(r.path, r.format, r.verdict, _rate(r), r.ref_verdict or "", r.signature or "",
                              r.reason))
    console.print(table)
    console.print(_counts_line(night), markup=False)
    console.print(f"images: {night.images} planned, {night.builds} built", markup=False)


def show_report(history: History, console: Any) -> None:
    if not history.nights:
        console.print("no nights recorded yet", markup=False)
        return
    last = history.nights[-1]
    console.print(f"{len(history.nights)} night(s); last {last.id} (started {last.started_at}"
                  f"{', unfinished' if last.finished_at is None else ''})", markup=False)
    console.print(_counts_line(last), markup=False)
    console.print("since last night:" if history.transitions else "since last night: nothing changed", markup=False)
    for t in history.transitions:
        console.print(f"  {t.kind}: {t.path} ({t.before or '-'} -> {t.after}) {t.detail}", markup=False)
    from rich.table import Table

    table = Table(title="capsules", header_style="bold")
    for col in ("capsule", "nights (oldest first)", "last"):
        table.add_column(col, overflow="fold")
    for row in strips(history):
        strip = "".join(_LETTER.get(v, "?") if v else "." for v in row["verdicts"])
        table.add_row(*_plain(row["path"], strip, next((v for v in reversed(row["verdicts"]) if v), "")))
    console.print(table)
    console.print("R reproduced, F flaky, D different-failure, N not-reproduced, ? inconclusive, B broken, "
                  "E infra-error, . not collected", markup=False)


def show_history(results: list[CapsuleResult], console: Any) -> None:
    from rich.table import Table

    table = Table(title=f"capsule {results[-1].capsule_id} ({results[-1].path})", header_style="bold")
    for col in ("night", "verdict", "rate", "at ref", "signature", "exit", "image", "why"):
        table.add_column(col, overflow="fold")
    for r in results:
        table.add_row(*_plain(r.night_id, r.verdict, _rate(r), f"{r.ref}: {r.ref_verdict}" if r.ref_verdict else "",
                              r.signature or "", "" if r.exit_code is None else str(r.exit_code),
                              (r.image_digest or "")[:19], r.reason))
    console.print(table)


def _counts_line(night: Night) -> str:
    c = counts(night)
    return "verdicts: " + (", ".join(f"{n} {v}" for v, n in c.items()) or "none")


def _rate(r: CapsuleResult) -> str:
    if r.rate is None:
        return ""
    return f"{r.rate.k}/{r.rate.n} ({r.rate.low:.0%}-{r.rate.high:.0%})"


def _plain(*values: str) -> list[Any]:
    """Table cells as plain text: capsule strings are never read as rich markup."""
    from rich.text import Text

    return [Text(str(v)) for v in values]
