"""Judging: what a capsule recorded, what an attempt did, and what a set of attempts says.

Every command that judges a run — `replay`, bisect trials, the farm, the CI jobs — judges it
here, in the words of the one verdict vocabulary (facts.py), so a verdict means the same
thing wherever it is read.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import signature as sig
from ..capsules.model import Capsule
from .facts import REPRODUCES, VERDICTS, Classification, Verdict, exit_code_of

__all__ = ["REPRODUCES", "VERDICTS", "Attempt", "Classification", "Expected", "FixJudgement", "Verdict", "classify",
           "exit_code_of", "expected_of", "explain", "judge", "judge_fix", "trial_verdict"]

@dataclass(frozen=True)
class Expected:
    failed: bool
    exit_code: int | None
    signal: str | None
    signature: str | None
    key_lines: tuple[str, ...] = ()
    stdout: bytes | None = None  # compared byte for byte when the format records it
    signature_source: str = "recorded"  # recorded | recomputed from outputTail | none


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


def expected_of(capsule: Capsule) -> Expected:
    cmd = capsule.command
    stdout = cmd.stdout.data if cmd.stdout is not None else None
    if not capsule.failed:
        return Expected(False, cmd.exit_code if cmd.exit_code is not None else 0, None, None, (), stdout, "none")
    recorded = cmd.failure
    if recorded and recorded.output_tail is not None:
        again = sig.compute(recorded.output_tail, cmd.exit_code, cmd.signal)
        if recorded.signature and tuple(recorded.key_lines) == again.key_lines and recorded.signature == again.signature:
            return Expected(True, cmd.exit_code, cmd.signal, recorded.signature, again.key_lines, stdout, "recorded")
        return Expected(True, cmd.exit_code, cmd.signal, again.signature, again.key_lines, stdout,
                        "recomputed from outputTail (the recorded one was made by another rule)")
    if recorded and recorded.signature:
        return Expected(True, cmd.exit_code, cmd.signal, recorded.signature, tuple(recorded.key_lines), stdout, "recorded")
    if cmd.stdout is not None or cmd.stderr is not None:
        text = (cmd.stdout.data if cmd.stdout else b"") + (cmd.stderr.data if cmd.stderr else b"")
        again = sig.compute(text.decode("utf-8", "replace"), cmd.exit_code, cmd.signal)
        return Expected(True, cmd.exit_code, cmd.signal, again.signature, again.key_lines, stdout,
                        "computed from the recorded stdout and stderr")
    return Expected(True, cmd.exit_code, cmd.signal, None, (), stdout, "none")


def classify(expected: Expected, attempt: Attempt) -> Classification:
    if attempt.timed_out:
        return "inconclusive"
    stdout_ok = expected.stdout is None or attempt.stdout == expected.stdout
    if not expected.failed:
        return "recorded" if attempt.exit_code == (expected.exit_code or 0) and stdout_ok else "other"
    if attempt.exit_code == 0 and attempt.signal is None:
        return "pass"
    if expected.signal:
        same_end = attempt.signal == expected.signal
    else:  # a failure recorded with no exit code matches any non-zero exit
        same_end = expected.exit_code is None or attempt.exit_code == expected.exit_code
    same_sig = expected.signature is None or attempt.signature == expected.signature
    return "recorded" if same_end and same_sig and stdout_ok else "other"


def judge(expected: Expected, attempts: Sequence[Attempt], patched: bool = False) -> Verdict:
    kinds = [a.classification for a in attempts]
    if not kinds or all(k == "inconclusive" for k in kinds):
        return "inconclusive"
    decided = [k for k in kinds if k != "inconclusive"]
    if patched:
        return "fixed" if all(k == "pass" for k in decided) and len(decided) == len(kinds) else "not-fixed"
    if len(set(decided)) > 1 or len(decided) != len(kinds):
        return "flaky"
    only = decided[0]
    if only == "recorded":
        return "reproduced"
    if not expected.failed:
        return "not-reproduced"
    return "not-reproduced" if only == "pass" else "different-failure"




@dataclass(frozen=True)
class FixJudgement:
    verdict: Verdict
    why: str  # one sentence, without the verdict word


def judge_fix(expected: Expected, baseline: Verdict, patched: Sequence[Attempt],
              before: str = "the unpatched source", after: str = "with the patch") -> FixJudgement:
    """The one fix judgement (`--patch`, `--ref`, the farm's `--ref`, the PR job), against the
    baseline run of the same judgement: `fixed` only when the failure comes back at `before`
    (the unpatched source, or the recorded commit) and every attempt `after` passes; a change
    that changes nothing cannot look like a fix on a failure that does not come back here."""
    if not expected.failed:
        return FixJudgement("inconclusive", "the capsule records a pass: there is no failure to fix")
    if baseline not in REPRODUCES:
        return FixJudgement("inconclusive", f"{before} did not reproduce the failure here ({baseline}), "
                                            "so the fix cannot be judged")
    kinds = [a.classification for a in patched]
    n, passed, recorded, other = len(kinds), kinds.count("pass"), kinds.count("recorded"), kinds.count("other")
    failed = f"{before} failed as recorded" + (" (flaky)" if baseline == "flaky" else "")
    if n and passed == n:
        return FixJudgement("fixed", f"{failed} and {n}/{n} attempts {after} passed")
    if not passed and not recorded and not other:
        return FixJudgement("inconclusive", f"{failed}, but every attempt {after} timed out")
    if passed:
        return FixJudgement("flaky", f"{failed}; {after} {passed}/{n} attempts passed and {n - passed} did not")
    if recorded:
        return FixJudgement("not-fixed", f"{recorded}/{n} attempts {after} still failed as recorded")
    return FixJudgement("different-failure", f"{failed}; {after} {other}/{n} attempts failed "
                                             "another way (exit code or signature)")


def explain(verdict: Verdict, expected: Expected, attempts: Sequence[Attempt]) -> str:
    """The one sentence that ends a report: what happened and why."""
    kinds = [a.classification for a in attempts]
    n, recorded = len(kinds), kinds.count("recorded")
    head = verdict.upper()
    if not expected.failed:
        done = f"exit {expected.exit_code or 0}"
        if verdict == "reproduced":
            return f"{head}: {recorded}/{n} attempts passed as recorded ({done})."
        if verdict == "inconclusive":
            return f"{head}: {_timeouts(attempts)}."
        return f"{head}: {n - recorded - kinds.count('inconclusive')}/{n} attempts did not end as recorded ({done})" \
               f"{_seen(attempts, None)}."
    want = expected.signature or _end(expected.exit_code, expected.signal)
    if verdict == "reproduced":
        return f"{head}: {recorded}/{n} attempts failed as recorded ({want})."
    if verdict == "not-reproduced":
        return f"{head}: {kinds.count('pass')}/{n} attempts passed; the capsule recorded a failure ({want})."
    if verdict == "different-failure":
        return f"{head}: {kinds.count('other')}/{n} attempts failed, but not as recorded ({want}){_seen(attempts, want)}."
    if verdict == "flaky":
        words: tuple[tuple[Classification, str], ...] = (("pass", "passed"), ("other", "failed another way"),
                                                         ("inconclusive", "timed out"))
        rest = ", ".join(f"{kinds.count(k)} {word}" for k, word in words if kinds.count(k))
        return f"{head}: {recorded}/{n} attempts failed as recorded ({want}); {rest}."
    return f"{head}: {_timeouts(attempts)}."


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
