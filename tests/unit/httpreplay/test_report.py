"""The HTTP section of a replay report, from the server's events."""
from __future__ import annotations

import json

from runner.capsules.model import FrozenMap, HttpCall, HttpError, HttpRequest, HttpResponse
from runner.codec import encode
from runner.httpreplay.hostplan import HostPlan, plan_hosts
from runner.httpreplay.served import build_report


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
    plan = HostPlan(unservable=FrozenMap({3: "host is an IP"}), unobservable=FrozenMap({4: "refused"}))
    report = build_report(calls(), lines, plan, notes=["java"])
    assert [s.seq for s in report.served] == [2]
    assert report.served[0].approximated == "why not"
    (u,) = report.unmatched
    assert (u.nearest, u.nearest_request, u.differences[0].part) == (1, "GET https://h.example/1", "path")
    assert [(c.seq, c.why) for c in report.unused] == [(1, "never requested")]
    # a call the replay could not offer is not "never requested": it was named before the first attempt
    assert [(c.seq, c.why) for c in report.unservable] == [(3, "host is an IP")]
    assert report.notes == ("java", "#4: refused", "something odd")
    assert not report.clean
    text = "\n".join(report.lines())
    assert text.startswith("HTTP: 1 served, 1 unmatched, 1 unused, 1 not served, 0 unrecorded host(s)")
    assert "  not served #3 GET https://h.example/3 (host is an IP)" in text
    assert "UNMATCHED GET https://h.example/9 (nearest #1 GET https://h.example/1)" in text
    assert encode(report)["unmatched"][0]["differences"] == [{"part": "path", "why": "'/9' != recorded '/1'"}]


def test_nearest_that_is_not_a_recorded_seq_is_dropped() -> None:
    line = ev(event="unmatched", method="GET", url="u", nearest=99, differences="junk")
    (u,) = build_report(calls(), [line], HostPlan()).unmatched
    assert (u.nearest, u.nearest_request, u.differences) == (None, None, ())


def dns(name: str, answer: str, qtype: str = "A") -> str:
    return ev(event="dns", name=name, type=qtype, answer=answer)


def test_hosts_outside_the_recording_are_named_with_the_nearest_recorded_one() -> None:
    recorded = [HttpCall(1, 0.0, HttpRequest("GET", "https://api.example.com/"), HttpResponse(200)),
                HttpCall(2, 0.0, HttpRequest("GET", "https://cdn.example.net/x"), HttpResponse(200))]
    lines = [dns("api.example.com", "172.16.9.128"), dns("api.example.com", "nodata", "AAAA"),
             dns("apl.example.com", "nxdomain"), dns("apl.example.com", "nxdomain", "AAAA"),
             dns("apl.example.com.corp.internal", "nxdomain"),  # the search domain, appended after NXDOMAIN
             dns("cdn.example.org", "nxdomain"), dns("4.3.2.1.in-addr.arpa", "nxdomain", "PTR")]
    report = build_report(recorded, lines, plan_hosts(recorded))
    assert [(h.host, h.nearest) for h in report.unrecorded_hosts] == [
        ("apl.example.com", "api.example.com"), ("cdn.example.org", "cdn.example.net")]
    assert not report.clean
    assert "  contacted, not in the recording: apl.example.com (nearest recorded host: api.example.com)" in \
        report.lines()
    assert encode(report)["unrecorded_hosts"][1] == {"host": "cdn.example.org", "nearest": "cdn.example.net"}
    assert build_report(recorded, lines[:2], plan_hosts(recorded)).unrecorded_hosts == ()


def test_a_host_recorded_as_nxdomain_is_served_once_per_lookup() -> None:
    gone = [HttpCall(seq, 0.0, HttpRequest("GET", "https://gone.example.com/"), error=HttpError("dns", "ENOTFOUND"))
            for seq in (1, 2)]
    plan = plan_hosts(gone)
    one_lookup = [dns("gone.example.com", "nxdomain"), dns("gone.example.com", "nxdomain", "AAAA")]
    report = build_report(gone, one_lookup, plan)
    assert [(s.seq, s.outcome) for s in report.served] == [(1, "error dns: nxdomain")]
    assert [(c.seq, c.why) for c in report.unused] == [(2, "never looked up")]
    assert report.unrecorded_hosts == ()  # a recorded name, answered as recorded
    assert [s.seq for s in build_report(gone, one_lookup * 3, plan).served] == [1, 2]
