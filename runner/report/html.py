"""The farm's HTML: a summary page in attention order, paged past PER_PAGE capsules, and a
page per capsule where the summary links to one — every page self-contained and offline
(inline CSS, one small inline script allowed by its hash, nothing loaded from anywhere).

Paths, signatures, reasons and key lines come from capsules someone else recorded, so the
templates are autoescaped; values never reach an href or a class unvetted (page names are
hashes, classes come from the verdict vocabulary). The pages depend only on the history
(no clock, no host): the same history renders the same bytes.
"""
from __future__ import annotations

import base64
import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

from markupsafe import Markup, escape

from ..errors import UsageError
from ..resources import templates_dir
from ..verdict.vocabulary import FACTS, FARM_ORDER, STEADY_COLOUR, facts_of
from ..farm.attention import GROUP_LABELS, GROUPS, Attention, Change, Row, WindowRate
from ..farm.records import Night
from ..farm.attention import counts as group_counts
from .templates import add_filters, environment

PER_PAGE = 1000  # capsules a page, in attention order (the steady ones are the last, so the ones paged)
CAPSULE_PAGES = 2000  # capsule pages at most: the first rows in attention order that are news, or all when few
ALL_PAGES_UPTO = 500  # a history this small gets a page for every capsule, steady ones too
TRANSITIONS_SHOWN = 200  # "since last night" on the summary; the rows hold every change
MARKER = ".replay-farm-pages"  # in the pages folder: replay wrote it, so replay may clear it
OUTCOMES = {"recorded": "as recorded", "pass": "passed", "other": "failed otherwise", "inconclusive": "inconclusive"}
_COMMIT = re.compile(r"[0-9a-f]{13,64}")
__all__ = ["STEADY_COLOUR", "Site", "page_name", "render_site", "write_site"]


Site = dict[str, str]  # a file name relative to the summary's folder -> its text


def page_name(capsule_id: str) -> str:
    """A capsule page's file name: a hash, so a hostile id never shapes a path or markup."""
    return "capsule-" + hashlib.sha256(capsule_id.encode("utf-8", "replace")).hexdigest()[:16] + ".html"


def render_site(view: Attention, summary: str = "farm.html") -> Site:
    """Every page: `summary`, `<stem>-pages/page-N.html` past the first PER_PAGE rows, and
    `<stem>-pages/capsule-....html` for the capsules the pages link to."""
    folder = Path(summary).stem + "-pages"
    rows = view.rows
    chunks = [rows[i:i + PER_PAGE] for i in range(0, len(rows), PER_PAGE)] or [()]
    linked = [r for r in rows if r.news or len(rows) <= ALL_PAGES_UPTO][:CAPSULE_PAGES]
    pages = {r.capsule_id: f"{folder}/{page_name(r.capsule_id)}" for r in linked}
    page_links = [summary, *(f"{folder}/page-{n}.html" for n in range(2, len(chunks) + 1))]
    env = environment()
    out: Site = {}
    shared = _shared(view)
    for n, chunk in enumerate(chunks, 1):
        home = summary if n == 1 else f"../{summary}"
        local = pages if n == 1 else {k: v.split("/", 1)[1] for k, v in pages.items()}
        links = page_links if n == 1 else [f"../{summary}", *(p.split("/", 1)[1] for p in page_links[1:])]
        out[page_links[n - 1]] = env.get_template("farm/summary.html.j2").render(
            **shared, page_no=n, page_count=len(chunks), page_links=[quote(x) for x in links], home=quote(home),
            groups=_grouped(chunk), pages=local, total_rows=len(rows), per_page=PER_PAGE)
    capsule = env.get_template("farm/capsule.html.j2")
    for r in linked:
        out[pages[r.capsule_id]] = capsule.render(**shared, row=r, home=quote(f"../{summary}"))
    return out


def write_site(path: Path, view: Attention) -> list[Path]:
    """Write the pages next to `path` (its `<stem>-pages/` folder cleared of the pages an
    earlier report wrote); the files written."""
    path = path.expanduser()
    if path.is_dir():
        raise UsageError(f"--html {path}: is a directory (name the summary page's file)")
    site = render_site(view, path.name)
    folder = path.parent / (path.stem + "-pages")
    try:
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            raise UsageError(f"--html {path}: {folder} is in the way (not a folder replay wrote)")
        if folder.is_dir():
            if not (folder / MARKER).is_file() and any(folder.iterdir()):
                raise UsageError(f"--html {path}: {folder} exists and replay did not write it; move it away")
            for old in folder.glob("*.html"):
                old.unlink()
        written = []
        for name, text in site.items():
            target = path.parent / name
            if target.parent != path.parent and not target.parent.is_dir():
                target.parent.mkdir(parents=True)
                (target.parent / MARKER).write_text("pages of `replay farm report --html`\n", encoding="utf-8")
            tmp = target.with_name(target.name + ".tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(target)  # a reader never sees half a page
            written.append(target)
        return written
    except OSError as exc:
        raise UsageError(f"--html {path}: cannot write ({exc.strerror or exc})") from None


def _shared(view: Attention) -> dict[str, Any]:
    last = view.last
    c = Counter(r.verdict for r in (last.results if last else ()))
    return dict(last=last, nights=view.nights, window=view.window, window_nights=view.window_nights,
                window_days=tuple(_day(n.started_at) for n in view.window_nights),
                transitions=view.transitions[:TRANSITIONS_SHOWN],
                more_transitions=max(0, len(view.transitions) - TRANSITIONS_SHOWN),
                group_labels=GROUP_LABELS,
                group_counts=list(group_counts(view.rows).items()), group_totals=group_counts(view.rows),
                counts=[(v, c[v]) for v in FARM_ORDER if c[v]] + sorted((v, n) for v, n in c.items()
                                                                      if v not in FARM_ORDER),
                facts=list(FACTS.items()), script=_script(), script_hash=_script_hash())


def _grouped(rows: Sequence[Row]) -> list[tuple[str, list[Row]]]:
    by: dict[str, list[Row]] = {}
    for r in rows:
        by.setdefault(r.group, []).append(r)
    return [(g, by[g]) for g in GROUPS if g in by]


@lru_cache(maxsize=1)
def _script() -> str:
    return (templates_dir() / "farm" / "report.js").read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _script_hash() -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(_script().encode("utf-8")).digest()).decode("ascii")


