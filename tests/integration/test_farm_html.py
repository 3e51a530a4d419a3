"""The farm's HTML page in a real headless Chromium (Debian's `chromium` package): the DOM
the browser built is checked for the counts and the rows, and a screenshot is kept as the
test's artifact (its path is printed). In CI (CI or REPLAY_REQUIRE_ENGINE=1) a missing
Chromium is a failure, never a skip."""
from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path

import pytest
from lxml import html as lxml_html

from runner.farm.html import render_html
from runner.farm.model import History
from tests.unit.farm.test_html import NIGHTS, sample_history
from tests.unit.farm.test_junit import HOSTILE

pytestmark = pytest.mark.integration

# MACHINE-NOTES section 10: the flags that work here (as root, no GPU, no display).
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
         "--hide-scrollbars")
BLANK_PNG_BYTES = 50_000  # a blank 1280x2400 page compresses to ~8 kB; this one to ~300 kB


def browse(chromium: str, page: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # A profile of its own: parallel test runs never share Chromium's singleton lock.
    run = subprocess.run([chromium, *FLAGS, f"--user-data-dir={tmp / 'profile'}", *args, page.as_uri()],
                         capture_output=True, text=True, timeout=180, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    return run


@pytest.fixture(scope="module")
def history() -> History:
    return sample_history()


@pytest.fixture
def page(history: History, tmp_path: Path) -> Path:
    path = tmp_path / "farm-report.html"
    path.write_text(render_html(history), encoding="utf-8")
    return path


def test_chromium_shows_the_counts_and_every_row(chromium: str, page: Path, history: History,
                                                 tmp_path: Path) -> None:
    dom = lxml_html.document_fromstring(browse(chromium, page, tmp_path, "--dump-dom").stdout)
    last = history.nights[-1]
    cards = {c.get("data-verdict"): int(c.get("data-count"))
             for c in dom.xpath("//section[@id='summary']//*[@data-verdict]")}
    assert {v: n for v, n in cards.items() if n} == dict(Counter(r.verdict for r in last.results))
    shown = [c.findtext("span[@class='count']") for c in dom.xpath("//section[@id='summary']//*[@data-verdict]")]
    assert shown == [str(n) for n in cards.values()]  # the number on the card is the count
    paths = sorted({r.path for n in history.nights for r in n.results})
    rows = dom.xpath("//section[@id='capsules']//tbody/tr")
    assert sorted(r.get("data-capsule") for r in rows) == paths
    for row in rows:
        assert [rect.get("data-night") for rect in row.xpath(".//svg//rect")] == list(NIGHTS)
    assert len(dom.xpath("//article[contains(@class, 'capsule')]")) == len(paths)
    kinds = {li.get("data-kind") for li in dom.xpath("//section[@id='changes']//li")}
    assert kinds == {t.kind for t in history.transitions}
    # The hostile path was parsed by a real browser as text: no script element came of it.
    assert not dom.xpath("//script")
    assert dom.xpath("//tr[@data-capsule=$p]", p=HOSTILE)


def test_chromium_screenshot_is_kept(chromium: str, page: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "farm-report.png"
    browse(chromium, page, tmp_path, "--window-size=1280,2400", f"--screenshot={png}")
    assert png.is_file(), "Chromium wrote no screenshot"
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > BLANK_PNG_BYTES, f"the screenshot looks blank ({len(data)} bytes)"
    with capsys.disabled():
        print(f"\nfarm HTML screenshot: {png}")
