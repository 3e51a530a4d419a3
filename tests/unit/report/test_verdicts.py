"""The fix judgement (judge_fix, against the baseline's rate) and the closing sentence
(explain, with the rate): one place, one vocabulary."""
from __future__ import annotations

import pytest

from runner.verdict.judge import Attempt, Classification, Expected, Verdict, explain, judge, judge_fix
from runner.verdict.rate import Rate

FAILED = Expected(True, 1, None, "exit1:0aee0834ac9c4d2d", ("FAIL x",))
PASSED = Expected(False, 0, None, None)
ALWAYS, HALF, NEVER = Rate.of(3, 3), Rate.of(6, 12), Rate.of(0, 3)


def attempts(*kinds: Classification, signature: str = "exit1:0aee0834ac9c4d2d") -> list[Attempt]:
    return [Attempt(0 if k == "pass" else 1, None, "exit0:ffffffffffffffff" if k == "pass" else
                    (signature if k == "recorded" else "exit1:1111111111111111"), (), 1.0, k == "inconclusive",
                    classification=k) for k in kinds]


@pytest.mark.parametrize(("baseline", "patched", "verdict", "more"), [
    (ALWAYS, ("pass",) * 5, "fixed", 0),
    (ALWAYS, ("pass",) * 3, "inconclusive", 2),  # three passes after three failures prove nothing yet
    (HALF, ("pass",) * 5, "inconclusive", 7),  # a flaky failure needs more straight passes
    (HALF, ("pass",) * 12, "fixed", 0),
    (NEVER, ("pass",) * 5, "inconclusive", None),  # the placebo patch: nothing to fix here
    (None, ("pass",), "inconclusive", None),
    (ALWAYS, ("recorded",), "not-fixed", None),
    (HALF, ("pass",) * 9 + ("recorded",), "not-fixed", None),
    (ALWAYS, ("other", "other", "other"), "different-failure", None),
    (ALWAYS, ("pass",) * 5 + ("other",), "inconclusive", 3),  # a failure of another kind counts against it
    (ALWAYS, ("inconclusive", "inconclusive"), "inconclusive", 5),
    (ALWAYS, (), "inconclusive", 5),
])
def test_a_fix_is_judged_against_the_baseline_rate(baseline: Rate | None, patched: tuple[Classification, ...],
                                                   verdict: Verdict, more: int | None) -> None:
    judged = judge_fix(FAILED, baseline, attempts(*patched))
    assert (judged.verdict, judged.more_passes) == (verdict, more)
    assert judged.why and "." not in judged.why[-1:]  # one sentence, the caller ends it
    if patched and baseline is not None and baseline.failed and "inconclusive" not in patched:
        assert judged.rate == Rate.of(sum(k != "pass" for k in patched), len(patched))


def test_a_confidence_is_the_baselines() -> None:
    strict = Rate.of(3, 3, 0.99)
    assert judge_fix(FAILED, strict, attempts(*("pass",) * 5)).verdict == "inconclusive"
    assert judge_fix(FAILED, strict, attempts(*("pass",) * 14)).verdict == "inconclusive"
    assert judge_fix(FAILED, strict, attempts(*("pass",) * 15)).verdict == "fixed"


def test_a_recorded_pass_is_kept_when_it_comes_back() -> None:
    assert judge_fix(PASSED, None, attempts("recorded", "recorded", "recorded")).verdict == "fixed"
    assert judge_fix(PASSED, None, attempts("other", "other", "other")).verdict == "not-fixed"
    assert judge_fix(PASSED, None, attempts("inconclusive")).verdict == "inconclusive"


def test_the_explanations_name_the_reason_and_the_rates() -> None:
    assert "did not reproduce the failure here (0/3 runs failed as recorded)" in judge_fix(
        FAILED, NEVER, attempts("pass")).why
    assert judge_fix(FAILED, ALWAYS, attempts(*("pass",) * 5)).why == (
        "5/5 attempts with the patch passed: with the patch it fails in at most 43 % of runs, the unpatched source "
        "in 3/3 failed as recorded, at least 44 % (95 %)")
    assert judge_fix(FAILED, ALWAYS, attempts("recorded")).why == (
        "1/1 attempts with the patch still failed as recorded (the unpatched source: 3/3 failed as recorded, "
        "at least 44 % (95 %))")
    assert judge_fix(FAILED, ALWAYS, attempts("pass")).why.endswith(
        "; 4 more passing run(s) would decide: run again with --max-attempts 5")


SIG = "(exit1:0aee0834ac9c4d2d)"


@pytest.mark.parametrize(("kinds", "expected", "sentence"), [
    (("recorded",) * 3, FAILED, f"REPRODUCED: 3/3 attempts failed as recorded {SIG}; "
                                "fails in at least 44 % of runs (95 %)."),
    (("pass",) * 3, FAILED, f"NOT-REPRODUCED: 3/3 attempts passed; the capsule recorded a failure {SIG}; "
                            "fails in at most 56 % of runs (95 %)."),
    (("other",) * 2, FAILED, f"DIFFERENT-FAILURE: 2/2 attempts failed, but not as recorded {SIG}; "
                             "here: exit1:1111111111111111; fails in at most 66 % of runs (95 %)."),
    (("recorded",) * 5 + ("pass",) * 6, FAILED, f"FLAKY: 5/11 attempts failed as recorded {SIG}, 6 passed; "
                                                "fails in 21–72 % of runs (95 %)."),
    (("recorded", "inconclusive", "recorded", "recorded"), FAILED,
     f"REPRODUCED: 3/3 attempts failed as recorded {SIG}; 1 more timed out (not counted); "
     "fails in at least 44 % of runs (95 %)."),
    (("pass", "other", "pass"), FAILED, f"DIFFERENT-FAILURE: 1/3 attempts failed, but not as recorded {SIG}; "
                                        "here: exit1:1111111111111111, 2 passed; fails in at most 56 % of runs (95 %)."),
    (("inconclusive",) * 2, FAILED, "INCONCLUSIVE: 2/2 attempts timed out, none decided."),
    (("recorded",) * 3, PASSED, "REPRODUCED: 3/3 attempts passed as recorded (exit 0); "
                                "passes as recorded in at least 44 % of runs (95 %)."),
])
def test_the_closing_sentence_says_what_the_runs_allow(kinds: tuple[Classification, ...], expected: Expected,
                                                      sentence: str) -> None:
    runs = attempts(*kinds)
    assert explain(judge(expected, runs), expected, runs) == sentence


def test_the_sentence_is_stated_at_the_confidence() -> None:
    runs = attempts("recorded", "recorded", "recorded")
    assert explain("reproduced", FAILED, runs, 0.99).endswith("fails in at least 31 % of runs (99 %).")
