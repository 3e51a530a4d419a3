""""Since last night": what changed for each capsule, with a flaky failure's noise held back
(judged on the pooled runs, with --fixed-after as the least nights without the failure before
it counts as gone; a flaky capsule's signatures kept as a set), and the attention groups on
the same rules."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from runner.farm.attention import build, mark_of
from runner.farm.history import Judging, standings, transitions, unseen
from runner.farm.records import CapsuleResult, Night, Rate

from tests.unit.farm.records import night, result

FAIL, PASS, OTHER = "exit1:aaaa", "exit0:bbbb", "exit1:cccc"


# A night's runs as the farm's sampling ends them at its defaults: 3 that agree, or 10 that disagree.
RUNS = {"reproduced": Rate.of(3, 3), "not-reproduced": Rate.of(0, 3), "flaky": Rate.of(4, 10)}


def _night(nid: str, *results: CapsuleResult) -> Night:
    with_runs = tuple(r if r.rate is not None or r.verdict not in RUNS else replace(r, rate=RUNS[r.verdict])
                      for r in results)
    return night(nid, "2026-12-01T00:00:00Z", results=with_runs)


def _moves(nights: list[Night], fixed_after: int = 3) -> set[tuple[str, str, str, str]]:
    return {(t.capsule_id, t.kind, t.before, t.after) for t in transitions(nights, fixed_after)}


def test_each_kind_of_change_is_named() -> None:
    before = _night("n1", result("n1", "a", "broken"), result("n1", "b", "reproduced", signature="exit1:x"),
                    result("n1", "c", "reproduced"), result("n1", "d", "reproduced"),
                    result("n1", "e", "reproduced", ref="abc1234", ref_verdict="not-fixed"),
                    result("n1", "f", "reproduced", signature="exit1:x"), result("n1", "gone", "reproduced"),
                    result("n1", "g", "reproduced", rate=Rate.of(30, 30)), result("n1", "h", "reproduced"))
    after = _night("n2", result("n2", "a", "reproduced"), result("n2", "b", "reproduced", signature="exit1:y"),
                   result("n2", "c", "flaky"), result("n2", "d", "broken", reason="does not verify"),
                   result("n2", "e", "reproduced", ref="abc1234", ref_verdict="fixed"),
                   result("n2", "f", "reproduced", signature="exit1:x"), result("n2", "new", "not-reproduced"),
                   result("n2", "g", "not-reproduced"), result("n2", "h", "different-failure"))
    assert _moves([before, after], fixed_after=1) == {
        ("a", "newly-reproducing", "broken", "reproduced"),
        ("b", "signature-changed", "reproduced", "reproduced"),
        ("c", "flaky", "reproduced", "flaky"),
        ("d", "broken", "reproduced", "broken"),
        ("e", "fixed", "not-fixed", "fixed"),
        ("new", "new", "new", "not-reproduced"),
        ("g", "no-longer-reproducing", "reproduced", "not-reproduced"),
        ("h", "other", "reproduced", "different-failure"),
    }


def test_a_fix_already_seen_last_night_is_not_news() -> None:
    before = _night("n1", result("n1", "e", "reproduced", ref="abc1234", ref_verdict="fixed"))
    after = _night("n2", result("n2", "e", "reproduced", ref="abc1234", ref_verdict="fixed"))
    assert transitions([before, after]) == ()


@pytest.mark.parametrize("fixed_after", [1, 2, 3, 5])
def test_a_deterministic_failure_counts_as_gone_after_n_nights_in_a_row_without_it(fixed_after: int) -> None:
    verdicts = ["reproduced"] * 10 + ["not-reproduced"] * 6
    nights = [_night(f"n{i}", result(f"n{i}", "c", v)) for i, v in enumerate(verdicts)]
    said = {i: _moves(nights[:i + 1], fixed_after) for i in range(2, len(nights))}
    gone_at = 9 + fixed_after  # the fixed_after-th night without the failure: after 30/30, 0/3 is already below
    assert said[gone_at] == {("c", "no-longer-reproducing", "reproduced", "not-reproduced")}
    assert all(not moved for i, moved in said.items() if i != gone_at)  # before it and after it: nothing


def test_a_flaky_failure_counts_as_gone_only_when_the_runs_without_it_are_below_its_rate() -> None:
    # 3/3, then 4/10 twice: 11/23 before; three nights of 0/3 are not below it at the confidence
    # held for each night of the window, more are
    verdicts = ["reproduced", "flaky", "flaky"] + ["not-reproduced"] * 12
    nights = [_night(f"n{i}", result(f"n{i}", "c", v)) for i, v in enumerate(verdicts)]
    said = {i: _moves(nights[:i + 1], 3) for i in range(3, len(nights))}
    gone = [i for i, moved in said.items() if moved]
    assert len(gone) == 1 and gone[0] > 5  # later than the 3rd night without the failure, and once
    (t,) = transitions(nights[:gone[0] + 1], 3)
    assert t.detail.startswith(f"{gone[0] - 2} night(s) in a row without the failure: 0/{3 * (gone[0] - 2)} runs, "
                               "below the window's 11/23 (")


def test_a_night_with_the_failure_starts_the_count_again() -> None:
    verdicts = ["reproduced", "not-reproduced", "not-reproduced", "flaky", "not-reproduced", "not-reproduced"]
    steps = standings([(v, RUNS[v].failed, RUNS[v].runs) for v in verdicts], Judging(fixed_after=3))
    assert [s.state for s in steps] == ["reproduced"] * 3 + ["flaky"] * 3  # never 3 in a row
    assert [s.held for s in steps] == [0, 1, 2, 0, 1, 2]
    nights = [_night(f"n{i}", result(f"n{i}", "c", v)) for i, v in enumerate(verdicts)]
    assert _moves(nights[:3]) == set()  # two nights without it: still reproducing
    assert _moves(nights[:4]) == {("c", "flaky", "reproduced", "flaky")}  # it stood as reproduced until then
    assert _moves(nights) == set()


def test_a_flaky_capsules_known_signatures_are_no_change() -> None:
    def flaky(nid: str, common: str, *seen: str) -> CapsuleResult:
        return result(nid, "c", "flaky", signature=common, signatures=tuple(sorted(seen)))

    n1 = _night("n1", flaky("n1", FAIL, FAIL, PASS))
    n2 = _night("n2", flaky("n2", PASS, FAIL, PASS))  # the most common one flipped: no news
    assert _moves([n1, n2]) == set()
    n3 = _night("n3", result("n3", "c", "reproduced", signature=FAIL, signatures=(FAIL,)))
    n4 = _night("n4", result("n4", "c", "reproduced", signature=OTHER, signatures=(OTHER,)))
    assert _moves([n1, n2, n3]) == set()  # a flaky capsule's night that failed 3 of 3: still flaky
    assert _moves([n1, n2, n3, n4]) == {("c", "signature-changed", "flaky", "flaky")}  # never seen before


def _view(plan: dict[str, list[str | None]], **extra: Any) -> dict[str, Any]:
    nights = []
    count = max(len(v) for v in plan.values())
    for i in range(count):
        results = tuple(result(f"n{i}", cid, v, signature=FAIL if v in ("reproduced", "flaky") else PASS,
                               **extra.get(cid, {}))
                        for cid, vs in plan.items() if (v := vs[i]) is not None)
        nights.append(night(f"n{i}", f"2026-12-0{i + 1}T03:00:00Z", results=results))
    marks = [[mark_of(r) for r in n.results] for n in nights[:-1]]
    view = build(nights, marks, lambda i: {r.capsule_id: (r.path, False) for r in nights[i].results})
    return {r.capsule_id: r for r in view.rows}


def test_a_capsule_never_reproduced_here_has_its_own_group_with_what_was_not_applied() -> None:
    rows = _view({"never": ["not-reproduced", "different-failure", "not-reproduced"],
                  "once": ["reproduced", "not-reproduced", "not-reproduced"],
                  "broken": ["broken", "broken", "broken"]},
                 never={"not_applied": ("env API_KEY: not applied (value not recorded)",)})
    assert rows["never"].group == "never-reproduced" and rows["never"].news
    assert rows["never"].not_applied == ("env API_KEY: not applied (value not recorded)",)
    # reproduced once, then two nights without it: still standing as reproducing, nothing new
    assert (rows["once"].group, rows["once"].verdict, rows["once"].standing, rows["once"].held) == (
        "steady", "not-reproduced", "reproduced", 2)
    assert rows["broken"].group == "steady"  # no verdict ever: trouble of its own, not "never reproduced"


def test_a_flaky_capsule_stays_still_flaky_through_a_quiet_night() -> None:
    rows = _view({"c": ["flaky", "flaky", "not-reproduced", "flaky"]})
    assert (rows["c"].group, rows["c"].last_change.before) == ("still-flaky", "new")


def test_only_passes_while_reproducing_make_a_night_that_failed_every_run_flaky() -> None:
    def states(verdicts: list[str]) -> list[str]:
        return [s.state for s in standings([(v, RUNS[v].failed, RUNS[v].runs) for v in verdicts])]
    n, r, f = "not-reproduced", "reproduced", "flaky"
    assert states([n] * 10 + [r] * 4) == [n] * 10 + [r] * 4  # a regression after 0/30: at once
    assert states([r] * 6 + [n] * 3 + [r]) == [r] * 8 + [n, r]  # back after its fix: at once
    assert states([r, n, r]) == [r, r, f]  # a pass while it stood as reproducing: flaky
    assert states([f, f, n, r]) == [f] * 4
    # first seen passing: one night of 0/3 then 3/3 is one flaky rate; after 0/24 too, at the
    # confidence held per night of the window; after 0/27 it is a failure that came
    assert states([n, r]) == [n, f] and states([n] * 8 + [r]) == [n] * 8 + [f]
    assert states([n] * 9 + [r]) == [n] * 9 + [r]


def test_a_signature_is_news_only_when_no_earlier_night_had_it() -> None:
    def at(sigs: tuple[str, ...]) -> CapsuleResult:
        return result("n", "c", "reproduced", signature=sigs[0], signatures=sigs)

    earlier = [at(("A",)), at(("B", "C")), at(("A",)), at(("A",))]
    assert not unseen(at(("B",)), earlier)  # seen three nights back: not news
    assert not unseen(at(("A", "C")), earlier)
    assert unseen(at(("A", "D")), earlier)  # D never was
    assert unseen(at(("B",)), []) and not unseen(result("n", "c", "not-reproduced"), earlier)
