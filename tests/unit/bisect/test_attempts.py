"""How many runs a bisect spends: one run decides while the failure behaves deterministically,
the bad end's rate first, and the answer's check; a trial stops at its first recorded failure."""
from __future__ import annotations

from pathlib import Path

import pytest

from runner.bisect.env import bisect_capsules
from runner.bisect.rules import RATE_FIRST
from runner.bisect.trial import BisectSettings, Run, runs_of, totals

from tests.unit.bisect.fakes import FakeProgress
from tests.unit.bisect.fakes import plan as fake_plan

from tests.unit.bisect.world import RECORDED, FakeReplayer, fails_when, run, tz_of

NEW_YORK = "America/New_York"
PASS = (0, "exit0:0000000000000000")


@pytest.mark.parametrize(("pattern", "most", "verdict", "ran"), [
    ("ppp", 3, "not-reproduced", 3), ("ppr", 3, "reproduced", 3), ("rpp", 3, "reproduced", 1),
    ("pop", 3, "different-failure", 3), ("ptp", 3, "inconclusive", 3), ("por", 3, "reproduced", 3),
    ("ppr", 1, "not-reproduced", 1),
])
def test_a_trial_stops_at_its_first_recorded_failure(pattern: str, most: int, verdict: str, ran: int) -> None:
    names = {"r": "recorded", "p": "pass", "o": "other", "t": "inconclusive"}
    queue = list(pattern)

    def once() -> Run:
        v = queue.pop(0)
        return Run(names[v], None if v == "p" else f"sig-{v}", 1.0)  # type: ignore[arg-type]

    obs = runs_of(once, most)
    assert (obs.verdict, len(obs.attempts), obs.run_s) == (verdict, ran, float(ran))
    letter = {"reproduced": "r", "different-failure": "o", "inconclusive": "t"}.get(verdict)
    assert obs.signature == (None if letter is None else f"sig-{letter}")


def test_a_deterministic_failure_costs_one_run_a_trial_besides_the_rate_and_the_check() -> None:
    fake = FakeReplayer(fails_when(lambda p: tz_of(p) == NEW_YORK))
    result = run(fake)
    assert result.minimal == ("env:TZ",) and result.found
    ends = [t for t in result.trials if t.role != "search"]
    search = [t for t in result.trials if t.role == "search"]
    assert all(len(t.attempts) == 1 for t in search), [t.attempts for t in search]
    # the bad end RATE_FIRST times (its rate first: a failure half the time passes for deterministic 1 time in 4);
    # the good end is the answer's one removal, run until a failing set would rarely have passed so often
    assert [t.attempts for t in ends if t.role == "bad end"] == [("recorded",)] * RATE_FIRST
    good = [k for t in ends if t.role == "good end" for k in t.attempts]
    assert set(good) == {"pass"} and len(good) == result.removals[0].runs > 1
    assert result.removals[0].luck <= 0.05
    assert len(fake.ran) == len(search) + RATE_FIRST + len(good)


def test_totals_count_trials_attempts_and_builds() -> None:
    fake = FakeReplayer(fails_when(lambda p: tz_of(p) == NEW_YORK))
    result = run(fake, attempts=3)
    spent = totals(result.trials, 12.345)
    assert spent == {"trials": len(result.trials), "attempts": len(fake.ran), "builds": len(fake.built),
                     "wall_s": 12.35}


