"""Capsules that plan the same image share it: the key ignores run-time facts only."""
from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

from runner.capsules import read_capsule
from runner.capsules.model import FrozenMap
from runner.config import Settings
from runner.build.images import ImageBank, image_key
from runner.build.planner import make_plan

from tests.unit.farm.builders import py_twin, write_instance

CODE = "import os; print(os.environ.get('TZ'))"


def _plan(path: Path):  # type: ignore[no-untyped-def]
    return make_plan(read_capsule(path), Settings())


def test_plans_differing_in_env_tz_argv_and_format_share_an_image(tmp_path: Path) -> None:
    ny = _plan(py_twin(tmp_path / "ny.json", CODE, "America/New_York\n", 0, tz="America/New_York", CI="true"))
    utc = _plan(py_twin(tmp_path / "utc.json", "print(2)", "2\n", 0, tz="UTC"))
    inst = _plan(write_instance(tmp_path / "i.json", ["python3", "-c", "print(3)"], "3\n"))
    assert ny.env != utc.env and ny.argv != utc.argv and ny.capsule_id != utc.capsule_id
    assert image_key(ny) == image_key(utc) == image_key(inst)


def test_a_build_time_difference_gets_its_own_image(tmp_path: Path) -> None:
    plain = _plan(py_twin(tmp_path / "a.json", CODE, "x\n", 0))
    pinned = dataclasses.replace(plain, python_pins=FrozenMap({"six": "1.16.0"}))
    assert image_key(plain) != image_key(pinned)
    assert image_key(plain) != image_key(dataclasses.replace(plain, locales=("de_DE.UTF-8",)))


def test_each_image_is_built_once_however_many_ask_and_a_failure_is_remembered(tmp_path: Path) -> None:
    plan = _plan(py_twin(tmp_path / "a.json", CODE, "x\n", 0))
    calls: list[object] = []
    gate = threading.Event()

    def build(p: object) -> object:
        calls.append(p)
        gate.wait(5)
        raise RuntimeError("the build failed")

    bank = ImageBank(build)  # type: ignore[arg-type]
    errors: list[BaseException] = []

    def ask() -> None:
        try:
            bank.get(plan)
        except RuntimeError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    gate.set()
    for t in threads:
        t.join(10)
    assert len(calls) == 1 and len(errors) == 4 and bank.images == 1 and bank.built == 0
