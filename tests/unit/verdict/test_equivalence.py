"""The one equivalence, over real runners' outputs: a recorded capsule (its outputTail, as
twin records it) judged against an attempt's whole output, as replay judges it."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from runner.capsules.model import Artifact, Body, Capsule, Command, Failure, Format, Provenance
from runner.verdict.attempted import attempt_of
from runner.verdict import signature as sig
from runner.verdict.judge import Attempt, Expected, classify, expected_of
from runner.verdict.sameness import OutputDiff
from runner.verdict.testsets import TestSet

OUT = Path(__file__).resolve().parents[2] / "fixtures" / "outcomes"


def text(name: str) -> str:
    return (OUT / name).read_text("utf-8")


def recorded_failure(name: str, exit_code: int = 1, tail: bool = True) -> Capsule:
    """A twin-style capsule of a failed run: its signature, key lines and (tail) outputTail."""
    output = text(name)
    fs = sig.compute(output, exit_code)
    failure = Failure(fs.signature, fs.key_lines, sig.output_tail(output) if tail else None)
    cmd = Command(("npm", "test"), ".", exit_code=exit_code, outcome="fail", failure=failure)
    return Capsule(Provenance(Format.TWIN, "1", "c.json"), cmd)


def attempt(name: str, expected: Expected, exit_code: int = 1, reports: tuple[bytes, ...] = ()) -> Attempt:
    output = (OUT / name).read_bytes()
    return attempt_of(output, output, exit_code, None, 1.0, False, expected, reports)


# --- a failure: the same failed tests, whatever the output's form ----------------------


@pytest.mark.parametrize(("recorded", "here"), [
    ("termcolor/dumb.txt", "termcolor/dumb-ci.txt"),  # summary cut short without CI: another signature
    ("termcolor/dumb-ci.txt", "termcolor/dumb.txt"),
    ("pytest/dumb.txt", "pytest/dumb-ci.txt"),  # and Hypothesis drew another example
    ("pytest/randomly-1.txt", "pytest/randomly-2.txt"),  # another seed and order
    ("pytest/dumb.txt", "pytest/rA-v.txt"),
    ("jest/default.txt", "jest/ci.txt"),
    ("jest/default.txt", "jest/verbose.txt"),
    ("vitest/default.txt", "vitest/verbose.txt"),
    ("node/spec.txt", "node/tap.txt"),  # recorded on a terminal, replayed without one
    ("go/default.txt", "go/shuffle.txt"),
    ("hypothesis/flaky-a.txt", "hypothesis/flaky-b.txt"),  # the flaky test drew another n
])
def test_the_same_failed_tests_in_another_form_is_the_recorded_failure(recorded: str, here: str) -> None:
    exp = expected_of(recorded_failure(recorded))
    att = attempt(here, exp)
    assert exp.tests
    assert att.classification == "recorded"
    # the tests decided only where twin's signature differs (and were read only then)
    assert bool(att.tests) == (att.signature != exp.signature)


def test_the_pairs_above_that_twins_signature_tells_apart() -> None:
    differing = [pair for pair in (("termcolor/dumb.txt", "termcolor/dumb-ci.txt"),
                                   ("pytest/randomly-1.txt", "pytest/randomly-2.txt"),
                                   ("pytest/dumb.txt", "pytest/rA-v.txt"), ("jest/default.txt", "jest/verbose.txt"),
                                   ("vitest/default.txt", "vitest/verbose.txt"), ("node/spec.txt", "node/tap.txt"),
                                   ("hypothesis/flaky-a.txt", "hypothesis/flaky-b.txt"))
                 if sig.compute(text(pair[0]), 1) != sig.compute(text(pair[1]), 1)]
    assert len(differing) == 7  # each would be "other" by the signature alone


def test_termcolor_signatures_differ_and_the_report_says_where() -> None:
    exp = expected_of(recorded_failure("termcolor/dumb.txt"))
    att = attempt("termcolor/dumb-ci.txt", exp)
    assert att.signature != exp.signature and att.classification == "recorded"
    assert att.differs is not None and att.differs.stream == "key lines"
    assert att.differs.said().startswith(f"key lines differ at key line {att.differs.line}: recorded ")


@pytest.mark.parametrize(("recorded", "here"), [
    ("pytest/dumb.txt", "pytest/other.txt"),  # one failed test fewer
    ("pytest/other.txt", "pytest/dumb.txt"),  # one more
    ("mocha/spec.txt", "mocha/hook.txt"),  # the hook fails instead of the test
])
def test_another_failed_test_is_another_failure(recorded: str, here: str) -> None:
    exp = expected_of(recorded_failure(recorded))
    assert attempt(here, exp).classification == "other"


def test_the_same_tests_with_another_exit_code_is_another_failure() -> None:
    exp = expected_of(recorded_failure("jest/default.txt"))
    assert attempt("jest/ci.txt", exp, exit_code=2).classification == "other"
    assert attempt("jest/ci.txt", exp, exit_code=0).classification == "pass"


def test_along_a_history_a_subset_of_the_recorded_failed_tests_is_the_failure() -> None:
    exp = expected_of(recorded_failure("pytest/dumb.txt"))
    fewer = exp.along_history()
    assert fewer.fewer_tests and not exp.fewer_tests
    assert attempt("pytest/other.txt", fewer).classification == "recorded"  # test_bold fails only later
    assert attempt("pytest/dumb-ci.txt", fewer).classification == "recorded"  # all of them
    more = expected_of(recorded_failure("pytest/other.txt")).along_history()
    assert attempt("pytest/dumb.txt", more).classification == "other"  # one outside the recorded ones


def test_along_a_history_no_failed_test_is_not_the_failure() -> None:
    exp = dataclasses.replace(expected_of(recorded_failure("go/default.txt")).along_history())
    att = attempt_of(b"FAIL\texample.com/calc/calc [build failed]\n", b"", 1, None, 1.0, False, exp)
    assert att.tests and att.classification == "other"  # the package, not a recorded test


# --- seeds and hints -------------------------------------------------------------------


def test_hypothesis_seeds_differing_is_the_recorded_failure_by_key_lines_alone() -> None:
    """A capsule with only a signature and key lines (no outputTail: no tests to compare)."""
    exp = expected_of(recorded_failure("hypothesis/seed-a.txt", tail=False))
    assert not exp.tests and exp.signature_source == "recorded"
    att = attempt("hypothesis/seed-b.txt", exp)
    assert att.signature != exp.signature  # twin's signature keeps the seed
    assert att.classification == "recorded"
    assert att.differs is None  # the seed is no difference


def test_hypothesis_seeds_differing_from_an_output_tail() -> None:
    exp = expected_of(recorded_failure("hypothesis/seed-a.txt"))
    assert attempt("hypothesis/seed-b.txt", exp).classification == "recorded"


def test_a_recorded_signature_hash_alone_matches_only_exactly() -> None:
    """No key lines, no outputTail: nothing to leave a seed out of (docs/signature.md)."""
    fs = sig.compute(text("hypothesis/seed-a.txt"), 1)
    exp = Expected(True, 1, None, fs.signature)
    assert attempt("hypothesis/seed-a.txt", exp).classification == "recorded"
    assert attempt("hypothesis/seed-b.txt", exp).classification == "other"


# --- a capsule that names no tests keeps today's rule ---------------------------------


def test_without_tests_the_signature_decides() -> None:
    fs = sig.compute("Error: boom at 12ms\n", 1)
    exp = expected_of(Capsule(Provenance(Format.TWIN, "1", "c.json"), Command(
        ("node", "x.js"), ".", exit_code=1, outcome="fail",
        failure=Failure(fs.signature, fs.key_lines, output_tail="Error: boom at 12ms\n"))))
    assert exp.tests == ()
    assert attempt_of(b"Error: boom at 805ms\n", b"", 1, None, 1.0, False, exp).classification == "recorded"
    assert attempt_of(b"Error: bang\n", b"", 1, None, 1.0, False, exp).classification == "other"


def test_an_equal_signature_is_todays_rule_and_the_tests_decide_where_it_differs() -> None:
    exp = Expected(True, 1, None, "exit1:x", ("E boom",), tests=(sig_tests("a"),))
    assert classify(exp, Attempt(1, None, "exit1:x", ("E boom",), 1.0, tests=(sig_tests("b"),))) == "recorded"
    assert classify(exp, Attempt(1, None, "exit1:y", ("E bang",), 1.0, tests=(sig_tests("b"),))) == "other"
    assert classify(exp, Attempt(1, None, "exit1:y", ("E bang",), 1.0, tests=(sig_tests("a"),))) == "recorded"
    none_named = Attempt(1, None, "exit1:y", ("E boom",), 1.0)
    assert classify(exp, none_named) == "recorded"  # nothing to compare: the key lines decide


def sig_tests(name: str) -> TestSet:
    return TestSet("pytest", (f"t.py::{name}",))


# --- a pass: the exit code and stdout, normalised ---------------------------------------


def recorded_pass(stdout: bytes) -> Capsule:
    return Capsule(Provenance(Format.TWIN, "1", "c.json"),
                   Command(("npm", "install", "ms@2.1.3"), ".", exit_code=0, outcome="pass",
                           stdout=Body(text=stdout.decode())))


def test_npm_install_printing_another_duration_is_the_recorded_pass() -> None:
    one, two = (OUT / "npm" / "install-1.txt").read_bytes(), (OUT / "npm" / "install-2.txt").read_bytes()
    assert one != two
    exp = expected_of(recorded_pass(one))
    att = attempt_of(two, two, 0, None, 1.0, False, exp)
    assert att.classification == "recorded" and att.differs is None
    ms = attempt_of(b"\nadded 1 package in 805ms\n", b"\nadded 1 package in 805ms\n", 0, None, 1.0, False,
                    expected_of(recorded_pass(b"\nadded 1 package in 612ms\n")))
    assert ms.classification == "recorded"


def test_a_pass_whose_stdout_differs_says_where() -> None:
    exp = expected_of(recorded_pass(b"resolving\n\nadded 1 package in 612ms\nok\n"))
    out = b"resolving\n\nadded 2 packages in 805ms\nok\n"
    att = attempt_of(out, out, 0, None, 1.0, False, exp)
    assert att.classification == "other"
    assert att.differs == OutputDiff("stdout", 3, "added 1 package in <duration>", "added 2 packages in <duration>")
    assert att.differs.said() == ("stdout differs at line 3: recorded 'added 1 package in <duration>', "
                                  "here 'added 2 packages in <duration>'")
    short = attempt_of(b"resolving\n", b"resolving\n", 0, None, 1.0, False, exp)
    assert short.differs == OutputDiff("stdout", 2, "added 1 package in <duration>", None)


# --- JUnit reports ---------------------------------------------------------------------


def test_junit_reports_the_capsule_keeps_and_the_attempt_wrote(tmp_path: Path) -> None:
    """A NovaFabric capsule's outputs hold the report; the attempt's is read back by path."""
    (tmp_path / "outputs").mkdir()
    (tmp_path / "outputs" / "junit.xml").write_bytes((OUT / "pytest" / "junit.xml").read_bytes())
    (tmp_path / "outputs" / "notes.txt").write_text("not a report")
    fs = sig.compute("E boom (recorded)", 1)
    capsule = Capsule(Provenance(Format.NOVAFABRIC, "0.1.0", str(tmp_path)),
                      Command(("pytest",), ".", exit_code=1, outcome="fail", failure=Failure(fs.signature, fs.key_lines)),
                      expected_outputs=(Artifact("junit", "outputs/junit.xml", "reports/junit.xml"),
                                        Artifact("notes", "outputs/notes.txt", "notes.txt"),
                                        Artifact("gone", "outputs/gone.xml", "gone.xml")))
    exp = expected_of(capsule)
    assert exp.reports == ("reports/junit.xml",)
    assert [t.framework for t in exp.tests] == ["junit"] and len(exp.tests[0].failed) == 7
    same = (OUT / "pytest" / "junit.xml").read_bytes()
    here = b"E boom (here, in other words)"
    assert attempt_of(here, b"", 1, None, 1.0, False, exp, (same,)).classification == "recorded"
    assert attempt_of(here, b"", 1, None, 1.0, False, exp, (fewer_failures(same),)).classification == "other"
    assert attempt_of(here, b"", 1, None, 1.0, False, exp.along_history(),
                      (fewer_failures(same),)).classification == "recorded"
    assert attempt_of(here, b"", 1, None, 1.0, False, exp).classification == "other"  # no report read back


def fewer_failures(xml: bytes) -> bytes:
    """The report with its first failed testcase passing."""
    from xml.etree import ElementTree

    root = ElementTree.fromstring(xml)
    case = next(c for c in root.iter("testcase") if c.find("failure") is not None)
    case.remove(case.find("failure"))  # type: ignore[arg-type]
    return ElementTree.tostring(root)
