"""Outcomes matched as people mean them, end to end in real containers (issue 30): each
attempt's program decides its own output (a duration, a seed, an order) at run time, and
replay must still say REPRODUCED, or say where the output differs when it does not."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from runner.capsules.codeinstances import compute_id
from tests.integration.helpers import replay, twin_capsule, write_json

pytestmark = pytest.mark.integration

# Prints what `npm install ms@2.1.3` prints, with its own duration each run.
PASSING = ("import random; print(); print(f'added 1 package in {random.randint(100, 999)}ms'); "
           "print('1 package is looking for funding')")
# Fails as a Hypothesis health check does: a new seed each run, the same failure.
SEEDED = ("import random, sys; s = random.getrandbits(128); "
          "print('E   hypothesis.errors.FailedHealthCheck: It looks like this test is filtering out a lot of inputs.'); "
          "print(f'You can reproduce this failure by adding @seed({s}) to this test, or by running pytest with "
          "--hypothesis-seed={s}.'); "
          "print('FAILED tests/test_hc.py::test_rare_values - hypothesis.errors.FailedHealthChe...'); sys.exit(1)")
# Fails the same two tests, in an order and with messages of its own each run (pytest-randomly, CI or not).
SHUFFLED = ("import random, sys; t = ['tests/test_a.py::test_one', 'tests/test_b.py::test_two[x - y]']; "
            "random.shuffle(t); w = random.randint(5, 60); "
            "[print(f'FAILED {n} - AssertionError: ' + 'assert 1 == 2 and a long message'[:w]) for n in t]; "
            "print(f'==== 2 failed in {random.random():.2f}s ===='); sys.exit(1)")


def instance(path: Path, argv: list[str], stdout: str) -> Path:
    """A CodeInstances instance (the format that records stdout) of a passing run, no HTTP."""
    doc: dict[str, Any] = {"format": "codeinstances/0", "command": {"argv": argv, "cwd": "/home/sam"},
                           "result": {"exitCode": 0, "signal": None, "durationMs": 805.0, "stdout": {"text": stdout},
                                      "stderr": {"text": ""}},
                           "calls": [], "values": []}
    doc = {"format": doc["format"], "id": compute_id(doc), **doc}
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return path


def test_a_pass_printing_another_duration_reproduces(engine: object, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    recorded = "\nadded 1 package in 805ms\n1 package is looking for funding\n"
    rc, report = replay(capsys, instance(tmp_path / "pass.json", ["python3", "-c", PASSING], recorded), "-n", "2")
    stdouts = [a["stdout"] for a in report["attempts"]]
    assert all("added 1 package in " in s and s != recorded for s in stdouts), stdouts  # it did vary
    assert (rc, report["verdict"]) == (0, "reproduced")
    assert [a["differs"] for a in report["attempts"]] == [None, None]


def test_a_pass_printing_something_else_says_where(engine: object, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    recorded = "\nadded 2 packages in 805ms\n1 package is looking for funding\n"
    rc, report = replay(capsys, instance(tmp_path / "other.json", ["python3", "-c", PASSING], recorded), "-n", "1")
    assert (rc, report["verdict"]) == (1, "not-reproduced")
    assert report["attempts"][0]["differs"] == {"stream": "stdout", "line": 2,
                                                "recorded": "added 2 packages in <duration>",
                                                "here": "added 1 package in <duration>"}


def test_a_failure_differing_only_in_its_seed_reproduces(engine: object, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    recorded = ("E   hypothesis.errors.FailedHealthCheck: It looks like this test is filtering out a lot of inputs.\n"
                "You can reproduce this failure by adding @seed(198570294370348978162418504738934495552) to this "
                "test, or by running pytest with --hypothesis-seed=198570294370348978162418504738934495552.\n"
                "FAILED tests/test_hc.py::test_rare_values - hypothesis.errors.FailedHealthChe...\n")
    capsule = write_json(tmp_path / "seeded.json", twin_capsule(["python3", "-c", SEEDED], recorded, 1,
                                                                python="3.11.2"))
    rc, report = replay(capsys, capsule, "-n", "2")
    assert all(a["signature"] != report["expected"]["signature"] for a in report["attempts"])  # twin's differs
    assert (rc, report["verdict"]) == (0, "reproduced")


def test_the_same_failed_tests_in_another_order_and_form_reproduce(engine: object, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    recorded = ("FAILED tests/test_a.py::test_one - AssertionError: assert 1 == 2 and a long message\n"
                "FAILED tests/test_b.py::test_two[x - y] - AssertionError: assert 1 == 2 and a long message\n"
                "==== 2 failed in 0.12s ====\n")
    capsule = write_json(tmp_path / "tests.json", twin_capsule(["python3", "-c", SHUFFLED], recorded, 1,
                                                               python="3.11.2"))
    rc, report = replay(capsys, capsule, "-n", "2")
    assert [t["failed"] for t in report["expected"]["tests"]] == [
        ["tests/test_a.py::test_one", "tests/test_b.py::test_two[x - y]"]]
    assert (rc, report["verdict"]) == (0, "reproduced"), report["attempts"]
    assert all(a["signature"] == report["expected"]["signature"] or a["tests"] == report["expected"]["tests"]
               for a in report["attempts"])
