"""Recorded HTTP matched as the recorders people use match it, on the real engine: a cache-buster
served (and named), a parameter and a header left out with --http-ignore, an IPv4 address held by
the sidecar on the replay network, and a loopback call named before the first attempt.

One CodeInstances instance, written here; its image is built once and shared by every replay
below (the matching rules apply at run time)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from runner.capsules.codeinstances import compute_id
from runner.cli.main import main
from runner.report import from_json, to_json
from tests.envelope import result_of

pytestmark = pytest.mark.integration

PROGRAM = """\
import random, time, urllib.error, urllib.request
def get(url, **headers):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5) as r:
            return r.read().decode()
    except urllib.error.HTTPError as e:
        return "status %d" % e.code
    except urllib.error.URLError as e:
        return "error " + type(e.reason).__name__
    except OSError as e:
        return "error " + type(e).__name__
print("feed", get("https://api.example.com/feed?ts=%d" % (time.time() * 1000)))
print("item", get("https://api.example.com/item?id=4&sig=run-%d" % random.randrange(10 ** 6)))
print("variant", get("https://api.example.com/variant", **{"X-Variant": "b"}),
      get("https://api.example.com/variant", **{"X-Variant": "a"}))
print("ping", get("http://10.77.3.9:8080/ping"))
print("local", get("http://127.0.0.1:9/health"))
"""
RECORDED_STDOUT = "feed fresh\nitem four\nvariant B A\nping pong\nlocal error ConnectionRefusedError\n"


def _call(seq: int, url: str, text: str | None, headers: list[list[str]] | None = None) -> dict[str, Any]:
    request = {"method": "GET", "url": url, "headers": headers or [["User-Agent", "Python-urllib/3.11"]],
               "body": None}
    if text is None:
        return {"seq": seq, "atMs": float(seq), "request": request,
                "error": {"kind": "connect-refused", "message": "[Errno 111] Connection refused"}}
    return {"seq": seq, "atMs": float(seq), "request": request,
            "response": {"status": 200, "reason": "OK", "body": {"text": text},
                         "headers": [["Content-Type", "text/plain"], ["Content-Length", str(len(text))]]}}


@pytest.fixture(scope="module")
def instance(tmp_path_factory: pytest.TempPathFactory) -> Path:
    doc: dict[str, Any] = {
        "format": "codeinstances/0",
        "command": {"argv": ["python3", "-c", PROGRAM], "cwd": "/home/sam"},
        "result": {"exitCode": 0, "signal": None, "durationMs": 300.0, "stdout": {"text": RECORDED_STDOUT},
                   "stderr": {"text": ""}},
        "calls": [
            _call(1, "https://api.example.com/feed?ts=1690000000000", "fresh"),
            _call(2, "https://api.example.com/item?id=4&sig=run-recorded", "four"),
            _call(3, "https://api.example.com/variant", "A", [["X-Variant", "a"]]),
            _call(4, "https://api.example.com/variant", "B", [["X-Variant", "b"]]),
            _call(5, "http://10.77.3.9:8080/ping", "pong"),
            _call(6, "http://127.0.0.1:9/health", None),
        ],
        "values": [],
    }
    doc["id"] = compute_id(doc)
    path = tmp_path_factory.mktemp("http-rules") / "instance.json"
    path.write_text(json.dumps(doc))
    return path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("REPLAY_PROGRESS", "1")  # the steps (and warnings) on stderr beside --json, in their order
        rc = main([*args, "-n", "1", "--json"])
    captured = capsys.readouterr()
    return rc, result_of(captured.out), captured.err


def test_without_rules_the_changed_parameter_is_unmatched_and_named(
        engine: object, capsys: pytest.CaptureFixture[str], instance: Path) -> None:
    rc, report, _ = _run(capsys, str(instance))
    assert report["attempts"][0]["stdout"].splitlines()[1] == "item status 599"  # the replay's "not in recording"
    assert (rc, report["verdict"]) == (1, "not-reproduced")
    (miss,) = report["http"]["unmatched"]
    assert miss["nearest"] == 2 and [d["part"] for d in miss["differences"]] == ["query"]


def test_a_cache_buster_is_served_an_ignored_parameter_matches_an_address_is_served_and_loopback_said_first(
        engine: object, capsys: pytest.CaptureFixture[str], instance: Path) -> None:
    rc, report, err = _run(capsys, str(instance), "--http-ignore", "sig")
    assert report["attempts"][0]["stdout"] == RECORDED_STDOUT, report["attempts"][0]["output_tail"]
    assert (rc, report["verdict"]) == (0, "reproduced")
    http = report["http"]
    served = {s["seq"]: s for s in http["served"]}
    assert sorted(served) == [1, 2, 3, 4, 5] and http["unmatched"] == [] and http["unused"] == []
    (volatile,) = served[1]["volatile"]
    assert volatile.startswith("query ts: ") and volatile.endswith("(recorded 1690000000000, unix time)")
    assert served[5]["url"] == "http://10.77.3.9:8080/ping"  # the sidecar held 10.77.3.9 itself
    assert [(u["seq"], "loopback" in u["why"]) for u in http["unservable"]] == [(6, True)]
    warning = next(i for i, line in enumerate(err.splitlines()) if "warning: 1 recorded call(s) to 127.0.0.1:9 (#6)" in line)
    first_attempt = next(i for i, line in enumerate(err.splitlines()) if "attempt" in line)
    assert warning < first_attempt, err  # named before the first attempt, not "never made" after it
    assert any(f["fact"] == "http 127.0.0.1:9" and f["status"] == "not applied" for f in report["fidelity"])
    assert not any("keystore" in n for n in http["notes"])
    assert json.dumps(to_json(from_json(report))) == json.dumps(report)  # the new fields read back


def test_an_ignored_header_no_longer_chooses_among_matching_calls(
        engine: object, capsys: pytest.CaptureFixture[str], instance: Path) -> None:
    rc, report, _ = _run(capsys, str(instance), "--http-ignore", "sig", "--http-ignore", "X-Variant")
    assert report["attempts"][0]["stdout"].splitlines()[2] == "variant A B"  # recorded order, headers left out
    assert (rc, report["verdict"]) == (1, "not-reproduced")
