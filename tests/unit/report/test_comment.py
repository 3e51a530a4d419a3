"""The pull-request comment `replay CAPSULE --ref SHA --comment FILE` writes."""
from __future__ import annotations

import dataclasses

import pytest

from runner.report.comment import comment_state, read_marker, render_comment
from runner.verdict.judge import Attempt, Expected, Verdict
from runner.report import Baseline, CapsuleRef, ImageInfo, ReplayReport, Verification

REF = "3f2c9e1aa0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5"
FAILED = Expected(True, 1, None, "exit1:0aee0834ac9c4d2d", ("FAIL in New York", "expected 9, got 8"), b"", "recorded")


def _attempts(*kinds: str) -> tuple[Attempt, ...]:
    return tuple(Attempt(0 if k == "pass" else 1, None, None if k == "pass" else "exit1:0aee0834ac9c4d2d",
                         () if k == "pass" else ("FAIL in New York",), 1.5, False, b"", "", k)  # type: ignore[arg-type]
                 for k in kinds)


# the recorded commit's run, first in the same replay: the failure came back there
RECORDED = Baseline("reproduced", _attempts("recorded", "recorded"), "the recorded commit", f"at {REF[:12]}")


def report(verdict: Verdict, *kinds: str, expected: Expected = FAILED, path: str = "capsules/tz.json",
           baseline: Baseline | None = None) -> ReplayReport:
    return ReplayReport(verdict, CapsuleRef(path, "twin", "ab12cd34ef56ab12cd34ef56"), expected, _attempts(*kinds), (),
                        ImageInfo("replay/img:x", True, 3.0, 5, "buildkit", "debian:bookworm"), Verification(True),
                        baseline=baseline)


@pytest.mark.parametrize(("verdict", "kinds", "state", "words"), [
    ("fixed", ("pass", "pass"), "fixed", "✅ fixed"),
    ("not-fixed", ("recorded", "recorded"), "not-fixed", "❌ still failing"),
    ("different-failure", ("other",), "different-failure", "⚠️ different failure"),
    ("flaky", ("recorded", "pass"), "flaky", "🎲 flaky"),
    ("inconclusive", ("inconclusive",), "inconclusive", "❔ inconclusive"),
])
def test_each_verdict_at_a_ref_is_one_state(verdict: Verdict, kinds: tuple[str, ...], state: str, words: str) -> None:
    text = render_comment(report(verdict, *kinds, baseline=RECORDED), REF)
    assert comment_state(report(verdict, *kinds, baseline=RECORDED), REF) == state
    assert read_marker(text) == ("ab12cd34ef56ab12cd34ef56", state)
    assert text.splitlines()[1].startswith(f"### {words} at `3f2c9e1aa0b1`: `capsules/tz.json`")
    rows = [line for line in text.splitlines() if line[:4] in ("| 1 ", "| 2 ")]
    assert [r[:4] for r in rows] == ["| 1 ", "| 2 "][:len(kinds)]  # one row per attempt


def test_the_recorded_key_lines_are_shown_and_a_still_failing_run_shows_its_own() -> None:
    text = render_comment(report("not-fixed", "recorded", baseline=RECORDED), REF)
    assert "```text\nFAIL in New York\nexpected 9, got 8\n```" in text
    assert "key lines of the last attempt" in text
    assert "key lines of the last attempt" not in render_comment(report("fixed", "pass", baseline=RECORDED), REF)


def test_a_pass_at_the_ref_is_no_fix_when_the_failure_never_came_back() -> None:
    """The comment says what replay says: with no failure at the recorded commit, nothing is fixed."""
    gone = Baseline("not-reproduced", _attempts("pass", "pass"), "the recorded commit", f"at {REF[:12]}")
    r = report("inconclusive", "pass", "pass", baseline=gone)
    text = render_comment(r, REF)
    assert comment_state(r, REF) == "inconclusive" and r.exit_code == 1
    assert "fixed" not in text.splitlines()[1] and "the recorded commit did not reproduce the failure here" in text


def test_a_recorded_pass_is_fixed_when_it_passes_at_the_ref() -> None:
    passed = Expected(False, 0, None, None, (), b"", "none")
    assert comment_state(report("reproduced", "recorded", expected=passed), REF) == "fixed"
    assert comment_state(report("not-reproduced", "other", expected=passed), REF) == "not-fixed"


def test_without_a_ref_the_state_is_the_replay_verdict() -> None:
    assert comment_state(report("reproduced", "recorded"), None) == "reproduced"


def test_a_capsule_cannot_break_out_of_the_markdown_or_the_marker() -> None:
    evil = dataclasses.replace(FAILED, key_lines=("```", "<!-- replay-ci capsule=x state=fixed -->", "@everyone"))
    text = render_comment(report("not-fixed", "recorded", expected=evil, path="a`b`\n# x.json", baseline=RECORDED), REF)
    assert read_marker(text) == ("ab12cd34ef56ab12cd34ef56", "not-fixed")  # the first marker is replay's own
    assert "````text\n```\n" in text  # the fence is longer than any backtick run inside
    assert "\n# x.json" not in text  # a newline in a path does not start a heading
