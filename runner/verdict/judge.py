"""Judging: what a capsule recorded, what an attempt did, and what a set of attempts says.

Every command that judges a run — `replay`, bisect trials, the farm, the CI jobs — judges it
here, in the words of the one verdict vocabulary (vocabulary.py), so a verdict means the same
thing wherever it is read.
"""
from __future__ import annotations

import math

from collections.abc import Sequence
from dataclasses import dataclass, replace

from . import signature as sig
from .vocabulary import REPRODUCES, VERDICTS, Classification, Verdict, exit_code_of
from .recorded import CapsuleLike, xml_reports
from .sameness import OutputDiff, same_key_lines, same_tests, stdout_difference
from .testsets import TestSet, cut_short, failing_tests, junit_tests
from .rate import DEFAULT_CONFIDENCE, Rate, below, passes_to_decide, percent
from .sampling import change_rate, series_rate

__all__ = ["REPRODUCES", "VERDICTS", "Attempt", "Classification", "Expected", "FixJudgement", "Verdict", "classify",
           "exit_code_of", "expected_of", "explain", "fingerprint", "judge", "judge_fix", "trial_verdict"]

@dataclass(frozen=True)
class Expected:
    failed: bool
    exit_code: int | None
    signal: str | None
    signature: str | None
    key_lines: tuple[str, ...] = ()
    stdout: bytes | None = None  # compared line by line, normalised, when the format records it
    signature_source: str = "recorded"  # recorded | recomputed from outputTail | none
    tests: tuple[TestSet, ...] = ()  # the failed tests the recorded run named (none: the signature decides)
    reports: tuple[str, ...] = ()  # JUnit XML files the recorded run wrote, relative to its working directory
    fewer_tests: bool = False  # along a history (bisect --commits/--sweep): a subset of `tests` is the failure
    tests_cut: bool = False  # `tests` come from a cut output tail: a lower bound (sameness.same_tests)

    def along_history(self) -> Expected:
        """This failure as `bisect --commits` and `--sweep` judge it: a test cannot fail before
        it exists, so a non-empty subset of the recorded failed tests, none outside them, is it."""
        return replace(self, fewer_tests=True)


@dataclass(frozen=True)
class Attempt:
    exit_code: int | None
    signal: str | None
    signature: str
    key_lines: tuple[str, ...]
    duration_s: float
    timed_out: bool = False
    stdout: bytes = b""
    output_tail: str = ""
    classification: Classification = "inconclusive"
    reruns: int = 0  # times it ran again because the engine went away under it (its result was lost)
    tests: tuple[TestSet, ...] = ()  # the failed tests its output (and its JUnit reports) named
    differs: OutputDiff | None = None  # where its output first differs from the recorded one, normalised
    tests_cut: bool = False  # `tests` come from a cut output tail (testsets.cut_short): a lower bound too
    matched: str = ""  # judged against a capsule: the fingerprint that matched, or its own signature (fingerprint)


def expected_of(capsule: CapsuleLike) -> Expected:
    """What the capsule recorded, for judging attempts (classify). The failed tests are read
    from the window the signature reads (outputTail, or the recorded stdout and stderr) and
    from the JUnit reports the capsule keeps."""
    cmd = capsule.command
    stdout = cmd.stdout.data if cmd.stdout is not None else None
    if not capsule.failed:
        return Expected(False, cmd.exit_code if cmd.exit_code is not None else 0, None, None, (), stdout, "none")
    reports = xml_reports(capsule)
    junit = junit_tests(xml for _, xml in reports)
    found = _recorded_failure(capsule)
    signature, key_lines, source, window = found
    tail = failing_tests(sig.output_tail(window)) if window is not None else ()
    cut = bool(tail) and not junit and window is not None and cut_short(sig.output_tail(window))
    return Expected(True, cmd.exit_code, cmd.signal, signature, key_lines, stdout, source, (*tail, *junit),
                    tuple(path for path, _ in reports) if junit else (), tests_cut=cut)


