"""The farm's HTML pages in a real headless Chromium (Debian's `chromium` package): the DOM the
browser built after the page's own script ran (under its Content-Security-Policy), the
computed colours of the rows, and Chromium's own network log. A screenshot is kept as the
test's artifact (its path is printed). In CI (CI or REPLAY_REQUIRE_ENGINE=1) a missing
Chromium is a failure, never a skip."""
from __future__ import annotations

import base64
import hashlib
import json
import shlex
from pathlib import Path

import pytest
from lxml import html as lxml_html

from runner.farm.attention import Attention
from runner.report.html import write_site
from runner.verdict.vocabulary import FACTS, STEADY_COLOUR
from tests.services import browse
from tests.support.reports import sample_history, view_of
from tests.support.reports import HOSTILE

pytestmark = pytest.mark.integration

# MACHINE-NOTES section 10: the flags that work here (as root, no GPU, no display); the
# browser's own background services off, so its network log is about the page.
BLANK_PNG_BYTES = 20_000  # a blank 1280x2400 page compresses to ~8 kB

# The test's probe, appended to a copy of the page (its hash added to the page's policy):
# it records what Chromium computed, then uses the page's filter box and a sortable column.
PROBE = """
document.querySelectorAll("tr[data-capsule]").forEach(function (tr) {
  var badge = tr.querySelector(".badge");
  tr.setAttribute("data-colour", getComputedStyle(badge).backgroundColor);
});
var box = document.getElementById("filter");
box.value = "flaky"; box.dispatchEvent(new Event("input"));
document.body.setAttribute("data-shown-after-filter", Array.prototype.filter.call(
  document.querySelectorAll("tr[data-capsule]"), function (tr) { return !tr.hidden; }).length);
box.value = ""; box.dispatchEvent(new Event("input"));
document.querySelector("th[data-sort='1']").click(); document.querySelector("th[data-sort='1']").click();
document.body.setAttribute("data-probe", "ran");
"""


def rgb(hex_colour: str) -> str:
    h = hex_colour.lstrip("#")
    return "rgb({}, {}, {})".format(*(int(h[i:i + 2], 16) for i in (0, 2, 4)))


def page_requests(netlog: Path) -> list[str]:
    """URLs the page asked for (the browser's own requests say initiator "not an origin")."""
    doc = json.loads(netlog.read_text())
    return [e["params"]["url"] for e in doc["events"]
            if "url" in e.get("params", {}) and "method" in e["params"]
            and e["params"].get("initiator") != "not an origin"
            and not e["params"]["url"].startswith(("file:", "data:"))]


@pytest.fixture(scope="module")
def view() -> Attention:
    return view_of(sample_history())


@pytest.fixture
def site(view: Attention, tmp_path: Path) -> Path:
    path = tmp_path / "farm.html"
    write_site(path, view)
    return path


def probed(page: Path) -> Path:
    text = page.read_text()
    digest = base64.b64encode(hashlib.sha256(PROBE.encode()).digest()).decode()
    text = text.replace("script-src '", f"script-src 'sha256-{digest}' '", 1)
    text = text.replace("</body>", f"<script>{PROBE}</script></body>", 1)
    out = page.with_name("probed-" + page.name)
    out.write_text(text)
    return out


def test_chromium_shows_attention_order_steady_colours_and_the_command(
        chromium: str, site: Path, view: Attention, tmp_path: Path) -> None:
    dom = lxml_html.document_fromstring(browse(chromium, probed(site), tmp_path, "--dump-dom").stdout)
    assert dom.body.get("data-probe") == "ran"
    rows = dom.xpath("//table[@id='capsules']//tr[@data-capsule]")
    # the page's own script ran under its policy: the filter box hid all but the flaky rows
    assert int(dom.body.get("data-shown-after-filter")) == sum("flaky" in r.verdict for r in view.rows)
    # sorted twice by path (up, then down), rows stayed in their groups, the groups in attention order
    groups = [r.get("data-group") for r in rows]
    assert groups == [r.group for r in view.rows]
    assert [b.get("data-group") for b in dom.xpath("//table[@id='capsules']/tbody")] == [
        "changed", "newly-flaky", "still-flaky", "never-reproduced", "steady"]
    by = {r.get("data-capsule"): r for r in rows}
    for row in view.rows:
        got = by[row.path].get("data-colour")
        if row.group == "steady" and not FACTS[row.verdict].trouble:  # type: ignore[index]
            assert got == rgb(STEADY_COLOUR), (row.path, got)  # steady `reproduced` is not red
        else:
            assert got == rgb(FACTS[row.verdict].colour), (row.path, got)  # type: ignore[index]
    assert by["caps/steady.json"].get("data-colour") != rgb(FACTS["reproduced"].colour)
    cmd = by[HOSTILE].xpath(".//code[@class='cmd']")[0].text_content()
    want = next(r.command for r in view.rows if r.path == HOSTILE)
    assert cmd == want and shlex.split(cmd.split(" --env ")[0])[:2] == ["replay", HOSTILE]
    assert not dom.xpath("//script[contains(., 'alert')]")  # the hostile path stayed text


def test_no_page_makes_a_network_request(chromium: str, site: Path, tmp_path: Path) -> None:
    pages = [site, *sorted((tmp_path / "farm-pages").glob("*.html"))[:3]]
    for page in pages:
        log = tmp_path / f"net-{page.stem}.json"
        browse(chromium, page, tmp_path, f"--log-net-log={log}", "--dump-dom")
        assert page_requests(log) == [], page.name
    # the check itself sees a page's request: the same log of a page that loads an image
    control = tmp_path / "control.html"
    control.write_text('<!DOCTYPE html><img src="http://127.0.0.1:9/pixel.png">')
    log = tmp_path / "net-control.json"
    browse(chromium, control, tmp_path, f"--log-net-log={log}", "--dump-dom")
    assert page_requests(log) == ["http://127.0.0.1:9/pixel.png"]


def test_chromium_screenshot_is_kept(chromium: str, site: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "farm-report.png"
    browse(chromium, site, tmp_path, "--window-size=1280,2400", f"--screenshot={png}")
    assert png.is_file(), "Chromium wrote no screenshot"
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > BLANK_PNG_BYTES, f"the screenshot looks blank ({len(data)} bytes)"
    with capsys.disabled():
        print(f"\nfarm HTML screenshot: {png}")
