"""Bisect spends attempts only where an outcome is ambiguous (issue 12): one per trial while
runs agree with the ends, every one for a flaky failure or a failure of another kind."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from runner.bisect.env import bisect_capsules
from runner.bisect.trial import BisectSettings, Run, repeat, totals

from tests.unit.bisect.fakes import FakeProgress
from tests.unit.bisect.fakes import plan as fake_plan

from tests.unit.bisect.test_env import RECORDED, FakeReplayer, fails_when, run, tz_of

NEW_YORK = "America/New_York"
PASS = (0, "exit0:0000000000000000")


def runs(*kinds: str) -> Callable[[], Run]:
    queue = list(kinds)
    return lambda: Run(queue.pop(0), None, 1.0)  # type: ignore[arg-type]


def test_one_run_decides_while_it_agrees_with_an_end() -> None:
    assert repeat(runs("recorded"), 5).attempts == ("recorded",)
    assert repeat(runs("pass"), 5, more_on_pass=False).attempts == ("pass",)


def test_an_ambiguous_run_gets_the_attempts_up_to_the_most() -> None:
    obs = repeat(runs("other", "other", "recorded"), 5, more_on_pass=False)
    assert (obs.verdict, obs.attempts) == ("reproduced", ("other", "other", "recorded"))
    assert repeat(runs("pass", "pass", "pass"), 3).attempts == ("pass", "pass", "pass")
    assert repeat(runs("other", "other"), 2, more_on_pass=False).verdict == "different-failure"


def test_a_deterministic_failure_costs_one_attempt_per_trial_whatever_attempts_allows() -> None:
    fake = FakeReplayer(fails_when(lambda p: tz_of(p) == NEW_YORK))
    result = run(fake, attempts=5)
    assert result.minimal == ("env:TZ",)
    assert all(len(t.attempts) == 1 for t in result.trials), [t.attempts for t in result.trials]
    assert len(fake.ran) == len(result.trials)


def test_a_flaky_failure_gets_the_attempts_on_passing_trials() -> None:
    # New York fails the recorded way only on every second run of a plan
    fake = FakeReplayer(lambda p, n: (1, RECORDED) if tz_of(p) == NEW_YORK and n % 2 == 0 else PASS)
    result = run(fake, attempts=3)
    assert result.minimal == ("env:TZ",)
    bad_end = next(t for t in result.trials if t.role == "bad end")
    assert bad_end.attempts == ("pass", "recorded")
    passing = [t for t in result.trials if t.verdict == "not-reproduced" and t.role == "search"]
    assert passing and all(len(t.attempts) == 3 for t in passing)
    good_end = next(t for t in result.trials if t.role == "good end")
    assert good_end.attempts == ("pass",)  # judged before the bad end showed its flakiness


def test_totals_count_trials_attempts_and_builds() -> None:
    fake = FakeReplayer(fails_when(lambda p: tz_of(p) == NEW_YORK))
    result = run(fake, attempts=3)
    spent = totals(result.trials, 12.345)
    assert spent == {"trials": len(result.trials), "attempts": len(fake.ran), "builds": len(fake.built),
                     "wall_s": 12.35}


def test_the_ends_fill_one_tool_cache_per_image_that_later_trials_share() -> None:
    fake = FakeReplayer(fails_when(lambda p: tz_of(p) == NEW_YORK))
    result = bisect_capsules(fake, Path("bad.json"), Path("good.json"), BisectSettings(1, 1, True), FakeProgress())
    assert result.minimal == ("env:TZ",)
    assert all(m and m[0].target == "/tmp/jest_0" and not m[0].read_only and m[0].volume for m in fake.mounts)
    by_image: dict[str, set[str]] = {}
    for plan, mounts in zip(fake.ran, fake.mounts):
        by_image.setdefault(repr(plan.runtimes), set()).add(mounts[0].source)
    assert all(len(sources) == 1 for sources in by_image.values())  # one volume per image
    assert len(set.union(*by_image.values())) == len(by_image)
    ends = {repr(p.runtimes): m[0].source for p, m in zip(fake.ran[:2], fake.mounts[:2])}
    assert len(ends) == 2  # each end fills its own image's volume (from empty: a fresh volume)...
    later = [(repr(p.runtimes), m[0].source) for p, m in zip(fake.ran[2:], fake.mounts[2:]) if repr(p.runtimes) in ends]
    assert later and all(ends[image] == source for image, source in later)  # ...that later trials share
    assert any("shared one test-tool cache" in n and "filled by the ends' first attempts" in n for n in result.notes)


def test_only_an_ends_first_attempt_fills_the_cache() -> None:
    # New York fails the recorded way only on every second run: the bad end needs two attempts
    fake = FakeReplayer(lambda p, n: (1, RECORDED) if tz_of(p) == NEW_YORK and n % 2 == 0 else PASS)
    result = bisect_capsules(fake, Path("bad.json"), Path("good.json"), BisectSettings(3, 1, True), FakeProgress())
    bad_end = next(t for t in result.trials if t.role == "bad end")
    assert bad_end.attempts == ("pass", "recorded")
    assert fake.mounts[1] and fake.mounts[2] == ()  # its second attempt ran from a cold cache, not the first's


def test_ends_sharing_an_image_fill_its_cache_once() -> None:
    from runner.bisect.toolcache import NONE, ToolCache

    cache, p = ToolCache(), fake_plan()
    first = cache.mounts("img:a", "good", p)
    assert first[0] and first[1] == NONE
    assert cache.mounts("img:a", "bad", p) == (NONE, NONE)  # the other end runs without it: both start cold
    assert cache.mounts("img:a", None, p) == (NONE, NONE)  # nothing shared before both ends replayed as recorded
    cache.end_seen("good", "not-reproduced")
    cache.end_seen("bad", "reproduced")
    assert cache.mounts("img:a", None, p) == (first[0], first[0])
    assert cache.close()  # the note that the trials shared it


def test_no_cache_reuse_mounts_nothing() -> None:
    fake = FakeReplayer(fails_when(lambda p: tz_of(p) == NEW_YORK))
    result = run(fake)
    assert all(m == () for m in fake.mounts)
    assert not any("test-tool cache" in n for n in result.notes)


def test_a_variant_build_past_the_build_timeout_ends_the_bisect() -> None:
    import pytest

    from runner.errors import BuildTimedOut, Exit

    from tests.unit.bisect.test_env import node_of

    class Stalled(FakeReplayer):
        def image(self, p):  # type: ignore[no-untyped-def]
            if len(self.built) >= 2:  # both ends are built: this is a variant's image
                raise BuildTimedOut(3600, "[stage-2 5/9] RUN npm ci")
            return super().image(p)

    fake = Stalled(fails_when(lambda p: node_of(p).startswith("20.")))
    with pytest.raises(BuildTimedOut) as caught:  # every other variant would wait as long: exit 3, not inconclusive
        run(fake)
    assert caught.value.exit_code == Exit.ENVIRONMENT
