"""The farm's attention view and its HTML: the order, the colours, the transitions once, the
command, the pages; escaping of what capsules say; nothing that loads from the network.
(tests/integration/test_farm_html.py loads the same pages in a real Chromium.)"""
from __future__ import annotations

import base64
import hashlib
import re
import shlex
from dataclasses import replace
from pathlib import Path

import pytest
from lxml import html as lxml_html

from runner.errors import UsageError
from runner.report import html as farm_html
from runner.farm.attention import Attention, replay_command
from runner.report.html import page_name, render_site, write_site
from runner.farm.records import History, Night
from runner.verdict.vocabulary import FACTS

from tests.support.reports import HOSTILE, result
from tests.support.reports import NIGHTS, OPTIONS, sample_history, view_of

def page(view: Attention | None = None, name: str = "farm.html") -> lxml_html.HtmlElement:
    return lxml_html.document_fromstring(render_site(view or view_of(sample_history()))[name])


def rows_of(doc: lxml_html.HtmlElement) -> list[lxml_html.HtmlElement]:
    return doc.xpath("//table[@id='capsules']//tr[@data-capsule]")


def test_rows_come_in_attention_order() -> None:
    doc = page()
    got = [(r.get("data-group"), r.get("data-capsule")) for r in rows_of(doc)]
    assert [g for g, _ in got] == ["changed", "changed", "newly-flaky", "still-flaky", "never-reproduced",
                                   "steady", "steady", "steady", "steady"]
    assert {p for g, p in got if g == "changed"} == {"caps/new-failure.json", "caps/changed.json"}
    steady = [p for g, p in got if g == "steady"]
    assert steady[0] == "caps/broken-steady.json"  # trouble first among the steady
    assert steady[-1] == "caps/gone.json"  # not in the last night: last of all
    groups = [b.get("data-group") for b in doc.xpath("//table[@id='capsules']/tbody")]
    assert groups == ["changed", "newly-flaky", "still-flaky", "never-reproduced", "steady"]


def test_colour_means_change_or_trouble() -> None:
    doc = page()

    def badge(path: str) -> str:
        (row,) = doc.xpath("//tr[@data-capsule=$p]", p=path)
        return row.xpath(".//span[contains(@class, 'badge')]")[0].get("class")

    assert badge("caps/steady.json") == "badge v-steady"  # a failure that still reproduces: not alarm red
    assert badge("caps/passes.json") == "badge v-not-reproduced"  # never reproduced here: someone should look
    assert badge("caps/changed.json") == "badge v-reproduced"
    assert badge("caps/new-failure.json") == "badge v-reproduced"
    assert badge("caps/newly-flaky.json") == "badge v-flaky"
    assert badge("caps/broken-steady.json") == "badge v-broken"  # trouble stays coloured
    style = doc.xpath("//style")[0].text_content()
    for verdict, facts in FACTS.items():  # the colours are the one table's
        assert f".v-{verdict} {{ --c: {facts.colour}; }}" in style


def test_each_row_has_first_seen_last_change_rate_and_command() -> None:
    view = view_of(sample_history())
    by = {r.path: r for r in view.rows}
    changed = by["caps/changed.json"]
    assert (changed.first_seen.night_id, changed.last_change.night_id) == (NIGHTS[0], NIGHTS[2])
    assert (changed.last_change.before, changed.last_change.after) == ("different-failure", "reproduced")
    assert by["caps/new-failure.json"].last_change.before == "new"
    still = by["caps/still-flaky.json"]
    assert (still.first_seen.night_id, still.last_change.night_id, still.last_change.before) == (NIGHTS[1], NIGHTS[1], "new")
    rate = by["caps/steady.json"].rate
    assert rate is not None and (rate.rate.failed, rate.rate.runs, rate.nights) == (9, 9, 3)
    assert rate.rate.low > 0.6 and rate.rate.high == 1.0
    assert by["caps/changed.json"].strip == ("different-failure", "different-failure", "reproduced")
    narrow = {r.path: r for r in view_of(sample_history(), window=1).rows}["caps/changed.json"]
    assert narrow.rate is not None and (narrow.rate.rate.failed, narrow.rate.rate.runs, narrow.rate.nights) == (3, 3, 1)
    assert narrow.strip == ("reproduced",)
    doc = page()
    (row,) = doc.xpath("//tr[@data-capsule='caps/changed.json']")
    text = " ".join(row.text_content().split())
    assert "2026-11-29" in text and "2026-12-01 different failure → reproduced" in text
    assert "3/3 (at least 44 %) 1 night" in text  # the nights that failed another way stored no rate


