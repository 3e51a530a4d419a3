"""The one image service (replay/imageservice.py): the only maker of the build-once cache in
runner/, and the one cache replay, bisect's trials and the farm ask."""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

import runner
from runner.bisect.trial import Trials
from runner.build.images import image_key
from runner.build.planner import make_plan
from runner.capsules import read_capsule
from runner.config import Settings
from runner.farm.executor import LocalExecutor
from runner.replay import BuiltImage, Progress, Replayer, ReplayOptions, expected_of
from runner.replay.imageservice import ImageService

from tests.unit.fake_engine import FakeEngine
from tests.unit.farm.builders import py_twin

RUNNER = Path(runner.__file__).parent


def _uses(pattern: str) -> set[str]:
    return {p.relative_to(RUNNER).as_posix() for p in RUNNER.rglob("*.py") if re.search(pattern, p.read_text())}


def test_one_identity_one_build_once_cache_one_constructor() -> None:
    assert _uses(r"(?<!class )\bImageBank\(") == {"replay/imageservice.py"}  # the cache: made by the service only
    assert _uses(r"\bImageService\(") == {"replay/replayer.py"}  # the service: made by the runner only
    assert _uses(r"def image_key\(") == {"build/images.py"}  # one identity of an image
    assert _uses(r"\bGoCache\(") == {"replay/imageservice.py"}  # the tool-cache volumes: the service's
    # one identity of a built image, its tag: its context's digest, for a replay's images and the HTTP sidecar's
    assert _uses(r"def context_digest\(") == {"engine/builders.py"}
    assert _uses(r"(?<!def )\bcontext_digest\(") == {"replay/imageservice.py", "httpreplay/session.py"}


def test_a_second_plan_of_the_same_image_builds_nothing_whoever_asks(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    first = make_plan(read_capsule(py_twin(tmp_path / "a.json", "print(1)", "1\n", 0, tz="UTC")), Settings())
    second = make_plan(read_capsule(py_twin(tmp_path / "b.json", "print(2)", "2\n", 1, tz="Asia/Tokyo")), Settings())
    assert image_key(first) == image_key(second) and first != second
    made: list[str] = []

    def make(self: ImageService, plan: object) -> BuiltImage:  # stands in for the engine's build
        made.append(image_key(plan))  # type: ignore[arg-type]
        return BuiltImage(f"replay:{len(made)}", True, 3.0)

    monkeypatch.setattr(ImageService, "_make", make)
    replayer = Replayer(ReplayOptions(), Progress(quiet=True), Settings(), FakeEngine())
    assert replayer.image(first).built  # replay asks first: built
    trials = Trials(replayer, expected_of(read_capsule(tmp_path / "b.json")), Progress(quiet=True))
    image, by_this_call = trials.replayer.fetch(second)  # bisect's trials ask for the other plan
    farm = LocalExecutor(replayer, replayer.images).image(second)  # and the farm's night
    assert made == [image_key(first)] and not by_this_call and farm is not None and not farm.built
    assert image.ref == farm.ref == "replay:1" and (replayer.images.images, replayer.images.built) == (1, 1)
    assert dataclasses.replace(replayer.image(second), build_s=0.0) == BuiltImage("replay:1", False, 0.0)


def test_the_http_sidecar_image_comes_from_the_service_once(tmp_path: Path) -> None:
    from runner.build.sources.baseimage import base_ref

    plan = make_plan(read_capsule(py_twin(tmp_path / "a.json", "print(1)", "1\n", 0)), Settings())
    engine = FakeEngine(images=[base_ref(Settings(), plan.base)])
    replayer = Replayer(ReplayOptions(), Progress(quiet=True), Settings(), engine)
    world = replayer.world(plan)
    first = world.sidecar(plan.base, lambda s: None)
    assert first == replayer.images.sidecar(plan.base, lambda s: None)  # a second world's ask: nothing built
    assert first[0] == base_ref(Settings(), plan.base) and engine.builds == [first[1]]
    assert first[1].startswith(f"{Settings().image_repo}-httpreplay:")
