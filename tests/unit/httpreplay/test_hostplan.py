"""Which hosts the replay network offers, and the server's calls file."""
from __future__ import annotations

import base64
import json

from runner.capsules.model import Body, HttpCall, HttpError, HttpRequest, HttpResponse
from runner.httpreplay.hostplan import LISTEN, REFUSE, SILENT, calls_document, denied, plan_hosts


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
    # an IPv4 address is offered: the sidecar holds it on the replay network (addressing.literal_subnets)
    assert plan.hosts == ("10.0.0.5", "api.example.com", "mixed.example.com") and plan.literals == ("10.0.0.5",)
    assert sorted(plan.unservable) == [3, 7, 8]
    assert "localhost is loopback" in plan.unservable[3]
    assert "scheme ftp" in plan.unservable[7] and "denied" in plan.unservable[8]
    # every call of gone.example.com failed dns: no address, the resolver answers NXDOMAIN and sees the lookup
    assert dict(plan.dns_failed) == {"gone.example.com": (4,)} and dict(plan.unobservable) == {}
    assert "tracker.ads.example" in plan.recorded and "10.0.0.5" not in plan.recorded


def test_denied_patterns() -> None:
    assert denied("a.example.com", [".example.com"]) and denied("example.com", ["*.example.com"])
    assert denied("x.org", ["X.org"]) and not denied("notexample.com", ["*.example.com"])


def test_calls_document_keeps_every_byte_and_skips_unservable() -> None:
    calls = [call(1, "https://api.example.com/x", body=Body(base64=base64.b64encode(b"\x00\xff").decode())),
             call(2, "http://127.0.0.1/")]
    text, tokens = calls_document(calls, plan_hosts(calls), {"api.example.com": "172.16.9.128"})
    doc = json.loads(text)
    assert tokens == {"api.example.com": "h0"}
    assert doc["hosts"] == [{"name": "api.example.com", "token": "h0", "address": "172.16.9.128",
                             "listen": [443], "silent": []}]
    assert [c["seq"] for c in doc["calls"]] == [1]
    assert base64.b64decode(doc["calls"][0]["response"]["body"]) == b"\x00\xff"
    assert doc["calls"][0]["response"]["headers"] == [["A", "b"]]


def test_each_host_port_refuses_or_stays_silent_on_its_own() -> None:
    calls = [
        call(1, "https://api.example.com/"), call(2, "https://down.example.com/", "connect-refused"),
        call(3, "https://slow.example.com/", "connect-timeout"), call(4, "https://flaky.example.com/", "connect-refused"),
        call(5, "https://flaky.example.com/"), call(6, "http://api.example.com:8081/", "connect-refused"),
    ]
    plan = plan_hosts(calls)
    # port 443 answers for api.example.com, yet refuses for down.example.com and drops SYNs for slow.example.com
    assert {h: dict(p) for h, p in plan.ports.items()} == {
        "api.example.com": {443: LISTEN, 8081: REFUSE}, "down.example.com": {443: REFUSE},
        "flaky.example.com": {443: LISTEN}, "slow.example.com": {443: SILENT}}
    assert sorted(plan.unobservable) == [2, 3, 6]  # the kernel answers them: the server never sees them
    assert "nothing listens on port 443 of down.example.com" in plan.unobservable[2]
    assert "drops the connection request" in plan.unobservable[3]
    addresses = {h: f"172.16.0.{130 + i}" for i, h in enumerate(plan.hosts)}
    doc = json.loads(calls_document(calls, plan, addresses)[0])
    assert [c["seq"] for c in doc["calls"]] == [1, 4, 5]  # flaky's refusal is the server's to emulate
    assert {h["name"]: (h["listen"], h["silent"]) for h in doc["hosts"]} == {
        "api.example.com": ([443], []), "down.example.com": ([], []), "flaky.example.com": ([443], []),
        "slow.example.com": ([], [443])}


def test_url_with_an_impossible_port_is_unservable_not_a_server_crash() -> None:
    plan = plan_hosts([call(1, "https://api.example.com:99999/"), call(2, "https://api.example.com/")])
    assert list(plan.unservable) == [1] and "port" in plan.unservable[1]
    assert plan.hosts == ("api.example.com",)


def test_loopback_ipv6_and_unholdable_addresses_are_not_offered_and_say_why() -> None:
    calls = [call(1, "http://127.0.0.1:8080/a"), call(2, "http://127.0.0.1:8080/b"), call(3, "http://[::1]/"),
             call(4, "http://[2001:db8::1]/"), call(5, "http://224.0.0.1/"), call(6, "http://169.254.169.254/"),
             call(7, "http://0.1.2.3/"), call(8, "http://app.localhost/"), call(9, "https://203.0.113.9/x")]
    plan = plan_hosts(calls)
    assert plan.hosts == ("203.0.113.9",) and plan.literals == ("203.0.113.9",)
    assert "loopback" in plan.unservable[1] and "loopback" in plan.unservable[3] and "loopback" in plan.unservable[8]
    assert "IPv6" in plan.unservable[4]
    assert all("container on the replay network can hold" in plan.unservable[n] for n in (5, 6, 7))
    groups = plan.unservable_by_host(calls)
    assert groups[0][:2] == ("127.0.0.1:8080", (1, 2))  # one line per host and port, every call named


def test_a_literal_refused_at_open_is_left_out_with_the_reason() -> None:
    calls = [call(1, "http://10.9.8.7/x"), call(2, "https://api.example.com/")]
    plan = plan_hosts(calls, (), {"10.9.8.7": "10.9.8.7: this machine's own network holds that address"})
    assert plan.hosts == ("api.example.com",) and plan.literals == ()
    assert plan.unservable[1].endswith("holds that address")


def test_calls_document_carries_the_rules_and_the_request_headers() -> None:
    calls = [HttpCall(1, 0.0, HttpRequest("GET", "https://api.example.com/x", (("X-Variant", "a"),)),
                      HttpResponse(200))]
    doc = json.loads(calls_document(calls, plan_hosts(calls), {"api.example.com": "172.16.9.128"},
                                    ignore=["TS", "X-Request-Id", "ts"])[0])
    assert doc["rules"] == {"ignore": ["ts", "x-request-id"]}
    assert doc["calls"][0]["headers"] == [["X-Variant", "a"]]
