"""The farm's, `replay --junit`'s and `replay bisect --junit`'s JUnit XML: parsed back,
checked mapping by mapping, and validated against Maven Surefire's schema (the one that
knows flakyFailure, vendored under tests/fixtures/junit/)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, get_type_hints

import pytest

from runner.bisect import BisectResult, Candidate, CommitsResult, NotVaried, SweepResult, Trial, Walk
from runner.bisect.commits import Commit
from runner.bisect.search import Status
from runner.verdict.judge import Verdict
from runner.report.junit import OUTCOME, bisect_junit, farm_junit, replay_junit
from runner.farm.records import FarmVerdict, Night, Rate
from runner.replay import Attempt, Expected
from runner.report import ReplayReport
from tests.support.reports import (HOSTILE, KEY, NIGHT, OTHER, REPRO, SIG, cases, every_verdict,
                                    every_verdict_night, result, valid)

# --- the farm ---------------------------------------------------------------------------------

def test_one_testcase_per_capsule_named_by_path_and_repo() -> None:
    night = every_verdict_night()
    suite = valid(farm_junit(night))
    assert suite.tag == "testsuite"
    got = [(c.get("classname"), c.get("name")) for c in suite.iter("testcase")]
    assert got == [(r.repo or r.format, r.path) for r in night.results]
    assert dict(got)["codeinstances"] == "ci/fetch-greeting.json"  # no repo recorded: the format
    assert suite.get("tests") == str(len(night.results))
    assert [c.get("time") for c in suite.iter("testcase")] == ["30.500"] * len(night.results)
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["night.id"] == NIGHT and props["ref"] == "main"
    assert suite.get("time") == "2467.000"  # the night's wall time, 03:00:00 to 03:41:07


def test_counts_follow_the_testcases() -> None:
    suite = valid(farm_junit(every_verdict_night()))
    tcs = list(suite.iter("testcase"))
    for tag, attr in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        assert suite.get(attr) == str(sum(1 for c in tcs if c.find(tag) is not None)), attr
    assert (suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("2", "2", "1")


def test_reproduced_is_a_failure_with_signature_and_key_lines() -> None:
    case = cases(farm_junit(every_verdict_night()))["caps/tz/capsule.json"]
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "reproduced"
    assert SIG in failure.get("message", "") and "3/3" in failure.get("message", "")
    assert failure.text == "\n".join(KEY)
    out = case.findtext("system-out") or ""
    assert "at main: not-fixed" in out  # the verdict at REF, in system-out


def test_different_failure_names_both_signatures() -> None:
    failure = cases(farm_junit(every_verdict_night()))["caps/other.json"].find("failure")
    assert failure is not None and failure.get("type") == "different-failure"
    assert OTHER in failure.get("message", "") and SIG in failure.get("message", "")
    assert failure.text == "TypeError: x is undefined"


def test_flaky_passes_with_one_flaky_failure_per_failed_attempt() -> None:
    case = cases(farm_junit(every_verdict_night()))["caps/flaky.json"]
    assert case.find("failure") is None and case.find("error") is None and case.find("skipped") is None
    flakes = case.findall("flakyFailure")
    assert [f.get("message", "").split(":")[0] for f in flakes] == ["attempt 1", "attempt 3"]
    assert all("2/5" in f.get("message", "") and SIG in f.get("message", "") for f in flakes)
    assert [f.findtext("stackTrace") for f in flakes] == ["\n".join(KEY)] * 2
    assert "reproduced 2/5 attempts: fails in 12–77 % of runs (95 %)" in (case.findtext("system-out") or "")


def test_flaky_without_attempts_on_record_still_has_a_flaky_failure() -> None:
    r = result("caps/f.json", "flaky", rate=Rate(1, 4, 0.05, 0.7))
    flakes = cases(farm_junit(Night("n", "2026-12-01T03:00:00Z", results=(r,))))["caps/f.json"].findall("flakyFailure")
    assert len(flakes) == 1 and "1/4" in flakes[0].get("message", "")


@pytest.mark.parametrize("path", ["nova/01JC4Q7W9Z2M5N8P3R6T1V0X4B", "caps/fixed-on-main.json",
                                  "ci/fetch-greeting.json"])
def test_not_reproduced_fixed_and_recorded_pass_are_passes_with_a_note(path: str) -> None:
    case = cases(farm_junit(every_verdict_night()))[path]
    assert [c.tag for c in case] == ["system-out"]
    out = case.findtext("system-out") or ""
    expected = {"nova/01JC4Q7W9Z2M5N8P3R6T1V0X4B": "did not come back at its commit",
                "caps/fixed-on-main.json": "at main: fixed", "ci/fetch-greeting.json": "verdict: reproduced"}
    assert expected[path] in out


@pytest.mark.parametrize("path, verdict", [("caps/tampered.json", "broken"), ("caps/engine.json", "infra-error")])
def test_broken_and_infra_error_are_errors_with_the_reason(path: str, verdict: str) -> None:
    case = cases(farm_junit(every_verdict_night()))[path]
    error = case.find("error")
    assert error is not None and error.get("type") == verdict
    reason = next(r.reason for r in every_verdict() if r.path == path)
    assert error.get("message") == f"{verdict}: {reason}" and reason in (error.text or "")


def test_inconclusive_is_skipped_and_ref_inconclusive_is_noted() -> None:
    got = cases(farm_junit(every_verdict_night()))
    skipped = got["caps/slow.json"].find("skipped")
    assert skipped is not None and "timed out" in skipped.get("message", "")
    assert "at main: inconclusive" in (got["nova/01JC4Q7W9Z2M5N8P3R6T1V0X4B"].findtext("system-out") or "")


@pytest.mark.parametrize("verdict", sorted(OUTCOME))
def test_every_verdict_maps_to_one_valid_testcase(verdict: FarmVerdict) -> None:
    r = result("caps/x.json", verdict, signature=SIG, exit_code=1, reason="why", key_lines=KEY,
               attempts=[("recorded", 1, SIG), ("pass", 0, None)])
    case = cases(farm_junit(Night("n", "2026-12-01T03:00:00Z", results=(r,))))["caps/x.json"]
    tags = {c.tag for c in case} - {"system-out"}
    assert tags == {"pass": set(), "failure": {"failure"}, "error": {"error"},
                    "skipped": {"skipped"}}[OUTCOME[verdict]] | ({"flakyFailure"} if verdict == "flaky" else set())


def test_hostile_strings_stay_text_and_the_file_stays_valid() -> None:
    nasty = f"{HOSTILE}\x1b[31m\x00 & ]]> \ud800"
    r = result(HOSTILE, "reproduced", signature=SIG, key_lines=(nasty,), repo=f"{HOSTILE}\x07",
               reason=nasty, attempts=REPRO)
    xml = farm_junit(Night("n", "2026-12-01T03:00:00Z", results=(r, result("b.json", "broken", reason=nasty))))
    got = cases(xml)
    assert got[HOSTILE].get("classname") == f"{HOSTILE}\\x07"
    text = got[HOSTILE].findtext("failure") or ""
    assert text.startswith(HOSTILE) and "\\x1b[31m\\x00" in text and "\\ud800" in text
    assert "<script>" not in xml  # escaped, not markup


def test_messages_are_short_single_lines_and_text_is_capped() -> None:
    long = "x" * 5000
    r = result("caps/long.json", "broken", reason=f"first line\nsecond {long}", key_lines=(long,) * 100)
    error = cases(farm_junit(Night("n", "2026-12-01T03:00:00Z", results=(r,))))["caps/long.json"].find("error")
    assert error is not None
    assert len(error.get("message", "")) <= 200 and "\n" not in error.get("message", "")
    lines = (error.text or "").split("\n")
    assert len(lines) <= 41 and max(map(len, lines)) <= 500 and lines[-1].endswith("more lines")


def test_an_empty_night_is_a_valid_empty_suite() -> None:
    suite = valid(farm_junit(Night("n", "2026-12-01T03:00:00Z")))
    assert suite.get("tests") == "0" and list(suite.iter("testcase")) == []


# --- one replay -------------------------------------------------------------------------------

def report(verdict: str, classes: Sequence[str], failed: bool = True) -> ReplayReport:
    """A ReplayReport built from the real classes (found through its annotations, wherever
    the core keeps them)."""
    from runner.report import Step

    hints = get_type_hints(ReplayReport)
    atts = tuple(Attempt(1 if c in ("recorded", "other") and failed else 0, None,
                         SIG if c == "recorded" else OTHER, KEY if c == "recorded" else ("boom",), 2.5,
                         classification=c) for c in classes)  # type: ignore[arg-type]
    return ReplayReport(
        verdict=verdict, capsule=hints["capsule"]("caps/tz/capsule.json", "twin", "c0ffee"),  # type: ignore[arg-type]
        expected=Expected(failed, 1 if failed else 0, None, SIG if failed else None, KEY if failed else ()),
        attempts=atts, fidelity=(), image=hints["image"]("replay/img:x", True, 12.0, 9, "buildkit", "bookworm"),
        verification=hints["verification"](True), steps=(Step("build", 12.0), Step("run", 7.5)))


def test_replay_junit_reproduced_is_one_failing_testcase() -> None:
    suite = valid(replay_junit(report("reproduced", ["recorded"] * 3)))
    (case,) = suite.iter("testcase")
    assert (case.get("classname"), case.get("name"), case.get("time")) == ("twin", "caps/tz/capsule.json", "19.500")
    failure = case.find("failure")
    assert failure is not None and SIG in failure.get("message", "") and "3/3" in failure.get("message", "")
    assert failure.text == "\n".join(KEY)


def test_replay_junit_flaky_not_reproduced_and_recorded_pass() -> None:
    flaky = valid(replay_junit(report("flaky", ["recorded", "pass", "other"])))
    flakes = flaky.find("testcase").findall("flakyFailure")  # type: ignore[union-attr]
    assert len(flakes) == 2 and all("1/3" in f.get("message", "") for f in flakes)
    assert flaky.get("failures") == "0"
    for rep in (report("not-reproduced", ["pass"] * 3), report("reproduced", ["recorded"] * 3, failed=False)):
        case = valid(replay_junit(rep)).find("testcase")
        assert case is not None and [c.tag for c in case] == ["system-out"]
    other = valid(replay_junit(report("different-failure", ["other"] * 3))).find("testcase/failure")
    assert other is not None and OTHER in other.get("message", "") and other.text == "boom"


# --- one bisect -------------------------------------------------------------------------------

def trial(number: int, verdict: Verdict = "not-reproduced", **kw: Any) -> Trial:
    return Trial(number, "search", verdict, None, False, 1.25, 2.0, **kw)


def facts_result(status: Status, minimal: Sequence[str] = ()) -> BisectResult:
    """A facts-mode result, as runner.bisect.search returns it."""
    cands = (Candidate("env:TZ", "run", 1, "UTC", "America/New_York"),
             Candidate("pin:node:lodash", "build", 20, "4.17.20", "4.17.21"))
    return BisectResult(status, cands, tuple(minimal), tuple(trial(i) for i in range(1, 5)),
                        not_varied=(NotVaried("argv", "a", "b", "the command itself"),))


def test_bisect_found_names_the_minimal_set() -> None:
    suite = valid(bisect_junit(replace(facts_result("found", ["env:TZ"]), confidence=0.98), "bad.json"))
    (case,) = suite.iter("testcase")
    assert case.get("name") == "bad.json" and case.get("time") == "13.000"
    failure = case.find("failure")
    assert failure is not None and failure.get("message") == "minimal set: env:TZ (confidence 0.98)"
    assert failure.text == "env:TZ: UTC -> America/New_York"


def test_bisect_undecided_is_a_failure_with_what_is_known() -> None:
    from runner.bisect import Chance, Removal

    undecided = replace(facts_result("undecided", ["env:CI", "env:TZ"]), confidence=0.81,
                        removals=(Removal("env:CI", 3, 0, 0.19), Removal("env:TZ", 6, 0, 0.0)))
    failure = valid(bisect_junit(undecided, "bad.json")).find("testcase/failure")
    assert failure is not None and failure.get("message") == "undecided, so far: env:CI, env:TZ (confidence 0.81)"
    assert "without env:CI: 0/3 runs failed as recorded (luck 0.1900)" in (failure.text or "")
    walk = Walk("undecided", "g", ("b" * 40, "c" * 40), None, None, (), confidence=0.61,
                candidates=(Chance("b" * 40, 0.61), Chance("c" * 40, 0.39)))
    failure = valid(bisect_junit(CommitsResult(walk, (Commit("b" * 40, "x"), Commit("c" * 40, "y"))),
                                 "bad.json")).find("testcase/failure")
    assert failure is not None
    assert failure.get("message") == f"undecided, likeliest first: {'b' * 12} (0.61), {'c' * 12} (0.39)"


@pytest.mark.parametrize("status, tag", [("no culprit", "failure"), ("baseline fails", "error"),
                                         ("not-reproduced", None)])
def test_bisect_other_answers(status: Status, tag: str | None) -> None:
    case = valid(bisect_junit(facts_result(status), "bad.json")).find("testcase")
    assert case is not None
    assert [c.tag for c in case] == ([tag] if tag else []) + ["system-out"]
    assert status in (case.findtext("system-out") or "")
    if status == "no culprit":
        assert case.findtext("failure") == "not varied: argv: the command itself"


def test_bisect_commits_and_sweep_modes() -> None:
    walk = Walk("found", "g", ("b" * 40,), "b" * 40, "g", (Trial(1, "search", "reproduced", SIG, True, 0.5, 1.5),),
                ("monotonic",), confidence=0.97)
    commits = CommitsResult(walk, (Commit("b" * 40, "Use TZ"),))
    case = valid(bisect_junit(commits, "bad.json")).find("testcase")
    assert case is not None and case.get("classname") == "replay bisect commits" and case.get("time") == "2.000"
    failure = case.find("failure")
    assert failure is not None and failure.get("message") == f"first failing commit: {'b' * 12} Use TZ (probability 0.97)"
    assert "note: monotonic" in (case.findtext("system-out") or "")
    sweep = SweepResult("pin:python:six", "six", "pypi", True, replace(walk, line=("1.16.0",), first_failing="1.16.0",
                                                                          last_passing="1.15.0"))
    failure = valid(bisect_junit(sweep, "bad.json")).find("testcase/failure")
    assert failure is not None and failure.get("message") == "fails from six 1.16.0 (last passing: 1.15.0), probability 0.97"