def test_the_command_is_shell_quoted_and_reproduces_with_the_nights_options() -> None:
    cmd = replay_command(HOSTILE + " $(rm -rf ~)", True, OPTIONS)
    assert shlex.split(cmd.split(" --env ")[0]) == [
        "replay", HOSTILE + " $(rm -rf ~)", "--repo", "/srv/mirrors/app.git", "--mirror",
        "https://git.example.com/=/srv/mirrors/", "--trust-key", "/etc/replay/team key.pem", "--require-valid",
        "--memory", "2g"]  # the night's --mirror rules too (issue 31); its K is no exact --attempts
    assert cmd.endswith(' --env "API_TOKEN=$API_TOKEN"')  # the value is the shell's, never stored
    assert replay_command("-n.json", False, {}) == "replay ./-n.json"  # never read as an option
    assert replay_command("a.json", False, {"repo": "/r"}) == "replay a.json"  # no commit: no --repo
    assert replay_command("a.json", False, {"confidence": 0.99}) == "replay a.json --confidence 0.99"
    assert replay_command("a.json", False, {"confidence": 0.95}) == "replay a.json"
    doc = page()
    (row,) = doc.xpath("//tr[@data-capsule=$p]", p=HOSTILE)
    (code,) = row.xpath(".//code[@class='cmd']")
    assert shlex.split(code.text_content().split(" --env ")[0])[1] == HOSTILE


def test_transitions_are_said_once_with_their_before_state() -> None:
    view = view_of(sample_history())
    got = {(t.path, t.kind, t.before, t.after) for t in view.transitions}
    assert got == {("caps/new-failure.json", "new", "new", "reproduced"),
                   ("caps/changed.json", "newly-reproducing", "different-failure", "reproduced"),
                   ("caps/newly-flaky.json", "flaky", "reproduced", "flaky")}
    doc = page()
    (li,) = doc.xpath("//section[@id='changes']//li[@data-capsule='caps/newly-flaky.json']")
    text = " ".join(li.text_content().split())
    assert text == "flaky caps/newly-flaky.json reproduced → flaky"  # once, not "reproduced -> flaky" again
    (new,) = doc.xpath("//section[@id='changes']//li[@data-capsule='caps/new-failure.json']")
    assert "new → reproduced" in " ".join(new.text_content().split())


def test_capsule_pages_are_linked_and_hold_the_details(tmp_path: Path) -> None:
    view = view_of(sample_history())
    written = write_site(tmp_path / "farm.html", view)
    assert (tmp_path / "farm-pages" / ".replay-farm-pages").is_file()
    doc = lxml_html.document_fromstring((tmp_path / "farm.html").read_text())
    links = doc.xpath("//table[@id='capsules']//td[@class='path']/a")
    assert len(links) == len(view.rows)  # a small history: a page for every capsule
    for a in links:
        target = tmp_path / a.get("href")
        assert target in written and target.is_file()
        sub = lxml_html.document_fromstring(target.read_text())
        (art,) = sub.xpath("//article[@data-capsule]")
        assert art.get("data-capsule") == a.text_content()
        assert sub.xpath("//a")[0].get("href") == "../farm.html"
    flaky = next(r for r in view.rows if r.path == "caps/newly-flaky.json")
    sub = lxml_html.document_fromstring((tmp_path / "farm-pages" / page_name(flaky.capsule_id)).read_text())
    assert [tr.get("data-night") for tr in sub.xpath("//table[@class='nights']/tbody/tr")] == list(reversed(NIGHTS))
    assert "2/5 attempts came back as recorded" in sub.text_content()
    # a second report clears the pages the first wrote; a folder replay did not write is refused
    write_site(tmp_path / "farm.html", view_of(History(sample_history().nights[:1])))
    assert len(list((tmp_path / "farm-pages").glob("capsule-*.html"))) == 6
    (tmp_path / "other-pages").mkdir()
    (tmp_path / "other-pages" / "mine.txt").write_text("x")
    with pytest.raises(UsageError, match="replay did not write it"):
        write_site(tmp_path / "other.html", view)