def test_the_ends_fill_one_tool_cache_per_image_that_later_trials_share() -> None:
    fake = FakeReplayer(fails_when(lambda p: tz_of(p) == NEW_YORK))
    result = bisect_capsules(fake, fake, Path("bad.json"), Path("good.json"), BisectSettings(None, 1, True), FakeProgress())
    assert result.minimal == ("env:TZ",)
    roles = [t.role for t in result.trials for _ in t.attempts]
    searched = [m for m, role in zip(fake.mounts, roles) if role == "search"]
    assert searched and all(m and m[0].target == "/tmp/jest_0" and not m[0].read_only and m[0].volume
                            for m in searched)
    by_image: dict[str, set[str]] = {}
    for p, mounts in zip(fake.ran, fake.mounts):
        if mounts:
            by_image.setdefault(repr(p.runtimes), set()).add(mounts[0].source)
    assert all(len(sources) == 1 for sources in by_image.values())  # one volume per image
    ends = {repr(p.runtimes): m[0].source for p, m in zip(fake.ran[:2], fake.mounts[:2])}
    assert len(ends) == 2  # each end's first run fills its own image's volume (from empty: a fresh volume)...
    later = [(repr(p.runtimes), m[0].source) for p, m, role in zip(fake.ran, fake.mounts, roles)
             if role == "search" and repr(p.runtimes) in ends]
    assert later and all(ends[image] == source for image, source in later)  # ...that later trials share
    again = [(m, role) for m, role in zip(fake.mounts[2:], roles[2:]) if role != "search"]
    # an end's later runs, once both ends replayed as recorded cold, are runs like a trial's: they share it
    assert again and all(m and m[0].source in ends.values() for m, _ in again), again
    assert any("shared one test-tool cache" in n and "filled by the ends' first attempts" in n for n in result.notes)


def test_only_an_ends_first_attempt_fills_the_cache() -> None:
    # New York fails the recorded way only on every second run: the bad end needs two attempts
    fake = FakeReplayer(lambda p, n: (1, RECORDED) if tz_of(p) == NEW_YORK and n % 2 == 0 else PASS)
    result = bisect_capsules(fake, fake, Path("bad.json"), Path("good.json"), BisectSettings(None, 1, True), FakeProgress())
    bad_end = [t.attempts for t in result.trials if t.role == "bad end"]
    assert bad_end[:2] == [("pass",), ("recorded",)]
    assert fake.mounts[1] and fake.mounts[2] == ()  # its second attempt ran from a cold cache, not the first's


def test_ends_sharing_an_image_fill_its_cache_once() -> None:
    from runner.replay.toolcache import NONE, ToolCache

    cache, p = ToolCache(), fake_plan()
    first = cache.mounts("img:a", "good", p)
    assert first[0] and first[1] == NONE
    assert cache.mounts("img:a", "bad", p) == (NONE, NONE)  # the other end runs without it: both start cold
    assert cache.mounts("img:a", None, p) == (NONE, NONE)  # nothing shared before both ends replayed as recorded
    cache.end_seen("good", "not-reproduced")
    cache.end_seen("bad", "reproduced")
    assert cache.mounts("img:a", None, p) == (first[0], first[0])
    assert cache.mounts("img:a", "bad", p) == (first[0], first[0])  # an end's runs from now on share it too
    assert cache.close()  # the note that the trials shared it


def test_no_cache_reuse_mounts_nothing() -> None:
    fake = FakeReplayer(fails_when(lambda p: tz_of(p) == NEW_YORK))
    result = run(fake)
    assert all(m == () for m in fake.mounts)
    assert not any("test-tool cache" in n for n in result.notes)


def test_a_variant_build_past_the_build_timeout_ends_the_bisect() -> None:
    from runner.errors import BuildTimedOut, Exit

    from tests.unit.bisect.world import node_of

    class Stalled(FakeReplayer):
        def image(self, p):  # type: ignore[no-untyped-def]
            if len(self.built) >= 2:  # both ends are built: this is a variant's image
                raise BuildTimedOut(3600, "[stage-2 5/9] RUN npm ci")
            return super().image(p)

    fake = Stalled(fails_when(lambda p: node_of(p).startswith("20.")))
    with pytest.raises(BuildTimedOut) as caught:  # every other variant would wait as long: exit 3, not inconclusive
        run(fake)
    assert caught.value.exit_code == Exit.ENVIRONMENT
