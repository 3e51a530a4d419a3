"""Which hosts the replay network offers, and the server's calls file."""
from __future__ import annotations

import base64
import json

from runner.capsules.model import Body, HttpCall, HttpError, HttpRequest, HttpResponse
from runner.httpreplay.hostplan import calls_document, denied, plan_hosts


def call(seq: int, url: str, error: str | None = None, body: Body | None = None) -> HttpCall:
    return HttpCall(seq, 0.0, HttpRequest("GET", url),
                    None if error else HttpResponse(200, "OK", (("A", "b"),), body),
                    HttpError(error, "boom") if error else None)  # type: ignore[arg-type]


def test_aliases_and_the_calls_left_out_with_why() -> None:
    plan = plan_hosts([
        call(1, "https://API.example.com/x"), call(2, "http://10.0.0.5/x"), call(3, "http://localhost:3000/"),
        call(4, "https://gone.example.com/", "dns"), call(5, "https://mixed.example.com/", "dns"),
        call(6, "https://mixed.example.com/"), call(7, "ftp://files.example.com/f"),
        call(8, "https://tracker.ads.example/"),
    ], denied_hosts=["*.ads.example"])
    assert plan.aliases == ("api.example.com", "mixed.example.com")
    assert sorted(plan.unservable) == [2, 3, 7, 8]
    assert "not a DNS name" in plan.unservable[2] and "localhost" in plan.unservable[3]
    assert "scheme ftp" in plan.unservable[7] and "denied" in plan.unservable[8]
    assert list(plan.unobservable) == [4] and "gone.example.com has no address" in plan.unobservable[4]


def test_denied_patterns() -> None:
    assert denied("a.example.com", [".example.com"]) and denied("example.com", ["*.example.com"])
    assert denied("x.org", ["X.org"]) and not denied("notexample.com", ["*.example.com"])


def test_calls_document_keeps_every_byte_and_skips_unservable() -> None:
    calls = [call(1, "https://api.example.com/x", body=Body(base64=base64.b64encode(b"\x00\xff").decode())),
             call(2, "http://127.0.0.1/")]
    text, tokens = calls_document(calls, plan_hosts(calls))
    doc = json.loads(text)
    assert tokens == {"api.example.com": "h0"} and doc["hosts"] == tokens
    assert [c["seq"] for c in doc["calls"]] == [1]
    assert base64.b64decode(doc["calls"][0]["response"]["body"]) == b"\x00\xff"
    assert doc["calls"][0]["response"]["headers"] == [["A", "b"]]


def test_refused_on_a_port_the_server_leaves_closed_is_noted_not_unused() -> None:
    plan = plan_hosts([
        call(1, "http://api.example.com:8081/", "connect-refused"), call(2, "https://api.example.com/"),
        call(3, "https://flaky.example.com/", "connect-refused"), call(4, "http://other.example.com:8081/x",
                                                                       "connect-refused"),
    ])
    # port 443 also answers (#2): #3 is served there as a reset; port 8081 only ever refused
    assert sorted(plan.unobservable) == [1, 4]
    assert "port 8081 is closed" in plan.unobservable[1]
    text, _ = calls_document([call(1, "http://api.example.com:8081/", "connect-refused")], plan)
    assert json.loads(text)["calls"] == []


def test_url_with_an_impossible_port_is_unservable_not_a_server_crash() -> None:
    plan = plan_hosts([call(1, "https://api.example.com:99999/"), call(2, "https://api.example.com/")])
    assert list(plan.unservable) == [1] and "port" in plan.unservable[1]
    assert plan.aliases == ("api.example.com",)
