"""gc's disk sweep (runner/machine/disk.py) and its leftovers (gc.py) against an inventory stand-in
(the engine seam, runner/engine/inventory.py): BuildKit cache mounts replay can name as its own go by
least recent use; ones it cannot name are left, with the engine's command; images go by age, never
one another tag or a container holds; only what a gone replay made is a leftover."""
from __future__ import annotations

import os
import socket
from pathlib import Path

from runner.config import Settings
from runner.engine.inventory import CacheRecord, ImageRecord, Inventory, Kind, Resource, VolumeRecord
from runner.machine import disk as gcdisk
from runner.machine import gc, ledger

NOW = 1_800_000_000.0
DAY = 86400.0


class FakeInventory:
    def __init__(self, cache: list[CacheRecord] = (), images: list[ImageRecord] = (),  # type: ignore[assignment]
                 resources: list[Resource] = (), containers: list[Resource] = (),  # type: ignore[assignment]
                 volumes: list[VolumeRecord] = (), taken: tuple[str, ...] = ()) -> None:  # type: ignore[assignment]
        self.cache, self._images, self._volumes, self.taken = list(cache), list(images), list(volumes), taken
        self.resources, self._containers = list(resources), list(containers)
        self.pruned: list[str] = []
        self.removed: list[tuple[str, str]] = []

    def labelled(self, label: str) -> list[Resource]:
        key, _, value = label.partition("=")
        return [r for r in self.resources if key in r.labels and (not value or r.labels[key] == value)]

    def containers(self) -> list[Resource]:
        return self._containers

    def remove(self, kind: Kind, name: str) -> None:
        self.removed.append((kind, name))

    def images(self, label: str | None = None, repo: str | None = None) -> list[ImageRecord]:
        return self._images

    def remove_image(self, ref: str) -> None:
        self.removed.append(("image", ref))

    def build_cache(self) -> list[CacheRecord]:
        return self.cache

    def prune_build_cache(self, record_id: str) -> None:
        self.pruned.append(record_id)

    def volumes(self, label: str) -> list[VolumeRecord]:
        key, _, value = label.partition("=")
        return [v for v in self._volumes if v.labels.get(key) == value]

    def remove_volume(self, name: str) -> bool:
        if name in self.taken:  # mounted between the sweep and its removal
            return False
        self.removed.append(("volume", name))
        return True


def mount(rid: str, desc: str, size: int, days_ago: float, in_use: bool = False) -> CacheRecord:
    return CacheRecord(rid, "exec.cachemount", desc, size, in_use, NOW - days_ago * DAY)


def test_the_stand_in_is_an_inventory() -> None:
    assert isinstance(FakeInventory(), Inventory)


def test_named_mounts_of_replays_namespace_go_oldest_first_others_stay(tmp_path: Path) -> None:
    engine = FakeInventory([
        mount("r1", 'cached mount /root/.npm from exec npm ci with id "replay-npm"', 300, 10),
        mount("r2", 'cached mount /root/.cache/pip from exec pip with id "replay-pip"', 300, 2),
        mount("r3", 'cached mount /root/.npm from exec npm ci with id "bench-npm"', 900, 30),
        mount("r4", 'cached mount /root/.cache/uv from exec uv with id "replay-uv"', 900, 40, in_use=True),
        CacheRecord("r5", "regular", "mount / from exec", 5000, False, NOW),
    ])
    s = Settings(cache_dir=tmp_path)
    sweep = gcdisk.caches(engine, s, 400, {"replay-npm", "replay-pip", "replay-uv"}, now=NOW)
    assert [(i.kind, i.name, i.ref) for i in sweep.removed] == [("cache-mount", "replay-npm", "r1")]
    assert sweep.freed == 300 and any("2 of other builds or in use, left alone" in n for n in sweep.notes)
    assert gcdisk.remove(engine, s, sweep.removed) == []
    assert engine.pruned == ["r1"]


def test_mounts_the_engine_does_not_name_are_left_with_its_own_command(tmp_path: Path) -> None:
    engine = FakeInventory([mount("r1", "cached mount /root/.npm from exec /bin/sh -c npm ci", 2048, 50)])
    sweep = gcdisk.caches(engine, Settings(cache_dir=tmp_path), 0, {"replay-npm"}, now=NOW)
    assert sweep.removed == ()
    note = next(n for n in sweep.notes if "does not show" in n)
    assert "1 (2K)" in note and gcdisk.ENGINE_PRUNE in note and "cannot tell its own" in note


