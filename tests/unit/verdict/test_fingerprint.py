"""The fingerprint that matched (issue 38): an attempt judged as recorded by its failed tests
shows those tests, not a signature no attempt had, and the closing sentence quotes what the
attempts had."""
from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from runner.capsules.model import Capsule, Command, Failure, Format, Provenance
from runner.verdict.attempted import attempt_of
from runner.verdict import signature as sig
from runner.verdict.judge import Attempt, Expected, expected_of, explain, fingerprint

OUT = Path(__file__).resolve().parents[2] / "fixtures" / "outcomes"


def recorded(name: str) -> Expected:
    output = (OUT / name).read_text("utf-8")
    fs = sig.compute(output, 1)
    cmd = Command(("pytest",), ".", exit_code=1, outcome="fail",
                  failure=Failure(fs.signature, fs.key_lines, sig.output_tail(output)))
    return expected_of(Capsule(Provenance(Format.TWIN, "1", "c.json"), cmd))


def attempt(name: str, expected: Expected) -> Attempt:
    output = (OUT / name).read_bytes()
    return attempt_of(output, output, 1, None, 1.0, False, expected, ())


def test_an_attempt_matched_by_its_failed_tests_shows_them_and_the_sentence_quotes_them() -> None:
    exp = recorded("hypothesis/flaky-a.txt")
    other = attempt("hypothesis/flaky-b.txt", exp)  # the flaky test drew another n: another signature
    assert other.classification == "recorded" and other.signature != exp.signature
    shown = fingerprint(exp, other)
    assert shown.startswith("failed tests: ") and exp.tests[0].failed[0] in shown
    assert other.matched == shown  # --json: attempts[].matched
    passed = Attempt(0, None, "", (), 0.1, classification="pass")
    sentence = explain("flaky", exp, [other, passed, other])
    assert f"2/3 attempts failed as recorded ({shown})" in sentence
    assert str(exp.signature) not in sentence  # no attempt had it


def test_an_attempt_with_the_recorded_signature_shows_the_signature() -> None:
    exp = recorded("hypothesis/flaky-a.txt")
    same = attempt("hypothesis/flaky-a.txt", exp)
    assert fingerprint(exp, same) == exp.signature
    assert f"({exp.signature})" in explain("reproduced", exp, [same])


def test_the_attempts_table_has_the_fingerprint_column() -> None:
    from runner.report.text import _attempts
    from runner.report.layout import View

    exp = recorded("hypothesis/flaky-a.txt")
    out = io.StringIO()
    _attempts(View(Console(file=out, width=250)), "attempts", [attempt("hypothesis/flaky-b.txt", exp)], exp, True)
    said = out.getvalue()
    assert "fingerprint" in said and "failed tests: " in said
