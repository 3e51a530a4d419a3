"""Test frameworks' seeds and reproduction hints, left out on top of twin's rules."""
from __future__ import annotations

import pytest

from runner.verdict import signature as sig
from runner.verdict.seeds import unseeded, unseeded_signature


@pytest.mark.parametrize(("raw", "expected"), [
    ("You can reproduce this failure by adding @seed(198570294370348978162418504738934495552) to this test, "
     "or by running pytest with --hypothesis-seed=198570294370348978162418504738934495552.",
     "You can reproduce this failure by adding @seed(<seed>) to this test, "
     "or by running pytest with --hypothesis-seed=<seed>."),
    ("You can reproduce this test case by temporarily adding @reproduce_failure('6.170.17', b'AAFBAgFBAgA=') "
     "as a decorator on your test function",
     "You can reproduce this test case by temporarily adding @reproduce_failure(<blob>) as a decorator on your "
     "test function"),
    ("Using --randomly-seed=2294562427", "Using --randomly-seed=<seed>"),
    ("-p randomly -p randomly_seed=12", "-p randomly -p randomly_seed=<seed>"),
    ("Seed:        -1234567", "Seed: <seed>"),
    ("Randomized with seed 4242", "Randomized with seed <seed>"),
    ("-test.shuffle 1796194778103510543", "-test.shuffle <seed>"),
    ("E hypothesis.errors.FailedHealthCheck: It looks like this test is filtering out a lot of inputs. 0 inputs were "
     "generated successfully, while 50 inputs were filtered out.",
     "E hypothesis.errors.FailedHealthCheck: It looks like this test is filtering out a lot of inputs. <n> inputs "
     "were generated successfully, while <n> inputs were filtered out."),
    ("- 42 passing examples, 3 failing examples, 1 invalid examples",
     "- <n> passing examples, <n> failing examples, <n> invalid examples"),
    ("| hypothesis.errors.FlakyFailure: Hypothesis test_layout_is_stable(n=42) produces unreliable results: Failed "
     "on the first call but did not on a subsequent one (1 sub-exception)",
     "| hypothesis.errors.FlakyFailure: Hypothesis test_layout_is_stable(<example>) produces unreliable results: "
     "Failed on the first call but did not on a subsequent one (<n> sub-exception)"),
    ("Falsifying example: test_x(xs=[0, 0, 3])", "Falsifying example: test_x(<example>)"),
    ("Failing test case: test_x(", "Failing test case: test_x("),  # the example is on the lines below
    ("assert 42 == 43", "assert 42 == 43"),  # an asserted value is the failure, not a hint
    ("Seeded 3 rows", "Seeded 3 rows"),
])
def test_unseeded(raw: str, expected: str) -> None:
    assert unseeded(sig.normalize_line(raw)) == expected


def test_without_a_hint_the_unseeded_signature_is_twins() -> None:
    lines = ("FAIL x", "Expected: 1", "Received: 2")
    assert unseeded_signature(lines, 1, None) == sig.signature(lines, 1, None)
    seeded = ("Error: boom", "You can reproduce this failure by adding @seed(1) to this test")
    other = ("Error: boom", "You can reproduce this failure by adding @seed(2) to this test")
    assert sig.signature(seeded, 1, None) != sig.signature(other, 1, None)
    assert unseeded_signature(seeded, 1, None) == unseeded_signature(other, 1, None)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("line", [
    "Hypothesis f(" * 50_000 + " produces unreliable results",
    "Falsifying example: f(" * 30_000,
    "@reproduce_failure(" * 30_000,
    "1 inputs " * 60_000,
])
def test_hostile_lines_are_linear(line: str) -> None:
    import time

    started = time.monotonic()
    unseeded(line)
    assert time.monotonic() - started < 5
