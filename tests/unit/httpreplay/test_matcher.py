"""Matching, order, nearest and the reasons a request differs."""
from __future__ import annotations

import base64

import matcher as m


def rec(seq: int, method: str, url: str, body: bytes = b"", error: str | None = None) -> m.Recorded:
    resp = None if error else m.Response(200, "OK", (), b"r%d" % seq)
    return m.Recorded(seq, m.parse_url(method, url, body), resp, error)


def test_parse_url_normalises_scheme_host_port_and_query() -> None:
    r = m.parse_url("get", "HTTPS://API.Example.com/v1/x?b=2&a=1&a=")
    assert (r.method, r.scheme, r.host, r.port, r.path) == ("GET", "https", "api.example.com", 443, "/v1/x")
    assert r.query == (("b", "2"), ("a", "1"), ("a", ""))
    assert m.parse_url("GET", "http://h:8080").port == 8080
    assert m.parse_url("GET", "http://h").path == "/"


def test_each_matcher_names_its_part_and_why() -> None:
    recorded = m.parse_url("POST", "https://api.example.com/v1/items?x=1", b"abc")
    asked = m.from_target("GET", "http", "other.example.com", 8080, "/v1/item?y=2", b"abcd")
    diffs = {d.part: d.why for d in m.differences(asked, recorded)}
    assert list(diffs) == ["method", "scheme", "host", "port", "path", "query", "body"]
    assert diffs["method"] == "GET != recorded POST"
    assert diffs["path"] == "'/v1/item' != recorded '/v1/items'"
    assert diffs["query"] == "extra ['y=2'], missing ['x=1']"
    assert diffs["body"].startswith("4 bytes") and "recorded 3 bytes" in diffs["body"]


def test_query_order_and_json_spacing_do_not_matter() -> None:
    recorded = m.parse_url("POST", "https://h/p?a=1&b=2", b'{"a": 1, "b": [1, 2]}')
    asked = m.from_target("POST", "https", "h", 443, "/p?b=2&a=1", b'{"b":[1,2],"a":1}')
    assert m.differences(asked, recorded) == ()


def test_take_serves_identical_requests_in_recorded_order_once_each() -> None:
    matcher = m.Matcher([rec(2, "GET", "https://h/c"), rec(1, "GET", "https://h/c"), rec(3, "GET", "https://h/d")])
    asked = m.from_target("GET", "https", "h", 443, "/c")
    assert [matcher.take(asked).seq, matcher.take(asked).seq, matcher.take(asked)] == [1, 2, None]
    matcher.reset()
    assert matcher.take(asked).seq == 1


def test_take_uses_the_body_to_choose() -> None:
    matcher = m.Matcher([rec(1, "POST", "https://h/i", b"a"), rec(2, "POST", "https://h/i", b"b")])
    assert matcher.take(m.from_target("POST", "https", "h", 443, "/i", b"b")).seq == 2
    assert matcher.take(m.from_target("POST", "https", "h", 443, "/i", b"c")) is None


def test_nearest_prefers_fewest_differences_then_same_host() -> None:
    matcher = m.Matcher([rec(1, "GET", "https://a.example/x"), rec(2, "GET", "https://b.example/y?q=1"),
                         rec(3, "POST", "https://b.example/x")])
    near, diffs = matcher.nearest(m.from_target("GET", "https", "b.example", 443, "/x"))
    assert near is not None and near.seq == 3  # #1 and #3 differ in one part; #3 keeps the host
    assert [d.part for d in diffs] == ["method"]


def test_nearest_of_an_exhausted_request_says_order() -> None:
    matcher = m.Matcher([rec(1, "GET", "https://h/c")])
    asked = m.from_target("GET", "https", "h", 443, "/c")
    matcher.take(asked)
    near, diffs = matcher.nearest(asked)
    assert near.seq == 1 and diffs[0].part == "order" and "1 recorded" in diffs[0].why


def test_nearest_with_no_recording() -> None:
    near, diffs = m.Matcher([]).nearest(m.from_target("GET", "http", "h", 80, "/"))
    assert near is None and diffs[0].part == "recording"


def test_connect_errors_are_consumed_only_when_first_pending_for_the_origin() -> None:
    matcher = m.Matcher([rec(1, "GET", "https://h/", error="connect-refused"), rec(2, "GET", "https://h/"),
                         rec(3, "GET", "https://h/", error="tls")])
    origin = ("https", "h", 443)
    assert matcher.take_connect_error(origin).seq == 1
    assert matcher.take_connect_error(origin) is None  # #2 (a response) is next
    assert matcher.take(m.from_target("GET", "https", "h", 443, "/")).seq == 2
    assert matcher.take_connect_error(origin).seq == 3
    assert matcher.take_connect_error(("https", "other", 443)) is None


