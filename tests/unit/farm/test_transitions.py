""""Since last night": what changed for each capsule between two nights."""
from __future__ import annotations

from runner.farm.history import transitions

from tests.unit.farm.records import night, result


def _night(nid: str, *results: object) -> object:
    return night(nid, "2026-12-01T00:00:00Z", results=tuple(results))  # type: ignore[arg-type]


def test_each_kind_of_change_is_named() -> None:
    before = _night("n1", result("n1", "a", "not-reproduced"), result("n1", "b", "reproduced", signature="exit1:x"),
                    result("n1", "c", "reproduced"), result("n1", "d", "reproduced"),
                    result("n1", "e", "reproduced", ref="abc1234", ref_verdict="not-fixed"),
                    result("n1", "f", "reproduced", signature="exit1:x"), result("n1", "gone", "reproduced"),
                    result("n1", "g", "reproduced"))
    after = _night("n2", result("n2", "a", "reproduced"), result("n2", "b", "reproduced", signature="exit1:y"),
                   result("n2", "c", "flaky"), result("n2", "d", "broken", reason="does not verify"),
                   result("n2", "e", "reproduced", ref="abc1234", ref_verdict="fixed"),
                   result("n2", "f", "reproduced", signature="exit1:x"), result("n2", "new", "not-reproduced"),
                   result("n2", "g", "not-reproduced"))
    got = {(t.capsule_id, t.kind, t.before, t.after) for t in transitions(before, after)}  # type: ignore[arg-type]
    assert got == {
        ("a", "newly-reproducing", "not-reproduced", "reproduced"),
        ("b", "signature-changed", "reproduced", "reproduced"),
        ("c", "flaky", "reproduced", "flaky"),
        ("d", "broken", "reproduced", "broken"),
        ("e", "fixed", "not-fixed", "fixed"),
        ("new", "new", "new", "not-reproduced"),
        ("g", "other", "reproduced", "not-reproduced"),
    }


def test_a_fix_already_seen_last_night_is_not_news() -> None:
    before = _night("n1", result("n1", "e", "reproduced", ref="abc1234", ref_verdict="fixed"))
    after = _night("n2", result("n2", "e", "reproduced", ref="abc1234", ref_verdict="fixed"))
    assert transitions(before, after) == ()  # type: ignore[arg-type]
