"""`replay gc`'s leftovers on a stand-in inventory: a kept container (--keep) goes once its replay has
ended, and --older-than spares the young ones."""
from __future__ import annotations

import time
from collections.abc import Mapping

from runner.engine import KEPT_LABEL, LABEL, OWNER_LABEL
from runner.engine.inventory import ImageRecord, Kind, Resource, CacheRecord
from runner.machine import gc


class Stand:
    def __init__(self, *resources: Resource) -> None:
        self.resources = list(resources)

    def labelled(self, label: str) -> list[Resource]:
        key, _, value = label.partition("=")
        return [r for r in self.resources if key in r.labels and (not value or r.labels[key] == value)]

    def containers(self) -> list[Resource]:
        return [r for r in self.resources if r.kind == "container"]

    def remove(self, kind: Kind, name: str) -> None:
        self.resources = [r for r in self.resources if r.name != name]

    def images(self, label: str | None = None, repo: str | None = None) -> list[ImageRecord]:
        return []

    def remove_image(self, ref: str) -> None:
        pass

    def build_cache(self) -> list[CacheRecord]:
        return []

    def prune_build_cache(self, record_id: str) -> None:
        pass


def _ctr(name: str, age_s: float, labels: Mapping[str, str]) -> Resource:
    return Resource("container", name, {LABEL: "r-1", OWNER_LABEL: "", **labels},
                    time.time() - age_s, state="exited", id=f"{name:0<12}" + "9" * 52)


def test_a_kept_container_is_a_leftover_and_says_so() -> None:
    stand = Stand(_ctr("kept", 60, {KEPT_LABEL: "1"}))
    (found,) = gc.leftovers(stand, "r-1")
    assert found.name == "kept" and found.why.startswith("kept by --keep (the id `replay shell --kept` took: "
                                                         "kept00000000); ")
    assert gc.remove(stand, [found]) == [] and stand.resources == []


def test_older_than_spares_the_young_kept_ones_only() -> None:
    stand = Stand(_ctr("young", 60, {KEPT_LABEL: "1"}),
                  _ctr("old", 3 * 86400, {KEPT_LABEL: "1"}),
                  _ctr("plain", 60, {OWNER_LABEL: ""}))
    found = gc.leftovers(stand, "r-1", kept_older_than_s=86400)
    assert sorted(f.name for f in found) == ["old", "plain"]
    assert "kept by --keep (the id `replay shell --kept` took: old000000000), older than 1d; " in next(f.why for f in found if f.name == "old")
