"""The farm's HTML page: structure, escaping of what capsules say, no network references.
(tests/integration/test_farm_html.py loads the same history in a real Chromium.)"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, fields, replace

import pytest
from lxml import html as lxml_html

from runner.errors import UsageError
from runner.farm.html import anchor_of, render_html
from runner.farm.junit import farm_junit
from runner.farm.model import CapsuleResult, History, Night, Transition

from tests.unit.farm.test_junit import HOSTILE, KEY, OTHER, SIG, every_verdict, result

NIGHTS = ("night-0001", "night-0002", "night-0003")


def sample_history() -> History:
    """Three nights: the last has every verdict; one capsule left after the first night; the
    transitions between the last two nights of every kind."""
    first = every_verdict(NIGHTS[0], None)
    gone = result("caps/retired.json", "reproduced", night_id=NIGHTS[0], signature=SIG)
    second = tuple(replace(r, verdict="reproduced", signature=SIG, ref=None, ref_verdict=None) if r.verdict in
                   ("flaky", "broken") else r for r in every_verdict(NIGHTS[1], None))
    nights = (Night(NIGHTS[0], "2026-11-29T03:00:00Z", "2026-11-29T03:40:00Z", None, ("caps/",), (*first, gone)),
              Night(NIGHTS[1], "2026-11-30T03:00:00Z", "2026-11-30T03:40:00Z", None, ("caps/",), second),
              Night(NIGHTS[2], "2026-12-01T03:00:00Z", "2026-12-01T03:41:07Z", "main", ("caps/",),
                    (*every_verdict(NIGHTS[2]), result(HOSTILE, "reproduced", night_id=NIGHTS[2], signature=SIG,
                                                      key_lines=(HOSTILE,), reason=HOSTILE))))
    by_path = {r.path: r.capsule_id for r in nights[2].results}
    transitions = (
        Transition(by_path["caps/flaky.json"], "caps/flaky.json", "flaky", "reproduced", "flaky", "2/5 attempts"),
        Transition(by_path["caps/tampered.json"], "caps/tampered.json", "broken", "reproduced", "broken",
                   "the seal does not verify"),
        Transition(by_path["caps/fixed-on-main.json"], "caps/fixed-on-main.json", "fixed", "not-fixed", "fixed"),
        Transition(by_path["caps/other.json"], "caps/other.json", "signature-changed", "reproduced",
                   "different-failure", f"{SIG} -> {OTHER}"),
        Transition(by_path["caps/tz/capsule.json"], "caps/tz/capsule.json", "newly-reproducing", "not-reproduced",
                   "reproduced"),
        Transition(by_path[HOSTILE], HOSTILE, "new", None, "reproduced", HOSTILE),
    )
    return History(nights, transitions)


def page(history: History | None = None, since: int | None = None) -> lxml_html.HtmlElement:
    return lxml_html.document_fromstring(render_html(history or sample_history(), since))


def test_every_capsule_has_one_row_and_one_section() -> None:
    h = sample_history()
    doc = page(h)
    paths = sorted({r.path for n in h.nights for r in n.results})
    rows = doc.xpath("//section[@id='capsules']//tbody/tr")
    assert sorted(r.get("data-capsule") for r in rows) == paths
    assert sorted(a.get("data-capsule") for a in doc.xpath("//article[@class and contains(@class, 'capsule')]")) == paths
    for row in rows:  # the row links to its section
        (link,) = row.xpath(".//td[@class='path']/a")
        assert doc.get_element_by_id(link.get("href")[1:]).get("data-capsule") == row.get("data-capsule")
    gone = doc.xpath("//tr[@data-capsule='caps/retired.json']")[0]
    assert "gone" in gone.get("class", "") and "not in last night" in gone.text_content()


def test_summary_counts_are_last_nights() -> None:
    h = sample_history()
    doc = page(h)
    cards = {c.get("data-verdict"): int(c.get("data-count")) for c in doc.xpath("//section[@id='summary']//*[@data-verdict]")}
    want = Counter(r.verdict for r in h.nights[-1].results)
    assert {v: n for v, n in cards.items() if n} == dict(want)
    assert cards["reproduced"] == 4 and cards["flaky"] == 1 and cards["broken"] == 1
    refs = {c.get("data-ref-verdict"): int(c.get("data-count")) for c in doc.xpath("//*[@id='ref-summary']/*")}
    assert refs == {"fixed": 1, "not-fixed": 1, "inconclusive": 1}


def test_strip_shows_each_night_oldest_first_with_a_tooltip() -> None:
    doc = page()
    rects = doc.xpath("//tr[@data-capsule='caps/flaky.json']//svg[contains(@class, 'strip')]/rect")
    assert [r.get("data-night") for r in rects] == list(NIGHTS)
    assert [r.get("data-verdict") for r in rects] == ["flaky", "reproduced", "flaky"]
    assert [r.get("class") for r in rects] == ["v-flaky", "v-reproduced", "v-flaky"]
    assert rects[0].findtext("title") == "2026-11-29 03:00 UTC (night night-0001): flaky, " + SIG
    retired = doc.xpath("//tr[@data-capsule='caps/retired.json']//rect")
    assert [r.get("data-verdict") for r in retired] == ["reproduced", "absent", "absent"]
    assert "not in this night" in retired[1].findtext("title")


def test_since_limits_the_nights_shown() -> None:
    doc = page(since=2)
    rects = doc.xpath("//tr[@data-capsule='caps/flaky.json']//rect")
    assert [r.get("data-night") for r in rects] == list(NIGHTS[1:])
    assert not doc.xpath("//tr[@data-capsule='caps/retired.json']")  # only in a night not shown
    with pytest.raises(UsageError):
        render_html(sample_history(), since=0)


def test_since_last_night_names_every_transition() -> None:
    h = sample_history()
    doc = page(h)
    items = doc.xpath("//section[@id='changes']//li")
    assert sorted((i.get("data-kind"), i.get("data-capsule")) for i in items) == \
        sorted((t.kind, t.path) for t in h.transitions)
    groups = [g.get("data-kind") for g in doc.xpath("//div[contains(@class, 'change-group')]")]
    assert groups == ["newly-reproducing", "fixed", "flaky", "signature-changed", "broken", "new"]
    sig = doc.xpath("//li[@data-kind='signature-changed']")[0].text_content()
    assert "reproduced" in sig and "different failure" in sig and OTHER in sig


def test_sections_hold_attempts_signatures_and_key_lines() -> None:
    doc = page()
    (art,) = doc.xpath("//article[@data-capsule='caps/flaky.json']")
    assert art.get("id") == anchor_of(next(r.capsule_id for r in every_verdict() if r.path == "caps/flaky.json"))
    assert [tr.get("data-side") for tr in art.xpath(".//table[contains(@class, 'attempts')]/tbody/tr")] == ["recorded"] * 5
    assert art.xpath(".//pre[@class='key-lines']")[0].text_content() == "".join(f"{k}\n" for k in KEY)
    assert "2/5 attempts (95 % interval 12% to 77%)" in art.text_content()
    assert [tr.get("data-night") for tr in art.xpath(".//table[@class='nights']/tbody/tr")] == list(reversed(NIGHTS))
    (other,) = doc.xpath("//article[@data-capsule='caps/other.json']")
    assert OTHER in other.text_content() and f"recorded {SIG}" in other.text_content()
    (broken,) = doc.xpath("//article[@data-capsule='caps/tampered.json']")
    assert broken.xpath(".//p[@class='reason']")[0].text == "the seal does not verify: payload differs"


def test_hostile_capsule_strings_are_escaped() -> None:
    text = render_html(sample_history())
    assert "<script" not in text.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    doc = lxml_html.document_fromstring(text)
    assert not doc.xpath("//script")
    assert doc.xpath("//tr[@data-capsule=$p]", p=HOSTILE)  # the value is intact as data
    assert HOSTILE in doc.xpath("//article[@data-capsule=$p]", p=HOSTILE)[0].text_content()


def test_no_network_references() -> None:
    h = sample_history()
    nights = tuple(replace(n, results=tuple(replace(r, repo="https://evil.example/x.git") for r in n.results))
                   for n in h.nights)
    text = render_html(History(nights, h.transitions))
    doc = lxml_html.document_fromstring(text)
    assert not doc.xpath("//script | //link | //img | //iframe | //object | //embed | //base")
    for el in doc.iter():
        for name, value in el.attrib.items():
            assert not re.match(r"\s*(https?:|//|javascript:)", value, re.IGNORECASE), (el.tag, name, value)
            if name == "href":
                assert value.startswith("#"), value
    style = "".join(s.text_content() for s in doc.xpath("//style"))
    assert "url(" not in style and "@import" not in style and "http" not in style
    csp = doc.xpath("//meta[@http-equiv='Content-Security-Policy']")[0].get("content")
    assert "default-src 'none'" in csp
    assert "https://evil.example/x.git" in doc.text_content()  # shown as text, never as a link


def test_one_night_and_no_nights() -> None:
    one = History((Night("n1", "2026-12-01T03:00:00Z", results=(result("a.json", "reproduced", night_id="n1"),)),))
    doc = page(one)
    assert "No earlier night to compare with" in doc.xpath("//section[@id='changes']")[0].text_content()
    assert len(doc.xpath("//section[@id='capsules']//tbody/tr")) == 1
    assert not doc.xpath("//*[@id='ref-summary']")
    empty = page(History())
    assert empty.get_element_by_id("no-nights") is not None and not empty.xpath("//section")


def test_the_same_history_renders_the_same_page() -> None:
    assert render_html(sample_history()) == render_html(sample_history())


def test_unknown_verdict_gets_no_class_of_its_own() -> None:
    odd = result("a.json", "reproduced", night_id="n1")
    odd = replace(odd, verdict='x" onmouseover="alert(1)')  # type: ignore[arg-type]
    doc = page(History((Night("n1", "2026-12-01T03:00:00Z", results=(odd,)),)))
    (row,) = doc.xpath("//section[@id='capsules']//tbody/tr")
    assert row.get("data-verdict") == 'x" onmouseover="alert(1)'
    assert row.xpath(".//span[contains(@class, 'badge')]")[0].get("class") == "badge v-unknown"
    assert not any(el.get("onmouseover") for el in doc.iter())


@dataclass(frozen=True)
class Collected(CapsuleResult):
    """A result with the store's extra fields (also_at), whichever model version is on hand."""

    also_at: tuple[str, ...] = ()