def _recorded_failure(capsule: CapsuleLike) -> tuple[str | None, tuple[str, ...], str, str | None]:
    """The recorded failure's signature, key lines, where they came from, and the output
    window they were read from (None: only a signature and key lines are recorded)."""
    cmd = capsule.command
    recorded = cmd.failure
    if recorded and recorded.output_tail is not None:
        again = sig.compute(recorded.output_tail, cmd.exit_code, cmd.signal)
        if recorded.signature and tuple(recorded.key_lines) == again.key_lines and recorded.signature == again.signature:
            return recorded.signature, again.key_lines, "recorded", recorded.output_tail
        return again.signature, again.key_lines, "recomputed from outputTail (the recorded one was made by another rule)", \
            recorded.output_tail
    text = _recorded_output(capsule)
    if recorded and recorded.signature:
        return recorded.signature, tuple(recorded.key_lines), "recorded", text
    if text is not None:
        again = sig.compute(text, cmd.exit_code, cmd.signal)
        return again.signature, again.key_lines, "computed from the recorded stdout and stderr", text
    return None, (), "none", None


def _recorded_output(capsule: CapsuleLike) -> str | None:
    cmd = capsule.command
    if cmd.stdout is None and cmd.stderr is None:
        return None
    return ((cmd.stdout.data if cmd.stdout else b"") + (cmd.stderr.data if cmd.stderr else b"")).decode("utf-8", "replace")


def classify(expected: Expected, attempt: Attempt) -> Classification:
    """The one equivalence (docs/signature.md, "When a replay ends as recorded"). A pass: the
    exit code, and stdout read the same once normalised. A failure: the same end (exit code or
    signal), then twin's signature (today's rule); where it differs, the same failed tests where
    the capsule names them (fewer along a history), else the same key lines without seeds."""
    if attempt.timed_out:
        return "inconclusive"
    if not expected.failed:
        same_end = attempt.exit_code == (expected.exit_code or 0)
        return "recorded" if same_end and _same_stdout(expected, attempt) else "other"
    if attempt.exit_code == 0 and attempt.signal is None:
        return "pass"
    if expected.signal:
        same_end = attempt.signal == expected.signal
    else:  # a failure recorded with no exit code matches any non-zero exit
        same_end = expected.exit_code is None or attempt.exit_code == expected.exit_code
    if not same_end:
        return "other"
    if expected.signature is None or attempt.signature == expected.signature:
        return "recorded" if _same_stdout(expected, attempt) else "other"
    by_tests = same_tests(expected.tests, attempt.tests, expected.fewer_tests, expected.tests_cut, attempt.tests_cut)
    if by_tests is not None:
        return "recorded" if by_tests else "other"
    same = bool(expected.key_lines) and same_key_lines(expected.key_lines, attempt.key_lines)
    return "recorded" if same and _same_stdout(expected, attempt) else "other"


def fingerprint(expected: Expected, attempt: Attempt) -> str:
    """What an attempt is recognised by: for one that failed as recorded, what matched (classify's
    rule 1, 2 or 3: the signature, the failed tests, the key lines without seeds); otherwise its
    own signature."""
    if attempt.classification != "recorded" or not expected.failed or expected.signature is None \
            or attempt.signature == expected.signature:
        return attempt.signature
    if same_tests(expected.tests, attempt.tests, expected.fewer_tests, expected.tests_cut, attempt.tests_cut):
        ids = [t for s in attempt.tests for t in s.failed]
        return "failed tests: " + ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
    return "key lines (seeds left out)"


def _same_stdout(expected: Expected, attempt: Attempt) -> bool:
    return expected.stdout is None or stdout_difference(expected.stdout, attempt.stdout) is None


def judge(expected: Expected, attempts: Sequence[Attempt]) -> Verdict:
    """A series of attempts' verdict, from the runs that decided (a timed-out attempt is none):
    `flaky` when some failed as recorded and some did not."""
    decided = [a.classification for a in attempts if a.classification != "inconclusive"]
    if not decided:
        return "inconclusive"
    kinds = set(decided)
    if len(kinds) > 1:
        if "recorded" in kinds:
            return "flaky"
        return "different-failure" if expected.failed else "not-reproduced"
    only = decided[0]
    if only == "recorded":
        return "reproduced"
    if not expected.failed:
        return "not-reproduced"
    return "not-reproduced" if only == "pass" else "different-failure"


