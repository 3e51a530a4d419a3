"""The pull-request comment `replay CAPSULE --ref SHA --comment FILE` writes."""
from __future__ import annotations

import dataclasses
import re

import pytest

from runner.report.comment import read_marker, render_comment
from runner.verdict.judge import Attempt, Expected, judge_fix
from runner.verdict.rate import Rate
from runner.report import Baseline, CapsuleRef, ImageInfo, ReplayReport, Verification
from runner.textsafe import md_text

REF = "3f2c9e1aa0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5"
FAILED = Expected(True, 1, None, "exit1:0aee0834ac9c4d2d", ("FAIL in New York", "expected 9, got 8"), b"", "recorded")


def _attempts(*kinds: str) -> tuple[Attempt, ...]:
    return tuple(Attempt(0 if k == "pass" else 1, None, None if k == "pass" else "exit1:0aee0834ac9c4d2d",
                         () if k == "pass" else ("FAIL in New York",), 1.5, k == "inconclusive", b"", "", k)  # type: ignore[arg-type]
                 for k in kinds)


# the recorded commit's run, first in the same replay: the failure came back there
RECORDED = Baseline("reproduced", _attempts("recorded", "recorded", "recorded"), "the recorded commit",
                    f"at {REF[:12]}", Rate.of(3, 3))


def report(*kinds: str, expected: Expected = FAILED, path: str = "capsules/tz.json",
           baseline: Baseline | None = RECORDED) -> ReplayReport:
    """A report as `replay --ref` makes it: its verdict is the one fix judgement's."""
    attempts = _attempts(*kinds)
    fix = judge_fix(expected, baseline.rate if baseline else None, attempts, "the recorded commit", f"at {REF[:12]}")
    return ReplayReport(fix.verdict, CapsuleRef(path, "twin", "ab12cd34ef56ab12cd34ef56"), expected, attempts, (),
                        ImageInfo("replay/img:x", True, 3.0, 5, "buildkit", "debian:bookworm"), Verification(True),
                        baseline=baseline, rate=fix.rate, fix=fix)


@pytest.mark.parametrize(("kinds", "state", "words"), [
    (("pass",) * 5, "fixed", "✅ fixed"),
    (("recorded",), "not-fixed", "❌ still failing"),
    (("other",) * 3, "different-failure", "⚠️ different failure"),
    (("pass",) * 3, "inconclusive", "❔ inconclusive"),  # 3 passes do not outweigh 3 failures
    (("inconclusive",), "inconclusive", "❔ inconclusive"),
])
def test_the_state_is_the_replays_own_verdict(kinds: tuple[str, ...], state: str, words: str) -> None:
    r = report(*kinds)
    text = render_comment(r, REF)
    assert r.verdict == state and read_marker(text) == ("ab12cd34ef56ab12cd34ef56", state)
    assert text.splitlines()[1].startswith(f"### {words} at `3f2c9e1aa0b1`: `capsules/tz.json`")
    assert md_text(r.summary) in text  # the sentence says why, with the rates (as prose: no markup)
    rows = [line for line in text.splitlines() if line[:4] in ("| 1 ", "| 2 ")]
    assert [r[:4] for r in rows] == ["| 1 ", "| 2 "][:len(kinds)]  # one row per attempt


def test_an_undecided_fix_says_how_many_more_passing_runs_would_decide() -> None:
    text = render_comment(report("pass", "pass", "pass"), REF)
    assert "2 more passing run(s) would decide" in text and "--max-attempts" in text


def test_the_recorded_key_lines_are_shown_and_a_still_failing_run_shows_its_own() -> None:
    text = render_comment(report("recorded"), REF)
    assert "```text\nFAIL in New York\nexpected 9, got 8\n```" in text
    assert "key lines of the last attempt" in text
    assert "key lines of the last attempt" not in render_comment(report(*["pass"] * 5), REF)


def test_a_pass_at_the_ref_is_no_fix_when_the_failure_never_came_back() -> None:
    """The comment says what replay says: with no failure at the recorded commit, nothing is fixed."""
    gone = Baseline("not-reproduced", _attempts("pass", "pass"), "the recorded commit", f"at {REF[:12]}",
                    Rate.of(0, 2))
    r = report(baseline=gone)
    text = render_comment(r, REF)
    assert r.verdict == "inconclusive" and r.exit_code == 1
    assert "fixed" not in text.splitlines()[1] and "the recorded commit did not reproduce the failure here" in text


def test_a_recorded_pass_is_fixed_when_it_passes_at_the_ref() -> None:
    passed = Expected(False, 0, None, None, (), b"", "none")
    assert report("recorded", "recorded", "recorded", expected=passed, baseline=None).verdict == "fixed"
    assert report("other", "other", "other", expected=passed, baseline=None).verdict == "not-fixed"


def test_a_capsule_cannot_break_out_of_the_markdown_or_the_marker() -> None:
    evil = dataclasses.replace(FAILED, key_lines=("```", "<!-- replay-ci capsule=x state=fixed -->", "@everyone"))
    text = render_comment(report("recorded", expected=evil, path="a`b`\n# x.json"), REF)
    assert read_marker(text) == ("ab12cd34ef56ab12cd34ef56", "not-fixed")  # the first marker is replay's own
    assert "````text\n```\n" in text  # the fence is longer than any backtick run inside
    assert "\n# x.json" not in text  # a newline in a path does not start a heading


def test_capsule_text_in_the_comment_is_code_and_its_controls_escaped() -> None:
    sig = "exit1:<img src=x>\x1b]0;t\x07|![x](https://evil.example/p.png)"
    evil = dataclasses.replace(FAILED, signature=sig, key_lines=("\x1b[0Ksection_start:1:x\r\x1b[0K", "\u202eok"))
    text = render_comment(report("recorded", expected=evil, path="[Click here](https://evil.example)<script>.json"),
                          REF)
    assert not set(text) & set("\x1b\x07\r\u202e")
    outside = re.sub(r"(`+)(.+?)\1", "", re.sub(r"(?s)(`{3,})text\n.*?\n\1", "", text))
    assert "<img" not in outside and "<script>" not in outside and "](" not in outside, outside
    table = next(line for line in text.splitlines() if line.startswith("| `ab12"))
    assert table.count("|") - table.count("\\|") == 5  # the signature's pipe stays in its cell