def test_many_rows_are_paged_and_steady_ones_get_no_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(farm_html, "PER_PAGE", 4)
    monkeypatch.setattr(farm_html, "ALL_PAGES_UPTO", 0)
    site = render_site(view_of(sample_history()))
    assert sorted(k for k in site if "page-" in k) == ["farm-pages/page-2.html", "farm-pages/page-3.html"]
    first = lxml_html.document_fromstring(site["farm.html"])
    assert len(rows_of(first)) == 4
    assert [a.get("href") for a in first.xpath("//nav[@id='pages']/a")] == ["farm-pages/page-2.html",
                                                                           "farm-pages/page-3.html"]
    second = lxml_html.document_fromstring(site["farm-pages/page-2.html"])
    assert [r.get("data-group") for r in rows_of(second)] == ["never-reproduced"] + ["steady"] * 3
    # steady and not in trouble: no page of its own (the broken one has one)
    assert [a.text_content() for a in second.xpath("//td[@class='path']/a")] == ["caps/passes.json",
                                                                                 "caps/broken-steady.json"]
    capsule_pages = [k for k in site if "capsule-" in k]
    assert len(capsule_pages) == 6  # changed x2, newly and still flaky, never reproduced, broken


def test_hostile_capsule_strings_are_escaped() -> None:
    site = render_site(view_of(sample_history()))
    for text in site.values():
        doc = lxml_html.document_fromstring(text)
        assert len(doc.xpath("//script")) == 1 and "alert" not in doc.xpath("//script")[0].text_content()
    doc = page()
    assert doc.xpath("//tr[@data-capsule=$p]", p=HOSTILE)


def test_every_page_is_offline_and_its_one_script_is_allowed_by_hash() -> None:
    h = sample_history()
    nights = tuple(replace(n, results=tuple(replace(r, repo="https://evil.example/x.git") for r in n.results))
                   for n in h.nights)
    for name, text in render_site(view_of(History(nights))).items():
        doc = lxml_html.document_fromstring(text)
        assert not doc.xpath("//link | //img | //iframe | //object | //embed | //base | //script[@src]"), name
        for el in doc.iter():
            for attr, value in el.attrib.items():
                assert not re.match(r"\s*(https?:|//|javascript:)", value, re.IGNORECASE), (name, el.tag, attr)
                assert not attr.startswith("on"), (name, el.tag, attr)
        style = "".join(s.text_content() for s in doc.xpath("//style"))
        assert "url(" not in style and "@import" not in style and "http" not in style
        csp = doc.xpath("//meta[@http-equiv='Content-Security-Policy']")[0].get("content")
        assert "default-src 'none'" in csp
        (script,) = doc.xpath("//script")
        digest = base64.b64encode(hashlib.sha256(script.text.encode()).digest()).decode()
        assert f"script-src 'sha256-{digest}'" in csp


def test_no_nights_and_the_same_history_renders_the_same_pages() -> None:
    empty = page(Attention((), 14, (), ()))
    assert empty.get_element_by_id("no-nights") is not None
    assert render_site(view_of(sample_history())) == render_site(view_of(sample_history()))


def test_a_verdict_this_replay_does_not_know_gets_no_class_of_its_own() -> None:
    odd = replace(result("a.json", "reproduced", night_id="n1"), verdict='x" onmouseover="alert(1)')  # type: ignore[arg-type]
    doc = page(view_of(History((Night("n1", "2026-12-01T03:00:00Z", results=(odd,)),))))
    (row,) = rows_of(doc)
    assert row.get("data-verdict") == 'x" onmouseover="alert(1)'
    assert row.xpath(".//span[contains(@class, 'badge')]")[0].get("class") == "badge v-unknown"
    assert not any(el.get("onmouseover") for el in doc.iter())
