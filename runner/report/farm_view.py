"""The farm's history as JSON results and as text on the terminal (HTML and JUnit are
html.py's and junit.py's)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..codec import encode
from ..verdict.vocabulary import FARM_ORDER, facts_of
from ..farm.attention import GROUP_LABELS, GROUPS, Attention, Row
from ..farm.attention import counts as counts_by_group
from ..farm.records import CapsuleResult, Night
from ..textsafe import escaped
from .layout import Styled, View

def counts(night: Night) -> dict[str, int]:
    c: Counter[str] = Counter(r.verdict for r in night.results)
    out: dict[str, int] = {v: c[v] for v in FARM_ORDER if c[v]}
    refs = Counter(r.ref_verdict for r in night.results if r.ref_verdict)
    out.update({f"ref:{v}": n for v, n in sorted(refs.items())})
    return out


def night_summary(night: Night) -> dict[str, Any]:
    return {"id": night.id, "started_at": night.started_at, "finished_at": night.finished_at, "ref": night.ref,
            "sources": list(night.sources), "capsules": len(night.results), "images": night.images,
            "builds": night.builds, "counts": counts(night)}


def result_json(r: CapsuleResult) -> dict[str, Any]:
    return encode(r)  # type: ignore[no-any-return]


def run_json(night: Night) -> dict[str, Any]:
    return {"night": night_summary(night), "results": [result_json(r) for r in night.results]}


def row_json(row: Row) -> dict[str, Any]:
    rate = row.rate
    return {
        "capsule_id": row.capsule_id, "path": row.path, "group": row.group, "verdict": row.verdict,
        "standing": row.standing, "held_nights": row.held, "not_applied": list(row.not_applied),
        "signature": row.signature, "ref_verdict": row.ref_verdict, "in_last_night": row.in_last,
        "first_seen": encode(row.first_seen),
        "last_change": {"night_id": row.last_change.night_id, "started_at": row.last_change.started_at,
                        "from": row.last_change.before, "to": row.last_change.after},
        "rate": None if rate is None else {**encode(rate.rate), "nights": rate.nights},
        "strip": list(row.strip), "command": row.command,
    }


def report_json(view: Attention) -> dict[str, Any]:
    last = view.last
    return {
        "nights": [night_summary(n) for n in view.nights],
        "window": view.window,
        "fixed_after": view.fixed_after,
        "groups": counts_by_group(view.rows),
        "rows": [row_json(r) for r in view.rows],
        "since_last_night": [encode(t) for t in view.transitions],
        "last_night": run_json(last) if last else None,
    }


def history_json(found: tuple[str, list[CapsuleResult]]) -> dict[str, Any]:
    matched, results = found
    first = results[-1] if results else None
    return {"capsule_id": first.capsule_id if first else None, "path": first.path if first else None,
            "matched": matched, "nights": [result_json(r) for r in results]}


def _print(console: Any, line: str, **style: Any) -> None:
    """One line of the text report: capsule paths and reasons in it escaped (textsafe's terminal rule)."""
    console.print(escaped(line), **style)


def show_run(night: Night, console: Any, fixes: Sequence[str] = ()) -> None:
    View(console).table(f"night {night.id}", ("capsule", "format", "verdict", "rate", "at ref", "signature", "why"),
                        [(r.path, r.format, r.verdict, _rate(r), r.ref_verdict or "", r.signature or "", r.reason)
                         for r in night.results], free=6)
    _print(console, _counts_line(night), markup=False)
    broken = [r.path for r in night.results if r.verdict == "broken"]
    if broken:
        _print(console, f"broken ({len(broken)}, no verdict: the capsule's own problem, see why): " +
                      ", ".join(broken[:10]) + (f" and {len(broken) - 10} more" if len(broken) > 10 else ""),
                      markup=False)
    _print(console, f"images: {night.images} planned, {night.builds} built", markup=False)
    for line in fixes:  # --find-fix: the commit that fixed each capsule fixed at --ref
        _print(console, line, markup=False)


STEADY_SHOWN = 20  # steady rows listed by the text report before they are folded (--all lists them)
TRANSITIONS_SHOWN = 50  # "since last night" lines before they are folded (--all lists them)


def show_report(view: Attention, console: Any, show_all: bool = False) -> None:
    if not view.nights or view.last is None:
        _print(console, "no nights recorded yet", markup=False)
        return
    last = view.last
    _print(console, f"{len(view.nights)} night(s); last {last.id} (started {last.started_at}"
                  f"{', unfinished' if last.finished_at is None else ''}); rates over the last "
                  f"{min(view.window, len(view.nights))} night(s)", markup=False)
    _print(console, _counts_line(last), markup=False)
    _print(console, "since last night:" if view.transitions else "since last night: nothing changed", markup=False)
    listed = view.transitions if show_all else view.transitions[:TRANSITIONS_SHOWN]
    for t in listed:
        _print(console, f"  {t.kind}: {t.path} ({t.before} -> {t.after})" + (f" {t.detail}" if t.detail else ""),
                      markup=False)
    if len(listed) < len(view.transitions):
        _print(console, f"  and {len(view.transitions) - len(listed)} more (--all lists them; each is a row below)",
                      markup=False)
    for group in GROUPS:
        rows = view.group(group)
        if not rows:
            continue
        shown = rows if show_all or group != "steady" or len(rows) <= STEADY_SHOWN else ()
        _print(console, f"{GROUP_LABELS[group]} ({len(rows)})", markup=False, style="bold")
        if shown:
            _rows_table(shown, console)
        else:
            by = Counter(r.verdict for r in rows)
            _print(console, "  " + ", ".join(f"{n} {v}" for v, n in by.most_common()) +
                          " (folded: --all lists them, --json has every row)", markup=False)


def _rows_table(rows: Sequence[Row], console: Any) -> None:
    def verdict(r: Row) -> Styled:
        return Styled(verdict_said(r), facts_of(r.verdict).style if r.news else "")

    View(console).table("", ("capsule", "verdict", "first seen", "last change", "rate (window)", "reproduce here"),
                        [(r.path, verdict(r), _day(r.first_seen.started_at), _change(r), _window_rate(r), r.command)
                         for r in rows], free=5)
    for r in rows:
        if r.group == "never-reproduced" and r.not_applied:
            _print(console, f"  {r.path}: not replayed exactly: " + "; ".join(r.not_applied[:NOT_APPLIED_SHOWN]) +
                          (f" and {len(r.not_applied) - NOT_APPLIED_SHOWN} more" if len(r.not_applied) >
                           NOT_APPLIED_SHOWN else ""), markup=False)


NOT_APPLIED_SHOWN = 5  # fidelity rows named per capsule never reproduced here (--json has them all)


def verdict_said(r: Row) -> str:
    """A row's verdict in words: a capsule held as reproducing says so, and its REF verdict."""
    said = r.verdict
    if r.held_said:
        said = f"{r.verdict} ({r.held_said})"
    return said + (f", at ref {r.ref_verdict}" if r.ref_verdict else "")


def _day(stamp: str) -> str:
    return stamp[:10]


def _change(r: Row) -> str:
    c = r.last_change
    return f"{_day(c.started_at)} {c.before} -> {c.after}"


def _window_rate(r: Row) -> str:
    if r.rate is None:
        return ""
    x = r.rate.rate
    return f"{x.failed}/{x.runs} ({x.span()}), {r.rate.nights} night(s)"


def show_history(results: list[CapsuleResult], console: Any) -> None:
    View(console).table(f"capsule {results[-1].capsule_id} ({results[-1].path})",
                        ("night", "verdict", "rate", "at ref", "signature", "exit", "image", "why"),
                        [(r.night_id, r.verdict, _rate(r), f"{r.ref}: {r.ref_verdict}" if r.ref_verdict else "",
                          r.signature or "", "" if r.exit_code is None else str(r.exit_code),
                          (r.image_digest or "")[:19], r.reason) for r in results], free=7)


def _counts_line(night: Night) -> str:
    c = counts(night)
    return "verdicts: " + (", ".join(f"{n} {v}" for v, n in c.items()) or "none")


def _rate(r: CapsuleResult) -> str:
    if r.rate is None:
        return ""
    return f"{r.rate.failed}/{r.rate.runs} ({r.rate.span()})"
