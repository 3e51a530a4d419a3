"""The report codec: to_json -> from_json -> to_json is byte for byte the same."""
from __future__ import annotations

import json

import pytest

from runner.codec import DecodeError
from runner.httpreplay.served import Difference, HttpReport, ServedCall, UnmatchedRequest, UnusedCall
from runner.verdict.judge import Attempt, Expected
from runner.build.plan import Drift, Fidelity
from runner.report import CapsuleRef, ImageInfo, ReplayReport, Step, Verification, from_json, to_json


def report() -> ReplayReport:
    expected = Expected(True, 1, None, "exit1:0aee0834ac9c4d2d", ("FAIL x",), b"out\n", "recorded")
    attempts = (Attempt(1, None, "exit1:0aee0834ac9c4d2d", ("FAIL x",), 1.25, False, b"\xff\xfebinary", "tail",
                        "recorded"),
                Attempt(None, "SIGKILL", "sig", (), 600.0, True, b"", "", "inconclusive"))
    http = HttpReport(served=(ServedCall(1, "GET", "https://a/x", "response 200", None),),
                      unmatched=(UnmatchedRequest("POST", "https://a/y", 3, 1, "GET https://a/x",
                                                  (Difference("method", "POST vs GET"),)),),
                      unused=(UnusedCall(2, "GET", "https://a/z"),), notes=("n",))
    return ReplayReport(
        verdict="flaky", capsule=CapsuleRef("c.json", "twin", "abc"), expected=expected, attempts=attempts,
        fidelity=(Fidelity("env TZ", "America/New_York", "America/New_York", "exact"),),
        image=ImageInfo("replay/img:x", True, 12.5, 7, "buildkit", "debian:bookworm"),
        verification=Verification(True, False, None, ()), steps=(Step("plan", 0.1),),
        drift=(Drift("six", "1.16.0", "1.17.0"),), http=http, notes=("a note",))


def test_a_report_reads_back_to_the_same_value_and_the_same_bytes() -> None:
    r = report()
    data = json.loads(json.dumps(to_json(r)))
    assert data["schema"] == "replay.report/1" and data["attempts"][0]["stdout"] == {"base64": "//5iaW5hcnk="}
    assert data["expected"]["stdout"] == "out\n"  # text stays text
    back = from_json(data)
    assert back == r
    assert json.dumps(to_json(back)) == json.dumps(data)


def test_a_report_of_another_schema_is_refused() -> None:
    with pytest.raises(DecodeError, match="replay.report/1"):
        from_json({"schema": "replay.report/2"})
    with pytest.raises(DecodeError, match="verdict"):
        from_json({**to_json(report()), "verdict": "maybe"})