def strip_html(strip: Sequence[str | None], days: Sequence[str]) -> Markup:
    """A row's verdicts over the window as markup, built once per (verdict, night): the page's
    largest part, so not through the template's per-value escaping."""
    return Markup("".join(_cell(v, d) for v, d in zip(strip, days)))


@lru_cache(maxsize=8192)
def _cell(verdict: str | None, day: str) -> str:
    return f'<i class="{vclass(verdict)}" title="{escape(day)}: {escape(label(verdict))}"></i>'


@lru_cache(maxsize=256)
def label(verdict: str | None) -> str:
    if verdict is None:
        return "—"
    if verdict in ("new", "not-judged"):
        return verdict.replace("-", " ")
    return FACTS[verdict].label if verdict in FACTS else verdict  # type: ignore[index]


@lru_cache(maxsize=256)
def vclass(verdict: str | None) -> str:
    """The CSS class of a state: only the vocabulary's names ever become a class."""
    if verdict is None:
        return "v-absent"
    return f"v-{verdict}" if verdict in FACTS or verdict in ("new", "not-judged") else "v-unknown"


@lru_cache(maxsize=1)
def _cells() -> Any:
    """The shared cells' macros (templates/farm/cells.html.j2)."""
    return environment().get_template("farm/cells.html.j2").module


# Each cell below is rendered by its macro once per distinct value (a page of 10,000 rows
# shares a few verdicts, night stamps and rates), then kept.
@lru_cache(maxsize=4096)
def _verdict_cell(verdict: str, css: str, news: bool, ref_verdict: str | None, ref: str | None,
                  held: str) -> Markup:
    return Markup(_cells().verdict(verdict, css, news, ref_verdict, ref, held))


@lru_cache(maxsize=4096)
def _day_cell(stamp: str) -> Markup:
    return Markup(_cells().day(stamp))


@lru_cache(maxsize=4096)
def _change_cell(change: Change) -> Markup:
    return Markup(_cells().change(change.started_at, change.before, change.after))


@lru_cache(maxsize=8192)
def _rate_cell(rate: WindowRate | None) -> Markup:
    if rate is None:
        return Markup(_cells().rate(0, 0, 0.0, "", 0))
    return Markup(_cells().rate(rate.rate.failed, rate.rate.runs, rate.rate.low, rate.rate.span(), rate.nights))


@lru_cache(maxsize=16384)
def _night_cell(night_id: str, started_at: str, mark: tuple[Any, ...]) -> Markup:
    _, verdict, signature, _, ref_verdict, rate_k, rate_n, _ = mark
    return Markup(_cells().night(night_id, started_at, verdict, signature, rate_k, rate_n, ref_verdict))


def verdict_cell(row: Row, ref: str | None) -> Markup:
    held = row.held_said
    return _verdict_cell(row.verdict, rowclass(row), row.news, row.ref_verdict, ref, held)


def night_cell(mark: tuple[Any, ...], night: Night) -> Markup:
    return _night_cell(night.id, night.started_at, (None, *mark[1:]))


def rowclass(row: Row) -> str:
    """Colour means change or trouble: a steady state that needs no one is grey."""
    return vclass(row.verdict) if row.news else "v-steady"


def short_ref(ref: str) -> str:
    return ref[:12] if _COMMIT.fullmatch(ref) else ref


@lru_cache(maxsize=8192)  # a page shows the same few nights' stamps thousands of times
def _when(stamp: str | None) -> str:
    if not stamp:
        return "—"
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _day(stamp: str | None) -> str:
    return _when(stamp)[:10] if stamp else "—"


def _secs(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


add_filters(verdict_cell=verdict_cell, seen_cell=lambda seen: _day_cell(seen.started_at), change_cell=_change_cell,
            rate_cell=_rate_cell, night_cell=night_cell, strip=strip_html, when=_when, day=_day, secs=_secs,
            label=label, meaning=lambda v: facts_of(v).meaning, vclass=vclass, rowclass=rowclass, ref=short_ref, kind=lambda k: k.replace("-", " "),
            pct=lambda x: f"{x:.0%}", outcome=lambda c: OUTCOMES.get(c, c or "—"))
