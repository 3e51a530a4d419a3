"""Trials: with --keep, only the bad end's attempts may be kept (replay/keep.py chooses which one stays); only
the ends' images fill Go's shared build cache."""
from __future__ import annotations

from pathlib import Path

from runner.bisect.env import bisect_capsules
from runner.bisect.trial import BisectSettings

from tests.unit.bisect.fakes import FakeProgress
from tests.unit.bisect.world import BAD, FakeReplayer, node_of, tz_of, tz_rule


def test_keep_asks_to_keep_the_bad_ends_attempts_only() -> None:
    fake = FakeReplayer(tz_rule())
    result = bisect_capsules(fake, fake, Path("bad.json"), Path("good.json"), BisectSettings(keep=True), FakeProgress())
    assert result.status == "found"
    kept = {repr(p) for p, keep in zip(fake.ran, fake.keep_asked) if keep}
    (bad_end,) = kept  # one plan, every fact of the bad capsule: the bad end's
    bad_end_plan = next(p for p in fake.ran if repr(p) == bad_end)
    assert (tz_of(bad_end_plan), node_of(bad_end_plan)) == (tz_of(BAD), node_of(BAD))
    assert set(fake.keep_asked) == {None, True}  # every other trial's attempts: as the replayer's options say

def test_without_keep_nothing_is_asked() -> None:
    fake = FakeReplayer(tz_rule())
    bisect_capsules(fake, fake, Path("bad.json"), Path("good.json"), BisectSettings(), FakeProgress())
    assert set(fake.keep_asked) == {None}


def test_only_the_ends_fill_gos_cache_from_their_image() -> None:
    fake = FakeReplayer(tz_rule())
    bisect_capsules(fake, fake, Path("bad.json"), Path("good.json"), BisectSettings(), FakeProgress())
    filled = {(tz_of(p), node_of(p)) for p, fill in zip(fake.ran, fake.fill_go) if fill}
    between = {(tz_of(p), node_of(p)) for p, fill in zip(fake.ran, fake.fill_go) if not fill}
    assert (tz_of(BAD), node_of(BAD)) in filled and between  # the bad end fills; the sets between do not
    assert (tz_of(BAD), node_of(BAD)) not in between
