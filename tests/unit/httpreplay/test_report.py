"""The HTTP section of a replay report, from the server's events."""
from __future__ import annotations

import json

from runner.capsules.model import HttpCall, HttpRequest, HttpResponse, to_data
from runner.httpreplay.report import build_report


def calls() -> list[HttpCall]:
    return [HttpCall(i, 0.0, HttpRequest("GET", f"https://h.example/{i}"), HttpResponse(200)) for i in (1, 2, 3, 4)]


def ev(**fields: object) -> str:
    return json.dumps(fields)


def test_last_attempt_served_unmatched_unused() -> None:
    lines = [
        ev(event="served", seq=1, method="GET", url="https://h.example/1", outcome="response 200"),
        ev(event="attempt"),
        ev(event="ready", ports=[443]),
        ev(event="served", seq=2, method="GET", url="https://h.example/2", outcome="error reset: reset",
           approximated="why not"),
        ev(event="unmatched", method="GET", url="https://h.example/9", body_bytes=0, nearest=1,
           differences=[{"part": "path", "why": "'/9' != recorded '/1'"}]),
        "not json", ev(event="note", text="something odd"),
    ]
    report = build_report(calls(), lines, unservable={3: "host is an IP"}, unobservable={4: "dns"}, notes=["java"])
    assert [s.seq for s in report.served] == [2]
    assert report.served[0].approximated == "why not"
    (u,) = report.unmatched
    assert (u.nearest, u.nearest_request, u.differences[0].part) == (1, "GET https://h.example/1", "path")
    assert [(c.seq, c.why) for c in report.unused] == [(1, "never requested"), (3, "host is an IP")]
    assert report.notes == ("java", "#4: dns", "something odd")
    assert not report.clean
    text = "\n".join(report.lines())
    assert text.startswith("HTTP: 1 served, 1 unmatched, 2 unused")
    assert "UNMATCHED GET https://h.example/9 (nearest #1 GET https://h.example/1)" in text
    assert to_data(report)["unmatched"][0]["differences"] == [{"part": "path", "why": "'/9' != recorded '/1'"}]


def test_nearest_that_is_not_a_recorded_seq_is_dropped() -> None:
    line = ev(event="unmatched", method="GET", url="u", nearest=99, differences="junk")
    (u,) = build_report(calls(), [line], {}, {}).unmatched
    assert (u.nearest, u.nearest_request, u.differences) == (None, None, ())
