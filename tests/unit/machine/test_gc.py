"""`replay gc`'s leftovers on a stand-in inventory: a kept container (--keep) goes once its replay has
ended, and --older-than spares the young ones."""
from __future__ import annotations

import dataclasses
import os
import socket
import time
from collections.abc import Mapping

from runner.engine import KEPT_LABEL, LABEL, OWNER_LABEL, USER_LABEL, current_user
from runner.errors import EngineUnavailable
from runner.engine.inventory import ImageRecord, Kind, Resource, CacheRecord
from runner.machine import gc


class Stand:
    def __init__(self, *resources: Resource, images: tuple[ImageRecord, ...] = ()) -> None:
        self.resources = list(resources)
        self.image_records = list(images)

    def labelled(self, label: str) -> list[Resource]:
        key, _, value = label.partition("=")
        return [r for r in self.resources if key in r.labels and (not value or r.labels[key] == value)]

    def containers(self) -> list[Resource]:
        return [r for r in self.resources if r.kind == "container"]

    def remove(self, kind: Kind, name: str) -> None:
        self.resources = [r for r in self.resources if r.name != name]

    def images(self, label: str | None = None, repo: str | None = None) -> list[ImageRecord]:
        key = (label or "").partition("=")[0]
        return [i for i in self.image_records if not key or key in i.labels]

    def remove_image(self, ref: str) -> None:
        self.image_records = [i for i in self.image_records if i.id != ref]

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


def test_another_users_kept_container_stays_unless_all_users() -> None:
    stand = Stand(_ctr("mine", 60, {KEPT_LABEL: "1", USER_LABEL: current_user()}),
                  _ctr("theirs", 60, {KEPT_LABEL: "1", USER_LABEL: "someone-else"}))
    assert [f.name for f in gc.leftovers(stand, "r-1")] == ["mine"]
    assert sorted(f.name for f in gc.leftovers(stand, "r-1", all_users=True)) == ["mine", "theirs"]


def test_kept_state_images_go_once_no_staying_container_uses_them() -> None:
    """A sealed kept container's image goes with it; an interrupted shell's image goes; one a
    staying container uses, or whose owner lives, stays."""
    alive = f"{socket.gethostname()}:{os.getpid()}"
    kept = dataclasses.replace(_ctr("kept", 60, {KEPT_LABEL: "1"}), image_id="sha256:sealed")
    young = dataclasses.replace(_ctr("young", 60, {KEPT_LABEL: "1"}), image_id="sha256:young")
    stand = Stand(kept, young, images=(
        ImageRecord("sha256:sealed", ("replay/img:kept-r-1",), 1, 0, {LABEL: "r-1", KEPT_LABEL: "image", OWNER_LABEL: ""}),
        ImageRecord("sha256:young", (), 1, 0, {LABEL: "r-1", KEPT_LABEL: "image", OWNER_LABEL: ""}),
        ImageRecord("sha256:shell", ("replay/img:shell-r-2",), 1, 0, {LABEL: "r-2", KEPT_LABEL: "shell", OWNER_LABEL: ""}),
        ImageRecord("sha256:live", (), 1, 0, {LABEL: "r-3", KEPT_LABEL: "shell", OWNER_LABEL: alive})))
    found = gc.leftovers(Stand(kept, images=tuple(stand.image_records)))
    assert sorted(f.name for f in found if f.kind == "image") == ["sha256:sealed", "sha256:shell", "sha256:young"]
    kept_only = gc.leftovers(stand, "r-1", kept_older_than_s=0.0)
    assert sorted(f.name for f in kept_only) == ["kept", "sha256:sealed", "sha256:young", "young"]
    spared = gc.leftovers(stand, "r-1", kept_older_than_s=3600.0)
    assert [f.name for f in spared] == []  # both kept containers are young: they and their images stay
    assert "interrupted `replay shell --kept`" in next(f.why for f in found if f.name == "sha256:shell")


def test_what_another_cleanup_removed_first_is_no_problem() -> None:
    class Racing(Stand):
        def remove(self, kind: Kind, name: str) -> None:
            raise EngineUnavailable(f"the engine failed: 404 Client Error: No such {kind}: {name}")
    stand = Racing(_ctr("plain", 60, {}))
    assert gc.remove(stand, gc.leftovers(stand, "r-1")) == []
