"""The test-tool caches attempts share follow the tool and hold build artefacts only: Go's build cache
one volume per toolchain for every attempt, filled from each image; jest's and Python's per image
for bisect's trials after the ends."""
from __future__ import annotations

import dataclasses

from runner.replay.toolcache import NONE, GoCache, ToolCache
from runner.build.plan import EnvSetting, Plan, Runtime
from runner.capsules.model import FrozenMap
from runner.engine import LABEL

from tests.unit.bisect.fakes import plan
from tests.unit.fake_engine import FakeEngine


def with_runtime(name: str, version: str, **env: str) -> Plan:
    return dataclasses.replace(plan(), argv=("go", "test", "./...") if name == "go" else ("python3", "-m", "pytest"),
                               runtimes=(Runtime(name, version, version, "pypi", True),), node_pins=FrozenMap(),
                               env=FrozenMap({k: EnvSetting("set", v) for k, v in env.items()}))


def shared_later(p: Plan) -> tuple[ToolCache, object]:
    cache = ToolCache()
    cache.mounts("img:a", "good", p)
    cache.end_seen("good", "not-reproduced")
    cache.end_seen("bad", "reproduced")
    return cache, cache.mounts("img:a", None, p)[0]


def test_node_shares_jests_cache_and_sets_nothing() -> None:
    cache, got = shared_later(plan())
    assert [m.target for m in got.mounts] == ["/tmp/jest_0"] and got.env == ()  # type: ignore[attr-defined]
    assert got.apply(plan()) == plan()  # type: ignore[attr-defined]
    assert "jest's cache (/tmp/jest_0" in cache.close()[0]


def go_shared(p: Plan, *images: str, share: bool = True) -> tuple[FakeEngine, list[object]]:
    engine = FakeEngine()
    cache = GoCache(lambda: engine, share)
    return engine, [cache.shared(p, image) for image in images]


def test_go_shares_one_build_cache_per_toolchain_but_never_its_test_results() -> None:
    p = with_runtime("go", "1.22.10", GOFLAGS="-mod=vendor")
    engine, got = go_shared(p, "img:a", "img:a", "img:b")
    # one volume for both images (the cache is content-addressed), filled from each image once, before its attempts
    assert {m.source for g in got for m in g.mounts} == {"replay-gocache-go1.22.10"}  # type: ignore[attr-defined]
    assert [m.target for m in got[0].mounts] == ["/opt/replay/toolcache/go-build"]  # type: ignore[attr-defined]
    assert [r.image for r in engine.runs] == ["img:a", "img:b"]
    seed = engine.runs[0]
    assert seed.argv[:2] == ("sh", "-c") and "cp -Rpn /opt/replay/toolcache/go-build/." in seed.argv[2]
    # the machine's, not this replay's: its cleanup leaves it (the volume takes the labels of the container that makes it)
    assert seed.labels == ((LABEL, "toolcache"),) and seed.network == "none"
    assert [(m.source, m.volume, m.read_only) for m in seed.mounts] == [("replay-gocache-go1.22.10", True, False)]
    env = got[0].apply(p).env  # type: ignore[attr-defined]
    assert env["GOCACHE"] == EnvSetting("set", "/opt/replay/toolcache/go-build")
    assert env["GOFLAGS"] == EnvSetting("set", "-mod=vendor -count=1")  # the recorded flags kept, results not reused


def test_a_bisects_commit_between_the_ends_fills_only_a_volume_no_image_filled_yet() -> None:
    p = with_runtime("go", "1.22.10")
    engine = FakeEngine()
    cache = GoCache(lambda: engine)
    first = cache.shared(p, "img:between", every_image=False)  # nothing filled it yet: this image does
    cache.shared(p, "img:end")
    later = cache.shared(p, "img:other", every_image=False)  # the ends' fills and the trials' compiles serve it
    assert [r.image for r in engine.runs] == ["img:between", "img:end"]
    assert first.mounts == later.mounts and later.env == first.env  # type: ignore[attr-defined]


def test_each_volume_handed_out_is_told_to_the_usage_ledger() -> None:
    told: list[str] = []
    cache = GoCache(lambda: FakeEngine(), used=told.append)
    cache.shared(with_runtime("go", "1.22.10"), "img:a")
    cache.shared(with_runtime("go", "1.23.9"), "img:b")
    GoCache(lambda: FakeEngine(), share=False, used=told.append).shared(with_runtime("go", "1.22.10"), "img:a")
    assert told == ["replay-gocache-go1.22.10", "replay-gocache-go1.23.9"]  # none without a volume


def test_without_sharing_each_attempt_has_its_images_cache_and_still_no_test_result() -> None:
    p = with_runtime("go", "1.22.10")
    engine, (got,) = go_shared(p, "img:a", share=False)
    assert got.mounts == () and engine.runs == []  # type: ignore[attr-defined]
    assert dict(got.env) == {"GOFLAGS": "-count=1"}  # type: ignore[attr-defined]


def test_go_uses_the_recorded_gocache_directory() -> None:
    p = with_runtime("go", "1.22.10", GOCACHE="/root/.cache/go-build")
    _, (got,) = go_shared(p, "img:a")
    assert [m.target for m in got.mounts] == ["/root/.cache/go-build"]  # type: ignore[attr-defined]
    assert got.apply(p).env["GOFLAGS"] == EnvSetting("set", "-count=1")  # type: ignore[attr-defined]


def test_bisects_note_names_gos_cache_and_its_trials_share_no_second_one() -> None:
    p = with_runtime("go", "1.22.10")
    cache, got = shared_later(p)
    assert got == NONE  # GoCache's, not a volume per image besides
    (note,) = cache.close()
    assert note.startswith("every attempt shared Go's build cache (GOCACHE=/opt/replay/toolcache/go-build; test "
                           "results never reused: GOFLAGS=-count=1), one per toolchain")


def test_no_go_cache_for_a_plan_without_go() -> None:
    engine, (got,) = go_shared(plan(), "img:a")
    assert got == NONE and engine.runs == []


def test_python_shares_bytecode_only() -> None:
    p = with_runtime("python", "3.11.2")
    cache, got = shared_later(p)
    assert [m.target for m in got.mounts] == ["/opt/replay/toolcache/pycache"]  # type: ignore[attr-defined]
    assert dict(got.env) == {"PYTHONPYCACHEPREFIX": "/opt/replay/toolcache/pycache"}  # type: ignore[attr-defined]
    assert "pytest's lastfailed state is not shared" in cache.close()[0]


def test_no_cache_for_a_command_without_a_known_runtime() -> None:
    p = dataclasses.replace(plan(), runtimes=())
    cache, got = shared_later(p)
    assert got == NONE
    assert cache.close() == ["no test-tool cache was shared: replay knows none for this command's runtimes "
                             "(jest's for node, Go's build cache, Python's bytecode)"]
