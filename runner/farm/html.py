"""The farm's HTML report: one static, self-contained page (inline CSS and SVG, no script,
no network) rendered from templates/farm/report.html.j2.

Paths, signatures, reasons and key lines come from capsules someone else recorded, so the
template is autoescaped and a Content-Security-Policy forbids scripts and every remote
load. Values never reach an href or a class unvetted: anchors are hashes, classes come
from the verdict vocabulary. The page depends only on the History (no clock, no host), so
the same history renders the same bytes.
"""
from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import jinja2

from ..errors import UsageError
from ..resources import templates_dir
from .junit import recorded_pass
from .model import CapsuleResult, History, Night, Transition

# The order cards and the legend show: the recorded commit's verdicts, then REF's.
VERDICTS = ("reproduced", "different-failure", "flaky", "not-reproduced", "inconclusive", "broken",
            "infra-error", "fixed", "not-fixed")
CORE = VERDICTS[:7]  # always shown in the summary, even at zero
REF_VERDICTS = ("fixed", "not-fixed", "inconclusive")
LABELS = {"different-failure": "different failure", "not-reproduced": "not reproduced",
          "infra-error": "infra error", "not-fixed": "not fixed"}
# What each verdict means, for the legend and the tooltips.
MEANINGS = {
    "reproduced": "the recorded outcome came back",
    "different-failure": "fails, with another signature",
    "flaky": "some attempts reproduce, some do not",
    "not-reproduced": "the recorded failure did not come back at its commit",
    "inconclusive": "no attempt decided (timeouts)",
    "broken": "the capsule cannot be replayed for its own reasons",
    "infra-error": "the engine or a package source failed; retried next night",
    "fixed": "passes at REF", "not-fixed": "still fails at REF",
}
# An attempt's classification, as the attempts table says it.
OUTCOMES = {"recorded": "as recorded", "pass": "passed", "other": "failed otherwise", "inconclusive": "inconclusive"}
_COMMIT = re.compile(r"[0-9a-f]{13,64}")
KINDS = ("newly-reproducing", "fixed", "flaky", "signature-changed", "broken", "new", "other")
KIND_LABELS = {"newly-reproducing": "newly reproducing", "signature-changed": "signature changed",
               "new": "new capsules", "other": "other changes"}


@dataclass(frozen=True)
class Cell:
    """One night in a capsule's strip; verdict None: the capsule was not in that night."""

    night: Night
    result: CapsuleResult | None

    @property
    def verdict(self) -> str | None:
        return self.result.verdict if self.result else None

    @property
    def title(self) -> str:
        head = f"{_when(self.night.started_at)} (night {self.night.id})"
        r = self.result
        if r is None:
            return f"{head}: not in this night"
        tail = f", at {r.ref or 'REF'}: {r.ref_verdict}" if r.ref_verdict else ""
        return f"{head}: {r.verdict}" + (f", {r.signature}" if r.signature else "") + tail


@dataclass(frozen=True)
class Row:
    """One capsule: its latest result among the nights shown, and its strip."""

    anchor: str
    latest: CapsuleResult
    latest_night: Night
    in_last: bool
    cells: tuple[Cell, ...]

    @property
    def seen(self) -> tuple[Cell, ...]:
        return tuple(c for c in self.cells if c.result is not None)


@dataclass(frozen=True)
class Group:
    kind: str
    label: str
    items: tuple[Transition, ...]


def render_html(history: History, since: int | None = None) -> str:
    """The page for the last `since` nights (all when None); the summary and "since last
    night" are always about the last night."""
    if since is not None and since < 1:
        raise UsageError(f"--since must be at least 1 night, not {since}")
    nights = history.nights[-since:] if since else history.nights
    last = nights[-1] if nights else None
    rows = _rows(nights)
    anchors = {r.latest.capsule_id: r.anchor for r in rows}
    return _template().render(
        last=last, nights=nights, total_nights=len(history.nights), rows=rows, anchors=anchors,
        counts=_counts(last, lambda r: r.verdict, CORE, VERDICTS),
        ref_counts=_counts(last, lambda r: r.ref_verdict, (), REF_VERDICTS) if last and last.ref else [],
        groups=_groups(history.transitions), verdicts=VERDICTS, meanings=MEANINGS,
    )


def _rows(nights: Sequence[Night]) -> list[Row]:
    by_capsule: dict[str, dict[str, CapsuleResult]] = {}
    for night in nights:
        for r in night.results:
            by_capsule.setdefault(r.capsule_id, {})[night.id] = r
    rows = []
    for capsule_id, results in by_capsule.items():
        cells = tuple(Cell(n, results.get(n.id)) for n in nights)
        latest = next(c for c in reversed(cells) if c.result is not None)
        rows.append(Row(anchor_of(capsule_id), latest.result, latest.night,  # type: ignore[arg-type]
                        latest.night is nights[-1], cells))
    return sorted(rows, key=lambda r: (r.latest.path, r.latest.capsule_id))


def anchor_of(capsule_id: str) -> str:
    """A fragment id for a capsule's section: a hash, so a hostile id never shapes markup."""
    return "capsule-" + hashlib.sha256(capsule_id.encode("utf-8", "replace")).hexdigest()[:16]


def _counts(night: Night | None, verdict_of: Any, always: Iterable[str], order: Sequence[str]) -> list[tuple[str, int]]:
    seen = Counter(v for v in (verdict_of(r) for r in (night.results if night else ())) if v)
    known = [(v, seen[v]) for v in order if v in always or seen[v]]
    return known + sorted((v, c) for v, c in seen.items() if v not in order)  # a verdict this page predates


def _groups(transitions: Iterable[Transition]) -> list[Group]:
    by_kind: dict[str, list[Transition]] = {}
    for t in transitions:
        by_kind.setdefault(t.kind if t.kind in KINDS else "other", []).append(t)
    return [Group(k, KIND_LABELS.get(k, k), tuple(sorted(by_kind[k], key=lambda t: t.path)))
            for k in KINDS if k in by_kind]


def _template() -> jinja2.Template:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir())), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(when=_when, secs=_secs, label=label, vclass=vclass, rclass=rclass, ref=short_ref,
                       pct=lambda x: f"{x:.0%}", outcome=lambda c: OUTCOMES.get(c, c or "—"))
    return env.get_template("farm/report.html.j2")


def label(verdict: str | None) -> str:
    return "—" if verdict is None else LABELS.get(verdict, verdict)


def vclass(verdict: str | None) -> str:
    """The CSS class of a verdict: only the vocabulary's names ever become a class."""
    if verdict is None:
        return "v-absent"
    return f"v-{verdict}" if verdict in VERDICTS else "v-unknown"


def rclass(result: CapsuleResult | None) -> str:
    """A result's class: its verdict's, except a recorded pass that passed (not a failure)."""
    if result is not None and recorded_pass(result):
        return "v-reproduced-pass"
    return vclass(result.verdict if result else None)


def short_ref(ref: str) -> str:
    """A commit id as its first 12 digits (headers stay narrow); a branch name as it is."""
    return ref[:12] if _COMMIT.fullmatch(ref) else ref


def _when(stamp: str | None) -> str:
    if not stamp:
        return "—"
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    if moment.tzinfo is not None:  # RFC 3339 may carry any offset; the page speaks UTC
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _secs(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"