def test_load_calls_decodes_base64_bodies_and_errors() -> None:
    doc = {"calls": [
        {"seq": 1, "method": "POST", "url": "https://h/x", "body": base64.b64encode(b"\x00\xff").decode(),
         "response": {"status": 201, "reason": "Created", "headers": [["A", "b"]],
                      "body": base64.b64encode(b"ok").decode()}, "error": None},
        {"seq": 2, "method": "GET", "url": "https://h/y", "body": None, "response": None,
         "error": {"kind": "reset", "message": "ECONNRESET"}},
    ]}
    one, two = m.load_calls(doc)
    assert one.request.body == b"\x00\xff"
    assert one.response == m.Response(201, "Created", (("A", "b"),), b"ok")
    assert (two.response, two.error_kind, two.error_message, two.connect_error) == (None, "reset", "ECONNRESET", False)


def test_nearest_among_equals_is_the_most_alike_url_even_if_served() -> None:
    matcher = m.Matcher([rec(1, "GET", "https://h/v1/greeting"), rec(2, "GET", "https://h/never")])
    matcher.take(m.from_target("GET", "https", "h", 443, "/v1/greeting"))
    near, diffs = matcher.nearest(m.from_target("GET", "https", "h", 443, "/v1/greetings"))
    assert near.seq == 1 and [d.part for d in diffs] == ["path"]


def hrec(seq: int, url: str, headers: tuple[tuple[str, str], ...] = (), body: bytes = b"") -> m.Recorded:
    return m.Recorded(seq, m.parse_url("GET" if not body else "POST", url, body, headers), m.Response(200, "OK", (), b""))


def test_ignored_parameters_and_body_members_take_no_part_and_are_no_difference() -> None:
    matcher = m.Matcher([hrec(1, "https://h/p?q=1&sig=old"), hrec(2, "https://h/p", body=b'{"a": 1, "sig": "old"}')],
                        m.Rules(["SIG"]))
    assert matcher.take(m.from_target("GET", "https", "h", 443, "/p?sig=new&q=1")).seq == 1
    assert matcher.take(m.from_target("POST", "https", "h", 443, "/p", b'{"sig": "new", "a": 1}')).seq == 2
    assert m.differences(m.parse_url("GET", "https://h/p?sig=x"), m.parse_url("GET", "https://h/p"), m.Rules(["sig"])) == ()
    assert [d.part for d in m.differences(m.parse_url("GET", "https://h/p?sig=x"), m.parse_url("GET", "https://h/p"))] == ["query"]


def test_a_request_differing_only_in_volatile_values_is_served_in_recorded_order_and_says_so() -> None:
    matcher = m.Matcher([hrec(1, "https://h/poll?ts=1690000000000"), hrec(2, "https://h/poll?ts=1690000005000"),
                         hrec(3, "https://h/poll?page=2&ts=1690000009000")])
    asked = m.from_target("GET", "https", "h", 443, "/poll?ts=1760000000000")
    assert matcher.take(asked) is None  # not an exact match
    first, second = matcher.take_volatile(asked), matcher.take_volatile(asked)
    assert first is not None and second is not None and (first[0].seq, second[0].seq) == (1, 2)
    assert first[1] == ["query ts: 1760000000000 (recorded 1690000000000, unix time)"]
    assert matcher.take_volatile(asked) is None  # #3 differs in a parameter as well
    assert matcher.take_volatile(m.from_target("GET", "https", "h", 443, "/poll?ts=abc")) is None


def test_headers_choose_among_matching_calls_unless_ignored() -> None:
    calls = [hrec(1, "https://h/v", (("X-Variant", "a"),)), hrec(2, "https://h/v", (("X-Variant", "b"),))]
    asked = m.from_target("GET", "https", "h", 443, "/v", headers=(("x-variant", "b"),))
    assert m.Matcher(calls).take(asked).seq == 2
    assert m.Matcher(calls, m.Rules(["x-variant"])).take(asked).seq == 1  # recorded order again
    assert m.load_rules({"rules": {"ignore": ["TS"]}}).kept((("ts", "1"), ("a", "2"))) == (("a", "2"),)
