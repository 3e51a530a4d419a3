"""A verdict that says why (issue 30): NOT-REPRODUCED and DIFFERENT-FAILURE end with the likeliest
causes, ranked, each with the command to try next; none when the run came back."""
from __future__ import annotations

from pathlib import Path

import pytest

from runner.build.plan import Fidelity, PlanOptions
from runner.engine import RunResult, RunSpec
from runner.httpreplay.report import Difference, HttpReport, UnmatchedRequest, UnusedCall
from runner.replay import Progress, ReplayOptions, replay_capsule
from runner.replay.why import likeliest
from runner.report import from_json, show, to_json
from runner.verdict.judge import Attempt, Expected
from runner.verdict.sameness import OutputDiff
from tests.examples import BUNDLE, TZ_CAPSULE, json_variant
from tests.unit.fake_engine import FakeEngine

FAILED = Expected(True, 1, None, "exit1:abc", ("Error: boom",))
PASSED = Attempt(0, None, "", (), 0.1, classification="pass")
RERUN = ["replay", "c.json", "--repo", "../app.git"]
NAME_ONLY = Fidelity("env APP_LANG", "set (value not recorded)", "unset", "not applied", "value not recorded")
TERM_ONLY = Fidelity("env TERM", "set (value not recorded)", "unset", "not applied", "value not recorded")
NODE = Fidelity("runtime node", "not recorded", "22.23.5", "approximated", "the newest 22.x")


def test_a_run_that_came_back_needs_no_cause() -> None:
    assert likeliest("reproduced", FAILED, [PASSED], [NAME_ONLY], None, RERUN) == ()


def test_a_variable_without_its_value_says_how_to_supply_it_now_and_record_it_next_time() -> None:
    (cause,) = likeliest("not-reproduced", FAILED, [PASSED] * 3, [NAME_ONLY], None, RERUN)
    assert (cause.cause, cause.fact) == ("env-value", "env APP_LANG")
    assert cause.next.startswith("replay c.json --repo ../app.git --env 'APP_LANG=…' now")
    assert "replay capture --include-env APP_LANG" in cause.next


def test_causes_are_ranked_requests_first_then_decisive_variables() -> None:
    http = HttpReport(unmatched=(UnmatchedRequest("GET", "https://api.example.com/x?ts=2", 0, 1,
                                                  "GET https://api.example.com/x?ts=1",
                                                  (Difference("query", "extra ['ts=2'], missing ['ts=1']"),)),),
                      unservable=(UnusedCall(2, "GET", "http://127.0.0.1:9/", "loopback"),))
    causes = likeliest("not-reproduced", FAILED, [PASSED], [NODE, NAME_ONLY, TERM_ONLY], http, RERUN)
    assert [c.fact for c in causes] == ["http GET https://api.example.com/x?ts=2", "http GET http://127.0.0.1:9/",
                                        "env TERM", "env APP_LANG", "runtime node"]
    assert causes[0].next == "replay c.json --repo ../app.git --http-ignore=ts"  # the parameter that differs
    assert "--sweep runtime:node" in causes[-1].next


def test_a_difference_in_output_only_is_named_with_where() -> None:
    other = Attempt(0, None, "", (), 0.1, classification="other",
                    differs=OutputDiff("stdout", 3, "added 1 package", "added 2 packages"))
    (cause,) = likeliest("not-reproduced", Expected(False, 0, None, None), [other, other], [], None, RERUN)
    assert cause.cause == "output"
    assert cause.evidence.startswith("2/2 attempt(s) passed as recorded, but stdout differs at line 3")


@pytest.mark.usefixtures("offline_registry")
def test_the_report_ends_with_the_causes_and_carries_them_in_its_json(tmp_path: Path) -> None:
    """APP_LANG=de recorded by name only and the run passes here: NOT-REPRODUCED says why."""
    capsule = json_variant(TZ_CAPSULE, tmp_path, lambda d: d["env"].update(APP_LANG={"state": "set"}))

    def run(spec: RunSpec) -> RunResult:
        if spec.argv[:2] == ("sh", "-c"):  # the image-facts probe
            return RunResult(0, b"2.36\n---\n{}", b"2.36\n---\n{}", 0.1)
        return RunResult(0, b"ok\n", b"ok\n", 0.2)

    report = replay_capsule(capsule, ReplayOptions(plan=PlanOptions(repo=str(BUNDLE))), Progress(),
                            engine=FakeEngine(run=run, images=["replay-base/debian:bookworm"]))
    assert report.verdict == "not-reproduced"
    assert any(c.fact == "env APP_LANG" for c in report.why)
    data = to_json(report)
    assert {"cause", "fact", "evidence", "next"} == set(data["why"][0])
    assert from_json(data) == report

    import io

    from rich.console import Console

    out = io.StringIO()
    show(report, Console(file=out, width=200))
    said = out.getvalue()
    assert "why, likeliest first:" in said and f"--repo {BUNDLE} --env 'APP_LANG=…'" in said