def test_other_paths_of_the_same_capsule_are_named() -> None:
    r = result("a.json", "reproduced", night_id="n1")
    dup = Collected(**{f.name: getattr(r, f.name) for f in fields(CapsuleResult)} | {"also_at": ("b/a-copy.json",)})
    doc = page(History((Night("n1", "2026-12-01T03:00:00Z", results=(dup,)),)))
    (art,) = doc.xpath("//article[@data-capsule='a.json']")
    assert "also collected at" in art.text_content() and "b/a-copy.json" in art.text_content()
    assert "also collected at b/a-copy.json" in (farm_junit(Night("n1", "x", results=(dup,))))


def test_a_recorded_pass_that_passes_is_not_shown_as_a_failure() -> None:
    doc = page()
    (row,) = doc.xpath("//tr[@data-capsule='ci/fetch-greeting.json']")
    assert row.get("data-verdict") == "reproduced"
    assert row.xpath(".//span[contains(@class, 'badge')]")[0].get("class") == "badge v-reproduced-pass"
    assert "a recorded pass" in row.text_content()
    (failing,) = doc.xpath("//tr[@data-capsule='caps/tz/capsule.json']")
    assert failing.xpath(".//span[contains(@class, 'badge')]")[0].get("class") == "badge v-reproduced"


def test_a_commit_ref_is_shortened_in_headers() -> None:
    sha = "4d940d145f8a038611159dbf65f6996cb3174a8a"
    h = sample_history()
    last = replace(h.nights[-1], ref=sha, results=tuple(replace(r, ref=sha if r.ref else None)
                                                        for r in h.nights[-1].results))
    doc = page(History((*h.nights[:-1], last), h.transitions))
    heads = [th.text_content() for th in doc.xpath("//section[@id='capsules']//thead//th")]
    assert f"at {sha[:12]}" in heads and f"at {sha}" not in heads
    assert sha in doc.get_element_by_id("night").text_content()  # the header names it whole
