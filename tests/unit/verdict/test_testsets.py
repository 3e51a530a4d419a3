"""The failed-test parsers, on real runners' outputs (tests/fixtures/outcomes/README.md)."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from runner.verdict import signature as sig
from runner.verdict.testsets import (
    MAX_TESTS,
    TestSet,
    Window,
    failing_tests,
    go_failed,
    jest_failed,
    junit_failed,
    junit_tests,
    mocha_failed,
    node_failed,
    pytest_failed,
    vitest_failed,
)

OUT = Path(__file__).resolve().parents[2] / "fixtures" / "outcomes"

PYTEST = (
    "tests/test_colors.py::TestAttrs::test_bold",
    *(f"tests/test_colors.py::test_color_codes_are_emitted_for_every_terminal_including_dumb_ones[{c}]"
      for c in ("green", "grey", "red", "yellow")),
    "tests/test_colors.py::test_uses_broken_fixture",
    "tests/test_props.py::test_sorted_is_idempotent_but_buggy",
)
JEST = ("jtest/broken.test.js", "jtest/math.test.js › math › nested › multiplies",
        "jtest/math.test.js › math › subtracts small numbers", "jtest/strings.test.js › upper case › with arrows")
VITEST = ("broken.test.mjs", "math.test.mjs > math > nested > multiplies", "math.test.mjs > math > subtracts small numbers",
          "strings.test.mjs > upper case > with arrows")
MOCHA = ("math > nested > multiplies", "math > subtracts small numbers", "strings > length: counts")
NODE = ("multiplies", "string length", "subtracts small numbers", "top level fails")
GO = ("example.com/calc/calc TestAdd", "example.com/calc/calc TestTable", "example.com/calc/calc TestTable/neg",
      "example.com/calc/strs TestUpper")


def failed_in(name: str) -> tuple[TestSet, ...]:
    return failing_tests(sig.output_tail((OUT / name).read_text("utf-8")))


@pytest.mark.parametrize(("name", "framework", "expected"), [
    ("pytest/dumb.txt", "pytest", PYTEST),
    ("pytest/dumb-ci.txt", "pytest", PYTEST),
    ("pytest/rA-v.txt", "pytest", PYTEST),
    ("pytest/randomly-1.txt", "pytest", PYTEST),
    ("pytest/randomly-2.txt", "pytest", PYTEST),
    ("jest/default.txt", "jest", JEST),
    ("jest/ci.txt", "jest", JEST),
    ("jest/verbose.txt", "jest", JEST),
    ("vitest/default.txt", "vitest", VITEST),
    ("vitest/verbose.txt", "vitest", VITEST),
    ("mocha/spec.txt", "mocha", MOCHA),
    ("node/spec.txt", "node", NODE),
    ("node/tap.txt", "node", NODE),
    ("go/default.txt", "go", GO),
    ("go/verbose.txt", "go", GO),
    ("go/shuffle.txt", "go", GO),
])
def test_each_runner_names_its_failed_tests(name: str, framework: str, expected: tuple[str, ...]) -> None:
    assert failed_in(name) == (TestSet(framework, expected),)


def test_pytest_summary_cut_short_or_whole_names_the_same_ids() -> None:
    cut = (OUT / "pytest" / "dumb.txt").read_text("utf-8")
    whole = (OUT / "pytest" / "dumb-ci.txt").read_text("utf-8")
    assert "test_bold - AssertionError: assert {'..." in cut and "test_bold - AssertionError: assert {'a'" in whole
    assert failed_in("pytest/dumb.txt") == failed_in("pytest/dumb-ci.txt")


def lines_of(*lines: str) -> Window:
    return Window("\n".join(lines))


def test_pytest_summary_forms() -> None:
    summary = lines_of(
        "FAILED tests/a.py::test_x[a - b] - AssertionError: x",
        "ERROR tests/b.py - ModuleNotFoundError: No module named 'y'",
        "PASSED tests/d.py::test_ok",
        "FAILED: the build of something",  # not a node id
        "tests/d.py::test_z FAILED                      [ 80%]",  # the summary is enough
    )
    assert pytest_failed(summary) == ["tests/a.py::test_x[a - b]", "tests/b.py"]


def test_pytest_without_a_summary_reads_the_verbose_lines() -> None:
    verbose = lines_of(
        "[gw1] [ 50%] FAILED tests/c.py::TestK::test_y",
        "tests/d.py::test_z FAILED                      [ 80%]",
        "tests/d.py::test_ok PASSED                     [ 90%]",
    )
    assert pytest_failed(verbose) == ["tests/c.py::TestK::test_y", "tests/d.py::test_z"]


def test_mocha_hook_failure_is_another_test() -> None:
    assert failed_in("mocha/hook.txt") == (TestSet("mocha", (
        "math > nested > multiplies", "math > subtracts small numbers",
        'strings > "before all" hook for "length: counts"')),)


def test_mocha_root_level_test_and_the_run_list_before_failing() -> None:
    lines = ["  1) a root test", "  0 passing (1ms)", "  1 failing", "", "  1) a root test:", "     Error: x"]
    assert mocha_failed(Window("\n".join(lines))) == ["a root test"]


def test_jest_warnings_and_console_blocks_are_not_tests() -> None:
    lines = ["● Validation Warning:", "FAIL src/a.test.js", "  ● Console", "  ● suite › test", "PASS src/b.test.js",
             "  ● not in a failed file"]
    assert jest_failed(Window("\n".join(lines))) == ["src/a.test.js › suite › test"]


def test_vitest_suite_and_test_lines() -> None:
    found = vitest_failed(lines_of(" FAIL  a.test.ts > s > t", " FAIL  b.test.ts [ b.test.ts ]", "FAIL c.test.js"))
    assert found == ["a.test.ts > s > t", "b.test.ts"]


def test_node_todo_and_suites_are_not_failures() -> None:
    tap = ["# Subtest: s", "    not ok 1 - t", "      failureType: 'testCodeFailure'", "not ok 1 - s",
           "  failureType: 'subtestsFailed'", "not ok 2 - later # TODO", "not ok 3 - last"]
    assert node_failed(Window("\n".join(tap))) == ["t", "last"]
    spec = ["▶ suite", "  ✖ inner (1.5ms)", "✖ suite (2ms)", "✖ todo (1ms) # TODO", "✖ top (0.1ms)"]
    assert node_failed(Window("\n".join(spec))) == ["inner", "top"]


def test_go_build_failure_names_the_package() -> None:
    found = go_failed(lines_of("# example.com/x", "./a.go:3:1: undefined: y", "FAIL\texample.com/x [build failed]"))
    assert found == ["example.com/x"]


def test_ids_are_normalised_by_the_signature_rules() -> None:
    one = failing_tests("not ok 1 - /home/alice/app/test/a.test.js\n  failureType: 'testCodeFailure'\n")
    two = failing_tests("not ok 1 - /builds/bob/test/a.test.js\n  failureType: 'testCodeFailure'\n")
    assert one == two == (TestSet("node", ("<path>/a.test.js",)),)


def test_colour_codes_do_not_hide_a_failure() -> None:
    assert failing_tests("\x1b[31mFAILED\x1b[0m tests/a.py::test_b - x\n") == (TestSet("pytest", ("tests/a.py::test_b",)),)


def test_an_output_that_names_no_test() -> None:
    assert failing_tests("Error: boom\n    at main (/app/x.js:1:1)\n") == ()
    assert failing_tests("") == ()


@pytest.mark.parametrize(("name", "expected"), [
    ("pytest/junit.xml", tuple(sorted(i.replace("tests/test_colors.py", "tests.test_colors").replace(
        "tests/test_props.py", "tests.test_props").replace("tests.test_colors::TestAttrs", "tests.test_colors.TestAttrs")
        for i in PYTEST))),
    ("jest/junit.xml", ("math nested multiplies", "math subtracts small numbers", "upper case › with arrows")),
    ("vitest/junit.xml", ("broken.test.mjs", "math.test.mjs::math > nested > multiplies",
                          "math.test.mjs::math > subtracts small numbers", "strings.test.mjs::upper case > with arrows")),
    ("mocha/xunit.xml", ("math nested::multiplies", "math::subtracts small numbers", "strings::length: counts")),
    ("node/junit.xml", ("test::multiplies", "test::string length", "test::subtracts small numbers",
                        "test::top level fails")),  # its TODO test's <failure> sits beside <skipped>
])
def test_junit_reports(name: str, expected: tuple[str, ...]) -> None:
    assert junit_tests([(OUT / name).read_bytes()]) == (TestSet("junit", expected),)


def test_junit_refuses_what_is_not_a_report() -> None:
    assert junit_failed(b"<html><body/></html>") is None
    assert junit_failed(b"not xml at all") is None
    assert junit_tests([b"not xml"]) == ()
    assert junit_tests([b"<testsuite><testcase name='ok'/></testsuite>"]) == ()  # read: no failure


def test_junit_entities_are_refused_not_expanded() -> None:
    bomb = (b'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>'
            b'<testsuite><testcase name="&b;"><failure/></testcase></testsuite>')
    assert junit_failed(bomb) is None
    external = (b'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                b'<testsuite><testcase name="&x;"><failure/></testcase></testsuite>')
    assert junit_failed(external) is None


def test_a_set_is_bounded() -> None:
    text = "".join(f"--- FAIL: Test{i} (0.00s)\n" for i in range(5000))
    (found,) = failing_tests(text)
    assert len(found.failed) == MAX_TESTS


@pytest.mark.timeout(60)
@pytest.mark.parametrize("line", [
    "FAILED a.py::t[" + "]" * 60_000,
    "FAILED " + "a" * 60_000 + ".py",
    " FAIL  " + "x [ " * 15_000,
    "  ✖ " + "(1ms) " * 10_000,
    "not ok 1 - " + " # TODO" * 8_000,
    "    --- FAIL: " + "T" * 60_000,
    "a.py FAILEDERROR" * 4_000,  # no summary: the verbose lines are looked for
])
def test_hostile_lines_are_linear(line: str) -> None:
    text = "\n".join([line, "● x", "FAIL a", "  1 failing", "  1) x", "--- FAIL: T (0s)"] * 3)
    started = time.monotonic()
    failing_tests(text)
    assert time.monotonic() - started < 5