@dataclass(frozen=True)
class FixJudgement:
    """A fix check's answer: the verdict, why (one sentence, without the verdict word), the
    rate of the runs with the change that did not pass, and how many more straight passes
    would have decided when the budget ended first (`inconclusive`)."""

    verdict: Verdict
    why: str
    rate: Rate | None = None
    more_passes: int | None = None


def judge_fix(expected: Expected, baseline: Rate | None, patched: Sequence[Attempt],
              before: str = "the unpatched source", after: str = "with the patch",
              confidence: float = DEFAULT_CONFIDENCE) -> FixJudgement:
    """The one fix judgement (`--patch`, `--ref`, the farm's `--ref`, the PR job), against the
    baseline's rate (its runs at `before`, in the same replay): `fixed` only when the rate of the
    runs `after` that did not pass lies below the baseline's at the confidence (rate.below),
    so a change that changes nothing is called fixed no more often than the confidence allows;
    `not-fixed` as soon as one fails as recorded. A capsule that records a pass has no baseline:
    the recorded pass coming back `after` is `fixed`."""
    kinds = [a.classification for a in patched]
    if not expected.failed:
        return _pass_kept(expected, patched, after, confidence)
    if baseline is None or baseline.failed == 0:
        seen = f" ({baseline.failed}/{baseline.runs} runs failed as recorded)" if baseline and baseline.runs else ""
        return FixJudgement("inconclusive", f"{before} did not reproduce the failure here{seen}, "
                                            f"so the fix cannot be judged; {_rare_next(confidence)}")
    rate = change_rate(kinds, baseline.confidence)
    n, passed, recorded = rate.runs, kinds.count("pass"), kinds.count("recorded")
    if recorded:
        return FixJudgement("not-fixed", f"{recorded}/{n} attempts {after} still failed as recorded "
                                         f"({before}: {_base(baseline)})", rate)
    if not n:
        return FixJudgement("inconclusive", f"{before} failed as recorded ({_base(baseline)}), but "
                                            + (f"every attempt {after} timed out" if kinds else f"no attempt ran {after}"),
                            rate, passes_to_decide(baseline, rate))
    compared = f"{after} it fails in {rate.span()} of runs, {before} in {_base(baseline)}"
    if below(rate, baseline):
        return FixJudgement("fixed", f"{passed}/{n} attempts {after} passed: {compared}", rate, 0)
    if not passed:
        return FixJudgement("different-failure", f"{n}/{n} attempts {after} failed another way (exit code or "
                                                 f"signature); {before} failed as recorded ({_base(baseline)})", rate)
    more = passes_to_decide(baseline, rate)
    need = f"; {more} more passing run(s) would decide: run again with --max-attempts {n + more}" if more else ""
    return FixJudgement("inconclusive", f"{passed}/{n} attempts {after} passed, not enough to tell a fix from "
                                        f"luck: {compared}{need}", rate, more)


def _rare_next(confidence: float) -> str:
    """What to run when the baseline's runs all passed: enough runs of each side that a failure coming
    back in 1 run of 5 would show at the confidence (a rarer one: pin it first, or more runs still)."""
    runs = math.ceil(math.log(1 - confidence) / math.log(1 - 0.2))
    return (f"run again with --attempts {runs}: in {runs} runs a failure that comes back in 1 run of 5 shows "
            f"at {percent(confidence)} %")


def _base(rate: Rate) -> str:
    return f"{rate.failed}/{rate.runs} failed as recorded, {rate.span()} ({percent(rate.confidence)} %)"


def _pass_kept(expected: Expected, attempts: Sequence[Attempt], after: str, confidence: float) -> FixJudgement:
    """A recorded pass checked with a change: kept (`fixed`) when it comes back as recorded."""
    rate = series_rate([a.classification for a in attempts], confidence)
    n, verdict = rate.runs, judge(expected, attempts)
    done = f"exit {expected.exit_code or 0}"
    if verdict == "reproduced":
        return FixJudgement("fixed", f"the capsule records a pass ({done}), and {n}/{n} attempts {after} "
                                     "passed as recorded", rate)
    if verdict in ("not-reproduced", "different-failure"):
        return FixJudgement("not-fixed", f"the capsule records a pass ({done}), but {n - rate.failed}/{n} "
                                         f"attempts {after} did not end as recorded", rate)
    if verdict == "flaky":
        return FixJudgement("flaky", f"the capsule records a pass ({done}); {after} {rate.failed}/{n} attempts "
                                     "ended as recorded", rate)
    return FixJudgement("inconclusive", f"{_timeouts(attempts)} {after}", rate)


