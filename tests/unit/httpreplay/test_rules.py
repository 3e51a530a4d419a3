"""The matching rules beyond equality (images/httpreplay/rules.py): ignored names, volatile values, headers."""
from __future__ import annotations

import pytest

import rules as r

VOLATILE = [
    ("1700000123", "1690000000", "unix time"), ("1700000123456", "1690000000000", "unix time"),
    ("1700000000.25", "1690000000.5", "unix time"), ("2026-10-13T08:00:00Z", "2025-01-02T03:04:05.123+02:00", "time"),
    ("2026-10-13", "2025-01-02", "time"), ("0.8312345", "0.1234567", "random fraction"),
    ("5f0c7a3e-1b2c-4d5e-8f90-123456789abc", "0e0c7a3e-1b2c-4d5e-8f90-123456789abd", "uuid"),
    ("a3f09c11", "0b77e21d", "hex token"), ("Zk3x9Qp2LmN8vT4rWj6y", "Qa7b3Nc9Xe1Rt5Yu2Io8", "token"),
]
NOT_VOLATILE = [
    ("1", "2"), ("admin", "guest"), ("17", "1700000000"), ("1700000000", "170000000000"),  # other lengths
    ("9999999999999", "1690000000000"),  # not a time between 2001 and 2100
    ("a3f09c11", "0b77e21d99"), ("page-one", "page-two"), ("same", "same"), ("abcdefghijklmnopqrstu", "uvwxyzabcdefghijklmno"),
]


@pytest.mark.parametrize(("a", "b", "kind"), VOLATILE)
def test_values_a_program_makes_anew_each_run_are_volatile(a: str, b: str, kind: str) -> None:
    assert r.volatile_kind(a, b) == kind


@pytest.mark.parametrize(("a", "b"), NOT_VOLATILE)
def test_other_differences_are_not(a: str, b: str) -> None:
    assert r.volatile_kind(a, b) is None


def test_pairs_differ_only_in_volatile_values_or_not_at_all() -> None:
    found = r.volatile_pairs((("q", "x"), ("ts", "1700000000")), (("ts", "1690000000"), ("q", "x")), "query")
    assert found == ["query ts: 1700000000 (recorded 1690000000, unix time)"]
    assert r.volatile_pairs((("q", "x"),), (("q", "x"),), "query") == []
    assert r.volatile_pairs((("q", "y"), ("ts", "1700000000")), (("q", "x"), ("ts", "1690000000")), "query") is None
    assert r.volatile_pairs((("ts", "1700000000"),), (), "query") is None  # a parameter only one side has


def test_ignored_names_leave_queries_form_and_json_bodies_at_any_depth_and_without_case() -> None:
    rules = r.Rules(["X-Request-Id", "Sig"])
    assert rules.kept((("sig", "1"), ("a", "2"), ("_", "3"))) == (("a", "2"),)  # `_`: a cache-buster always
    assert rules.body(b'{"a": 1, "meta": {"SIG": "x", "b": [ {"sig": 2, "c": 3} ]}}') == {"a": 1, "meta": {"b": [{"c": 3}]}}
    assert rules.body(b"b=2&sig=abc&a=1") == ("form", (("a", "1"), ("b", "2")))
    assert rules.body(b"\x00binary") == b"\x00binary"


def test_bodies_that_differ_only_in_volatile_members() -> None:
    rules = r.Rules()
    asked, recorded = (rules.body(b'{"id": 7, "nonce": "a3f09c11", "at": "2026-10-13T08:00:00Z"}'),
                       rules.body(b'{"at": "2025-01-01T00:00:00Z", "id": 7, "nonce": "0b77e21d"}'))
    assert r.volatile_body(asked, recorded) == ["body.nonce: a3f09c11 (recorded 0b77e21d, hex token)",
                                                "body.at: 2026-10-13T08:00:00Z (recorded 2025-01-01T00:00:00Z, time)"]
    assert r.volatile_body(rules.body(b'{"id": 8}'), rules.body(b'{"id": 7}')) is None
    assert r.volatile_body(rules.body(b"t=1700000000"), rules.body(b"t=1690000000")) == [
        "form t: 1700000000 (recorded 1690000000, unix time)"]
    assert r.volatile_body(b"abc", b"abd") is None


def test_headers_score_agreement_leaving_out_ignored_names_and_redacted_values() -> None:
    rules = r.Rules(["x-trace"])
    recorded = (("Accept", "text/html"), ("Authorization", "[redacted]"), ("X-Trace", "1"), ("X-Variant", "b"))
    assert rules.header_score((("accept", "text/html"), ("x-variant", "b")), recorded) == 2
    assert rules.header_score((("accept", "text/html"), ("x-variant", "a")), recorded) == 0
