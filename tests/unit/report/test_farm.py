"""The farm's text and HTML reports, and its progress lines, with a capsule file name holding
terminal controls: shown as escapes on a terminal, removed from HTML attributes and titles."""
from __future__ import annotations

import io
import re

from lxml import html as lxml_html
from rich.console import Console

from runner.farm.attention import Attention, build, mark_of
from runner.farm.records import Night
from runner.farm.night_progress import FarmProgress
from runner.report.farm_view import show_report, show_run
from runner.report.html import render_site
from tests.unit.farm.records import night, result

# a window title, a cleared scrollback, a bell, a C1 CSI, a bidi override, a line separator
EVIL = "caps/\x1b]0;owned\x07\x1b[3J\x9b2J\u202enosj.json\u2028x"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _console() -> Console:
    return Console(file=io.StringIO(), width=200, color_system=None, highlight=False, soft_wrap=True)


def _printed(console: Console) -> str:
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(out, str)
    return out


def _nights() -> tuple[Night, Night]:
    first = night("n1", "2026-12-01T03:00:00Z", results=(result("n1", "c1", "reproduced", path=EVIL),))
    second = night("n2", "2026-12-02T03:00:00Z", results=(result("n2", "c1", "broken", path=EVIL,
                                                                  reason=f"cannot read {EVIL}"),))
    return first, second


def _view() -> Attention:
    first, second = _nights()
    return build((first, second), [[mark_of(r) for r in first.results]], lambda i: {"c1": (EVIL, False)})


def test_the_run_summary_shows_a_hostile_file_name_escaped() -> None:
    console = _console()
    show_run(_nights()[1], console)
    out = _printed(console)
    assert "broken (1" in out and "\\x1b]0;owned\\x07" in out
    assert not RAW.search(out)


def test_the_progress_line_shows_a_hostile_file_name_escaped() -> None:
    console = _console()
    progress = FarmProgress(console)
    progress.start(1, 0)
    progress.capsule_done(_nights()[1].results[0])
    out = _printed(console)
    assert "[1/1] caps/\\x1b]0;owned" in out and not RAW.search(out)


def test_since_last_night_shows_a_hostile_file_name_escaped() -> None:
    console = _console()
    show_report(_view(), console)
    out = _printed(console)
    assert "since last night:" in out and "\\u202e" in out
    assert not RAW.search(out)


def test_the_html_keeps_no_control_in_attributes_or_titles() -> None:
    for name, text in render_site(_view()).items():
        doc = lxml_html.document_fromstring(text)
        for el in doc.iter():
            for attr, value in el.attrib.items():
                assert not RAW.search(value), (name, el.tag, attr)
        assert not RAW.search(doc.findtext(".//title") or ""), name
    capsule_pages = [t for n, t in render_site(_view()).items() if n != "farm.html"]
    assert capsule_pages and all("nosj.json" in lxml_html.document_fromstring(t).findtext(".//title")
                                 for t in capsule_pages)
