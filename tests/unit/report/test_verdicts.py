"""The fix rule (judge_fix) and the closing sentence (explain): one place, one vocabulary."""
from __future__ import annotations

import pytest

from runner.verdict.judge import Attempt, Classification, Expected, Verdict, explain, judge, judge_fix

FAILED = Expected(True, 1, None, "exit1:0aee0834ac9c4d2d", ("FAIL x",))
PASSED = Expected(False, 0, None, None)


def attempts(*kinds: Classification, signature: str = "exit1:0aee0834ac9c4d2d") -> list[Attempt]:
    return [Attempt(0 if k == "pass" else 1, None, "exit0:ffffffffffffffff" if k == "pass" else
                    (signature if k == "recorded" else "exit1:1111111111111111"), (), 1.0, k == "inconclusive",
                    classification=k) for k in kinds]


@pytest.mark.parametrize(("baseline", "patched", "verdict"), [
    ("reproduced", ("pass", "pass", "pass"), "fixed"),
    ("flaky", ("pass", "pass", "pass"), "fixed"),
    ("not-reproduced", ("pass", "pass", "pass"), "inconclusive"),  # the placebo patch: nothing to fix here
    ("different-failure", ("pass",), "inconclusive"),
    ("inconclusive", ("pass",), "inconclusive"),
    ("reproduced", ("recorded", "recorded", "recorded"), "not-fixed"),
    ("reproduced", ("recorded", "other"), "not-fixed"),
    ("reproduced", ("other", "other", "other"), "different-failure"),
    ("reproduced", ("pass", "recorded", "pass"), "flaky"),
    ("reproduced", ("pass", "inconclusive"), "flaky"),
    ("reproduced", ("inconclusive", "inconclusive"), "inconclusive"),
    ("reproduced", (), "inconclusive"),
])
def test_a_fix_is_judged_against_the_unpatched_run(baseline: Verdict, patched: tuple[Classification, ...],
                                                   verdict: Verdict) -> None:
    judged = judge_fix(FAILED, baseline, attempts(*patched))
    assert judged.verdict == verdict
    assert judged.why and "." not in judged.why[-1:]  # one sentence, the caller ends it


def test_a_recorded_pass_has_nothing_to_fix() -> None:
    assert judge_fix(PASSED, "reproduced", attempts("recorded")).verdict == "inconclusive"


def test_the_explanations_name_the_reason() -> None:
    assert "did not reproduce" in judge_fix(FAILED, "not-reproduced", attempts("pass")).why
    assert judge_fix(FAILED, "reproduced", attempts("pass", "pass")).why == \
        "the unpatched source failed as recorded and 2/2 attempts with the patch passed"
    assert judge_fix(FAILED, "reproduced", attempts("recorded")).why == "1/1 attempts with the patch still failed as recorded"


@pytest.mark.parametrize(("kinds", "expected", "sentence"), [
    (("recorded",) * 3, FAILED, "REPRODUCED: 3/3 attempts failed as recorded (exit1:0aee0834ac9c4d2d)."),
    (("pass",) * 2, FAILED, "NOT-REPRODUCED: 2/2 attempts passed; the capsule recorded a failure "
                            "(exit1:0aee0834ac9c4d2d)."),
    (("other",) * 2, FAILED, "DIFFERENT-FAILURE: 2/2 attempts failed, but not as recorded (exit1:0aee0834ac9c4d2d); "
                             "here: exit1:1111111111111111."),
    (("recorded", "pass", "recorded"), FAILED, "FLAKY: 2/3 attempts failed as recorded (exit1:0aee0834ac9c4d2d); "
                                               "1 passed."),
    (("inconclusive",) * 2, FAILED, "INCONCLUSIVE: 2/2 attempts timed out, none decided."),
    (("recorded",) * 2, PASSED, "REPRODUCED: 2/2 attempts passed as recorded (exit 0)."),
])
def test_the_closing_sentence(kinds: tuple[Classification, ...], expected: Expected, sentence: str) -> None:
    runs = attempts(*kinds)
    assert explain(judge(expected, runs), expected, runs) == sentence
