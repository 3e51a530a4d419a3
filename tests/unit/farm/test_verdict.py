"""Verdicts from attempts (K, then more only where they disagree), the Wilson interval,
--ref judged like --patch, and broken vs infra-error from replay's typed errors."""
from __future__ import annotations

import pytest

from runner.errors import (BuildFailed, CapsuleError, CapsuleRefused, EngineUnavailable, NeedsInput,
                           SourceUnavailable)
from runner.build.source import RemoteFailed
from runner.engine.buildlog import build_failure
from runner.errors import Exit
from runner.farm.verdict import decide, more_attempts, ref_done, ref_judgement, unjudged, wilson
from runner.replay import Expected

from tests.unit.farm.records import attempt

FAILS = Expected(True, 1, None, "exit1:aaaa", ("Error: boom",))
PASSES = Expected(False, 0, None, None)


@pytest.mark.parametrize("k, n, low, high", [(0, 3, 0.0, 0.5615), (3, 3, 0.4385, 1.0), (5, 10, 0.2366, 0.7634),
                                            (1, 10, 0.0179, 0.4042)])
def test_wilson_interval(k: int, n: int, low: float, high: float) -> None:
    rate = wilson(k, n)
    assert (rate.k, rate.n) == (k, n)
    assert rate.low == pytest.approx(low, abs=1e-4) and rate.high == pytest.approx(high, abs=1e-4)


def test_no_attempt_gives_the_whole_interval() -> None:
    assert (wilson(0, 0).low, wilson(0, 0).high) == (0.0, 1.0)


@pytest.mark.parametrize("kinds, more", [
    ([], 3), (["recorded"], 2), (["recorded"] * 3, 0), (["pass"] * 3, 0),
    (["recorded", "pass", "recorded"], 7),  # the first three disagree: up to ten
    (["recorded", "recorded", "inconclusive"], 7),  # a timeout disagrees too
    (["recorded", "pass"] * 5, 0), (["recorded"] * 2 + ["pass"] * 9, 0),
])
def test_more_attempts_only_where_the_first_disagree(kinds: list[str], more: int) -> None:
    assert more_attempts(kinds, 3, 10) == more


def _records(*kinds: str, signature: str = "exit1:aaaa") -> list:
    return [attempt("n", "c", i, k, exit_code=0 if k == "pass" else 1,
                    signature="exit0:bbbb" if k == "pass" else signature, key_lines=("Error: boom",))
            for i, k in enumerate(kinds, 1)]


def test_all_attempts_as_recorded_is_reproduced_with_its_rate() -> None:
    d = decide(FAILS, _records("recorded", "recorded", "recorded"))
    assert (d.verdict, d.signature, d.exit_code, d.key_lines) == ("reproduced", "exit1:aaaa", 1, ("Error: boom",))
    assert (d.rate.k, d.rate.n) == (3, 3)


def test_mixed_attempts_are_flaky_with_the_rate_of_the_reproducing_ones() -> None:
    d = decide(FAILS, _records(*(["recorded", "pass"] * 3), "pass", "pass", "recorded", "pass"))
    assert d.verdict == "flaky"
    assert (d.rate.k, d.rate.n) == (4, 10)
    assert d.rate.low < 0.4 < d.rate.high


def test_another_failure_and_a_pass_in_the_vocabulary() -> None:
    assert decide(FAILS, _records("other", "other", "other", signature="exit1:cccc")).verdict == "different-failure"
    assert decide(FAILS, _records("pass", "pass", "pass")).verdict == "not-reproduced"
    assert decide(PASSES, _records("recorded", "recorded", "recorded")).verdict == "reproduced"
    assert decide(FAILS, [attempt("n", "c", 1, "inconclusive", timed_out=True)]).verdict == "inconclusive"


def test_ref_follows_the_one_fix_table_with_the_same_nights_own_commit_verdict_as_baseline() -> None:
    def fix(baseline: str, *kinds: str) -> str:
        return ref_judgement(FAILS, baseline, _records(*kinds)).verdict  # type: ignore[arg-type]

    assert fix("reproduced", "pass", "pass", "pass") == "fixed"
    assert fix("reproduced", "recorded") == "not-fixed"
    assert fix("reproduced", "pass", "recorded") == "flaky"  # the old farm mapping said not-fixed
    assert fix("flaky", "other") == "different-failure"
    assert fix("reproduced", "inconclusive") == "inconclusive"
    assert fix("not-reproduced", "pass", "pass", "pass") == "inconclusive"
    assert fix("different-failure", "pass", "pass", "pass") == "inconclusive"
    assert ref_judgement(PASSES, "reproduced", _records("pass")).verdict == "inconclusive"
    # the same function --patch uses, not a copy of it
    from runner.verdict.judge import judge_fix
    from runner.farm.verdict import as_attempt
    for kinds in (("pass",), ("pass", "recorded"), ("recorded",), ("other",)):
        recs = _records(*kinds)
        assert ref_judgement(FAILS, "reproduced", recs) == judge_fix(FAILS, "reproduced", [as_attempt(r) for r in recs])


def test_ref_attempts_stop_at_the_first_that_does_not_pass() -> None:
    assert not ref_done(_records("pass", "pass"), 3)
    assert ref_done(_records("pass", "pass", "pass"), 3)
    assert ref_done(_records("pass", "recorded"), 10)


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
