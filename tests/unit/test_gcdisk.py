"""gc's disk sweep (runner/machine/disk.py) against an engine stand-in: BuildKit cache mounts replay can
name as its own go by least recent use; ones it cannot name are left, with the engine's command."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from runner.machine import disk as gcdisk
from runner.config import Settings

NOW = 1_800_000_000.0


class FakeApi:
    def __init__(self) -> None:
        self.pruned: list[Any] = []

    def prune_builds(self, **kw: Any) -> None:
        self.pruned.append(kw)


class FakeClient:
    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.records, self.api = records, FakeApi()

    def df(self) -> dict[str, Any]:
        return {"BuildCache": self.records}


def mount(rid: str, desc: str, size: int, days_ago: float, in_use: bool = False) -> dict[str, Any]:
    import datetime

    when = datetime.datetime.fromtimestamp(NOW - days_ago * 86400, datetime.UTC).isoformat().replace("+00:00", "Z")
    return {"ID": rid, "Type": "exec.cachemount", "Description": desc, "Size": size, "InUse": in_use,
            "LastUsedAt": when}


def test_named_mounts_of_replays_namespace_go_oldest_first_others_stay(tmp_path: Path) -> None:
    client = FakeClient([
        mount("r1", 'cached mount /root/.npm from exec npm ci with id "replay-npm"', 300, 10),
        mount("r2", 'cached mount /root/.cache/pip from exec pip with id "replay-pip"', 300, 2),
        mount("r3", 'cached mount /root/.npm from exec npm ci with id "bench-npm"', 900, 30),
        mount("r4", 'cached mount /root/.cache/uv from exec uv with id "replay-uv"', 900, 40, in_use=True),
        {"ID": "r5", "Type": "regular", "Description": "mount / from exec", "Size": 5000},
    ])
    s = Settings(cache_dir=tmp_path)
    sweep = gcdisk.caches(client, s, 400, {"replay-npm", "replay-pip", "replay-uv"}, now=NOW)
    assert [(i.kind, i.name, i.ref) for i in sweep.removed] == [("cache-mount", "replay-npm", "r1")]
    assert sweep.freed == 300 and any("2 of other builds or in use, left alone" in n for n in sweep.notes)
    assert gcdisk.remove(client, s, sweep.removed) == []
    assert client.api.pruned == [{"filters": {"id": ["r1"]}, "all": True}]


def test_mounts_the_engine_does_not_name_are_left_with_its_own_command(tmp_path: Path) -> None:
    client = FakeClient([mount("r1", "cached mount /root/.npm from exec /bin/sh -c npm ci", 2048, 50)])
    sweep = gcdisk.caches(client, Settings(cache_dir=tmp_path), 0, {"replay-npm"}, now=NOW)
    assert sweep.removed == ()
    note = next(n for n in sweep.notes if "does not show" in n)
    assert "1 (2K)" in note and gcdisk.ENGINE_PRUNE in note and "cannot tell its own" in note
