"""The test-tool cache bisect trials share follows the tool and holds build artefacts only."""
from __future__ import annotations

import dataclasses

from runner.bisect.toolcache import NONE, ToolCache
from runner.build.plan import EnvSetting, Plan, Runtime
from runner.capsules.model import FrozenMap

from tests.unit.bisect.fakes import plan


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


def test_go_shares_its_build_cache_but_never_its_test_results() -> None:
    p = with_runtime("go", "1.22.10", GOFLAGS="-mod=vendor")
    cache, got = shared_later(p)
    assert [m.target for m in got.mounts] == ["/opt/replay/toolcache/go-build"]  # type: ignore[attr-defined]
    env = got.apply(p).env  # type: ignore[attr-defined]
    assert env["GOCACHE"] == EnvSetting("set", "/opt/replay/toolcache/go-build")
    assert env["GOFLAGS"] == EnvSetting("set", "-mod=vendor -count=1")  # the recorded flags kept, results not reused
    note = cache.close()[0]
    assert "Go's build cache (GOCACHE=/opt/replay/toolcache/go-build; test results never reused: GOFLAGS=-count=1)" in note
    assert "jest" not in note


def test_go_uses_the_recorded_gocache_directory() -> None:
    p = with_runtime("go", "1.22.10", GOCACHE="/root/.cache/go-build")
    _, got = shared_later(p)
    assert [m.target for m in got.mounts] == ["/root/.cache/go-build"]  # type: ignore[attr-defined]
    assert got.apply(p).env["GOFLAGS"] == EnvSetting("set", "-count=1")  # type: ignore[attr-defined]


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