def explain(verdict: Verdict, expected: Expected, attempts: Sequence[Attempt],
            confidence: float = DEFAULT_CONFIDENCE) -> str:
    """The one sentence that ends a report: what happened, why, and what it says of the rate."""
    kinds = [a.classification for a in attempts]
    rate = series_rate(kinds, confidence)
    n, recorded, timed_out = rate.runs, rate.failed, kinds.count("inconclusive")
    head = verdict.upper()
    if verdict == "inconclusive" or not n:
        return f"{head}: {_timeouts(attempts)}."
    late = f"; {timed_out} more timed out (not counted)" if timed_out else ""
    if not expected.failed:
        done = f"exit {expected.exit_code or 0}"
        said = rate.phrase("passes as recorded")
        if verdict == "reproduced":
            return f"{head}: {recorded}/{n} attempts passed as recorded ({done}){late}; {said}."
        return f"{head}: {n - recorded}/{n} attempts did not end as recorded ({done}){_seen(attempts, None)}" \
               f"{late}; {said}."
    want = _matched(expected, attempts)
    said = rate.phrase()
    if verdict == "reproduced":
        return f"{head}: {recorded}/{n} attempts failed as recorded ({want}){late}; {said}."
    if verdict == "not-reproduced":
        return f"{head}: {n}/{n} attempts passed; the capsule recorded a failure ({want}){late}; {said}."
    other = kinds.count("other")
    if verdict == "different-failure":
        passed = f", {kinds.count('pass')} passed" if kinds.count("pass") else ""
        return f"{head}: {other}/{n} attempts failed, but not as recorded ({want}){_seen(attempts, want)}" \
               f"{passed}{late}; {said}."
    words: tuple[tuple[Classification, str], ...] = (("pass", "passed"), ("other", "failed another way"))
    rest = "".join(f", {kinds.count(k)} {word}" for k, word in words if kinds.count(k))
    return f"{head}: {recorded}/{n} attempts failed as recorded ({want}){rest}{late}; {said}."


def _matched(expected: Expected, attempts: Sequence[Attempt]) -> str:
    """The fingerprint the sentence quotes: what the attempts that failed as recorded had in
    common with the capsule (the most common one), else the recorded signature."""
    had = [fingerprint(expected, a) for a in attempts if a.classification == "recorded"]
    if had:
        return max(dict.fromkeys(had), key=had.count)
    return expected.signature or _end(expected.exit_code, expected.signal)


def _end(exit_code: int | None, signal: str | None) -> str:
    return signal or (f"exit {exit_code}" if exit_code is not None else "a failure")


def _timeouts(attempts: Sequence[Attempt]) -> str:
    if not attempts:
        return "no attempt ran"
    return f"{sum(a.timed_out for a in attempts)}/{len(attempts)} attempts timed out, none decided"


def _seen(attempts: Sequence[Attempt], want: str | None) -> str:
    """What came back instead: the most common signature of the attempts that did not match."""
    seen = [a.signature for a in attempts if a.classification == "other" and a.signature]
    if not seen:
        return ""
    common = max(set(seen), key=seen.count)
    return f"; here: {common}" if common != want else "; the output differed"


def trial_verdict(kinds: Sequence[Classification]) -> Verdict:
    """A bisect trial's verdict. One attempt that fails the recorded way is enough
    (a signature match is specific, and a flaky failure otherwise hides behind passes);
    `not-reproduced` needs every attempt to pass."""
    if "recorded" in kinds:
        return "reproduced"
    if kinds and all(k == "pass" for k in kinds):
        return "not-reproduced"
    return "different-failure" if "other" in kinds else "inconclusive"
