"""Verdicts from attempts (K, then more only while they disagree), the rate of the one rate
model, --ref judged like --patch against that rate, and broken vs infra-error from replay's
typed errors."""
from __future__ import annotations

import pytest

from runner.errors import (BuildFailed, CapsuleError, CapsuleRefused, EngineUnavailable, NeedsInput,
                           SourceUnavailable)
from runner.build.sources.repo import RemoteFailed
from runner.engine.buildlog import build_failure
from runner.errors import Exit
from runner.farm.night_options import FarmOptions
from runner.farm.verdict import decide, kinds_of, ref_judgement, unjudged
from runner.replay import Expected
from runner.verdict.rate import Rate

from tests.unit.farm.records import attempt

FAILS = Expected(True, 1, None, "exit1:aaaa", ("Error: boom",))
PASSES = Expected(False, 0, None, None)


def _records(*kinds: str, signature: str = "exit1:aaaa") -> list:
    return [attempt("n", "c", i, k, exit_code=0 if k == "pass" else 1,
                    signature="exit0:bbbb" if k == "pass" else signature, key_lines=("Error: boom",))
            for i, k in enumerate(kinds, 1)]


@pytest.mark.parametrize("kinds, more", [
    ([], 3), (["recorded"], 2), (["recorded"] * 3, 0), (["pass"] * 3, 0),
    (["recorded", "pass", "recorded"], 4),  # they disagree: the fewest more that could decide (4 more failures), at once
    (["recorded", "pass"] * 5, 0),  # the night's budget (--max-attempts 10) is spent
])
def test_a_night_runs_k_attempts_then_more_only_while_they_disagree(kinds: list[str], more: int) -> None:
    assert FarmOptions(attempts=3, max_attempts=10).sampling.series_batch(kinds_of(_records(*kinds))) == more


def test_all_attempts_as_recorded_is_reproduced_with_its_rate() -> None:
    d = decide(FAILS, _records("recorded", "recorded", "recorded"))
    assert (d.verdict, d.signature, d.exit_code, d.key_lines) == ("reproduced", "exit1:aaaa", 1, ("Error: boom",))
    assert d.rate == Rate.of(3, 3) and d.signatures == ("exit1:aaaa",)


def test_mixed_attempts_are_flaky_with_the_rate_and_every_signature() -> None:
    d = decide(FAILS, _records(*(["recorded", "pass"] * 3), "pass", "pass", "recorded", "pass"), confidence=0.99)
    assert d.verdict == "flaky"
    assert d.rate == Rate.of(4, 10, 0.99)
    assert d.signatures == ("exit0:bbbb", "exit1:aaaa")  # a flaky capsule's signatures, as a set


def test_another_failure_and_a_pass_in_the_vocabulary() -> None:
    assert decide(FAILS, _records("other", "other", "other", signature="exit1:cccc")).verdict == "different-failure"
    assert decide(FAILS, _records("pass", "pass", "pass")).verdict == "not-reproduced"
    assert decide(PASSES, _records("recorded", "recorded", "recorded")).verdict == "reproduced"
    timed_out = decide(FAILS, [attempt("n", "c", 1, "inconclusive", timed_out=True)])
    assert timed_out.verdict == "inconclusive" and timed_out.rate is None


def test_ref_is_judged_by_the_one_fix_judgement_against_the_nights_own_commit_rate() -> None:
    def fix(baseline: Rate, *kinds: str) -> str:
        return ref_judgement(FAILS, baseline, _records(*kinds), "abc1234").verdict

    deterministic = Rate.of(3, 3)
    assert fix(deterministic, *["pass"] * 5) == "fixed"
    assert fix(deterministic, *["pass"] * 3) == "inconclusive"  # 3 passes do not outweigh 3 failures
    assert fix(deterministic, "recorded") == "not-fixed"
    assert fix(deterministic, "pass", "recorded") == "not-fixed"
    assert fix(Rate.of(5, 10), "other", "other", "other") == "different-failure"
    assert fix(deterministic, "inconclusive") == "inconclusive"
    assert fix(Rate.of(0, 3), *["pass"] * 5) == "inconclusive"  # the failure never came back: nothing to fix
    assert fix(Rate.of(5, 10), *["pass"] * 5) == "inconclusive"  # a flaky failure needs more straight passes
    judged = ref_judgement(FAILS, Rate.of(5, 10), _records(*["pass"] * 5), "abc1234")
    assert judged.more_passes == 8 and "at abc1234" in judged.why
    # the same function --patch uses, not a copy of it
    from runner.verdict.judge import judge_fix
    from runner.farm.verdict import as_attempt
    for kinds in (("pass",), ("pass", "recorded"), ("recorded",), ("other",)):
        recs = _records(*kinds)
        assert ref_judgement(FAILS, deterministic, recs, "R") == judge_fix(
            FAILS, deterministic, [as_attempt(r) for r in recs], "the recorded commit", "at R")


def test_ref_attempts_go_one_at_a_time_until_decided() -> None:
    sampling = FarmOptions(attempts=3, max_attempts=10).sampling
    base = Rate.of(3, 3)
    assert sampling.fix_next(base, kinds_of(_records("pass", "pass"))) is not None
    assert sampling.fix_next(base, kinds_of(_records(*["pass"] * 5))) is None  # fixed
    assert sampling.fix_next(base, kinds_of(_records("pass", "recorded"))) is None  # not fixed
    assert sampling.fix_next(Rate.of(0, 3), []) is None  # nothing to fix: no REF attempt


@pytest.mark.parametrize("exc, verdict", [
    (CapsuleError("c.json", "not JSON"), "broken"),
    (NeedsInput("c.json: the capsule records no source (no git commit); pass --source DIR"), "broken"),
    (CapsuleRefused("c.json: does not verify"), "broken"),
    (RemoteFailed("https://example.com/r.git", "answers, but commit abc1234 is not in it", Exit.BAD_INPUT), "broken"),
    (SourceUnavailable("npm registry has no left-pad@9.9.9", "capsule"), "broken"),
    # the words alone decide nothing: whoever raised it said whose fault it is
    (SourceUnavailable("npm registry has no left-pad@9.9.9 (a registry that forgot it)"), "infra-error"),
    (RemoteFailed("https://example.com/r.git", "cannot be cloned: no answer in 120 s"), "infra-error"),
    (SourceUnavailable("git clone: fatal: unable to access 'https://example.com/r.git/': Could not resolve host"),
     "infra-error"),
    (SourceUnavailable("https://registry.npmjs.org/x: HTTP 503"), "infra-error"),
    (build_failure("lockfile sha256 mismatch", ["expected 12ab, found 34cd"]), "broken"),
    (build_failure("apt-get", ["E: Failed to fetch ... Temporary failure resolving 'deb.debian.org'"]), "infra-error"),
    (BuildFailed("image build failed: the engine went away during the build"), "infra-error"),
    (EngineUnavailable("no Docker engine answers"), "infra-error"),
    (RuntimeError("bug"), "infra-error"),
])
def test_broken_or_infra_error_from_the_typed_error(exc: BaseException, verdict: str) -> None:
    got, reason = unjudged(exc)
    assert got == verdict
    assert reason and "\n" not in reason
    if isinstance(exc, RuntimeError):
        assert reason.startswith("internal error: RuntimeError")