def test_old_images_go_unless_a_container_or_another_tag_holds_them(tmp_path: Path) -> None:
    s = Settings(cache_dir=tmp_path)
    repo = s.image_repo
    engine = FakeInventory(images=[
        ImageRecord("sha256:old", (f"{repo}:a",), 100, NOW - 30 * DAY),
        ImageRecord("sha256:held", (f"{repo}:b",), 100, NOW - 30 * DAY),
        ImageRecord("sha256:shared", (f"{repo}:c", "someone/else:1"), 100, NOW - 30 * DAY),
        ImageRecord("sha256:new", (f"{repo}:d",), 100, NOW - DAY),
        ImageRecord("sha256:foreign", ("other/repo:1",), 100, NOW - 30 * DAY),
    ], containers=[Resource("container", "busy", {}, NOW, "sha256:held", "exited")])
    sweep = gcdisk.images(engine, s, 14 * DAY, now=NOW)
    assert [i.ref for i in sweep.removed] == ["sha256:old"]
    why = {i.ref: i.why for i in sweep.kept}
    assert "used by container busy (exited)" in why["sha256:held"]
    assert "not replay's" in why["sha256:shared"] and "within" in why["sha256:new"]
    assert "sha256:foreign" not in why
    assert gcdisk.remove(engine, s, sweep.removed) == [] and engine.removed == [("image", f"{repo}:a")]


def test_leftovers_are_what_a_gone_replay_made(tmp_path: Path) -> None:
    here = socket.gethostname()
    gone = f"{here}:{2**22 + 12345}"  # no such pid
    alive = f"{here}:{os.getpid()}"
    engine = FakeInventory(resources=[
        Resource("container", "c-gone", {"replay": "r1", "replay.owner": gone}),
        Resource("network", "n-alive", {"replay": "r2", "replay.owner": alive}),
        Resource("container", "c-old", {"replay": "r3"}),
        Resource("container", "c-elsewhere", {"replay": "r4", "replay.owner": "another-host:1"}),
    ])
    found = gc.leftovers(engine, "r1") + gc.leftovers(engine, "r2") + gc.leftovers(engine, "r3") \
        + gc.leftovers(engine, "r4")
    assert [(f.kind, f.name) for f in found] == [("container", "c-gone"), ("container", "c-old")]
    assert gc.remove(engine, found) == [] and engine.removed == [("container", "c-gone"), ("container", "c-old")]


def volume(name: str, size: int, days_ago: float, mounted: int = 0, value: str = "toolcache") -> VolumeRecord:
    return VolumeRecord(name, size, mounted, NOW - days_ago * DAY, {"replay": value})


def test_tool_cache_volumes_go_by_their_last_use_and_never_while_mounted(tmp_path: Path) -> None:
    engine = FakeInventory(volumes=[volume("replay-gocache-go1.21.0", 500, 40), volume("replay-gocache-go1.22.10", 500, 40),
                                    volume("replay-gocache-go1.23.9", 500, 50, mounted=1),
                                    volume("someone-elses", 900, 90, value="image")])
    s = Settings(cache_dir=tmp_path)
    ledger.record_volume(tmp_path, "replay-gocache-go1.22.10", NOW - 1 * DAY)  # handed to an attempt yesterday
    sweep = gcdisk.caches(engine, s, 600, set(), now=NOW)
    assert [(i.kind, i.name) for i in sweep.removed] == [("tool-cache", "replay-gocache-go1.21.0")]  # by the ledger
    assert [(i.name, i.why) for i in sweep.kept] == [("replay-gocache-go1.23.9", "mounted by 1 container(s)")]
    assert gcdisk.remove(engine, s, sweep.removed) == [] and engine.removed == [("volume", "replay-gocache-go1.21.0")]
    raced = FakeInventory(volumes=[volume("replay-gocache-go1.21.0", 500, 40)], taken=("replay-gocache-go1.21.0",))
    assert gcdisk.remove(raced, s, gcdisk.caches(raced, s, 0, set(), now=NOW).removed) == []  # taken since: it stays
    assert raced.removed == []
