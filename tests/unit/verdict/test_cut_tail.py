"""A recorded failure whose output tail was cut (issue 38): the failed tests it names are a lower
bound. A run failing them and more fails as recorded; along a history (bisect --commits), a
commit failing tests the tail cut is the recorded failure, not another one."""
from __future__ import annotations

from collections.abc import Iterable

from runner.capsules.model import Capsule, Command, Failure, Format, Provenance
from runner.verdict.attempted import attempt_of
from runner.verdict import signature as sig
from runner.verdict.judge import Expected, expected_of


def go_output(tests: Iterable[int], log_lines: int = 8) -> str:
    """`go test` failing these tests, each logging `log_lines` lines."""
    out = []
    for t in tests:
        out.append(f"--- FAIL: TestCase{t:02d} (0.00s)")
        out += [f"    fmt_test.go:{i}: fmt({t}) line {i}: got '# {t}', want '#{t}'" for i in range(log_lines)]
    out += ["FAIL", "FAIL\tdemo\t0.012s", "FAIL"]
    return "\n".join(out) + "\n"


def recorded(output: str) -> Expected:
    fs = sig.compute(output, 1)
    cmd = Command(("go", "test", "./..."), ".", exit_code=1, outcome="fail",
                  failure=Failure(fs.signature, fs.key_lines, sig.output_tail(output)))
    return expected_of(Capsule(Provenance(Format.TWIN, "1", "c.json"), cmd))


def kind(expected: Expected, output: str) -> str:
    data = output.encode()
    return attempt_of(data, data, 1, None, 1.0, False, expected, ()).classification


def test_a_cut_tail_names_a_lower_bound() -> None:
    exp = recorded(go_output(range(1, 41)))  # 40 failed, the tail names the last 21
    assert exp.tests_cut and exp.tests[0].failed[0] == "demo TestCase20"
    assert kind(exp, go_output(range(1, 41), log_lines=7)) == "recorded"  # another signature, the same tests
    assert kind(exp, go_output(range(1, 30))) == "other"  # the recorded TestCase30..40 did not fail
    # this run prints more a test, so its own tail is cut earlier: its tests are a lower bound too
    assert kind(exp, go_output(range(1, 41), log_lines=9)) == "recorded"
    assert kind(exp, go_output(range(41, 81))) == "other"  # cut too, and not one recorded test among them


def test_along_a_history_a_commit_failing_tests_the_tail_cut_is_the_recorded_failure() -> None:
    exp = recorded(go_output(range(1, 41))).along_history()
    assert kind(exp, go_output(range(1, 31))) == "recorded"  # the first commit of the change: before TestCase31..40
    assert kind(exp, go_output(range(1, 6))) == "recorded"
    assert kind(exp, "panic: runtime error\nFAIL\tdemo\t0.01s\n") == "other"  # no failed test named


def test_a_whole_output_is_no_lower_bound() -> None:
    exp = recorded(go_output(range(1, 5)))
    assert not exp.tests_cut
    assert kind(exp.along_history(), go_output(range(1, 3))) == "recorded"
    assert kind(exp.along_history(), go_output(range(3, 7))) == "other"  # TestCase05, 06: another failure
