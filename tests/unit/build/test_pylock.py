"""pipenv's development packages (runner/build/pylock.py): `--dev` when the capsule records one as installed."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from runner.build.plan import BaseImage, Lock, Plan, Runtime
from runner.build.pylock import develop_only, pipenv_dev, pipenv_dev_note
from runner.build.render import render
from runner.capsules.model import FrozenMap
from runner.config import Settings

LOCK = {"_meta": {"hash": {"sha256": "x"}},
        "default": {"flask": {"version": "==2.2.5"}, "Werkzeug": {"version": "==2.3.7"}},
        "develop": {"pytest": {"version": "==8.3.3"}, "iniconfig": {"version": "==2.0.0"},
                    "werkzeug": {"version": "==2.3.7"}}}
PLAN = Plan(title="t", capsule_id="c", base=BaseImage("debian", "bookworm", "12", "2.36", "3.11.2"),
            argv=("pytest",), runtimes=(Runtime("python", "3.11.2", "3.11.2", "debian", True),),
            python_lock=Lock("pipenv", "Pipfile.lock", "a" * 64),
            python_pins=FrozenMap({"flask": "2.2.5", "pytest": "8.3.3", "werkzeug": "2.3.7"}))


def test_develop_only_names_what_default_lacks(tmp_path: Path) -> None:
    (tmp_path / "Pipfile.lock").write_text(json.dumps(LOCK))
    assert develop_only(tmp_path / "Pipfile.lock") == {"pytest", "iniconfig"}
    (tmp_path / "bad.lock").write_text("[1, 2")
    assert develop_only(tmp_path / "bad.lock") == frozenset() and develop_only(tmp_path / "none") == frozenset()


def test_dev_only_when_a_recorded_package_is_in_develop_alone(tmp_path: Path) -> None:
    (tmp_path / "Pipfile.lock").write_text(json.dumps(LOCK))
    assert pipenv_dev(PLAN, tmp_path) == ("pytest",)
    assert "records pytest as installed" in pipenv_dev_note(("pytest",))
    without = dataclasses.replace(PLAN, python_pins=FrozenMap({"flask": "2.2.5", "werkzeug": "2.3.7"}))
    assert pipenv_dev(without, tmp_path) == ()  # the recorded run had [packages] only
    uv = dataclasses.replace(PLAN, python_lock=Lock("uv", "Pipfile.lock", "a" * 64))
    assert pipenv_dev(uv, tmp_path) == ()
    assert "pipenv install --deploy --dev;" in render(PLAN, Settings(), pipenv_dev=True)
    assert "pipenv install --deploy;" in render(PLAN, Settings())
