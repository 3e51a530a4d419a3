"""Settings: the cache honours XDG_CACHE_HOME (REPLAY_CACHE still wins), and each setting says where it came from."""
from __future__ import annotations

from pathlib import Path

import pytest

from runner.config import origins, settings


def test_the_cache_honours_xdg_cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REPLAY_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert settings().cache_dir == tmp_path / "xdg" / "replay"
    assert settings().downloads == tmp_path / "xdg" / "replay" / "downloads"
    assert {o.variable: o.source for o in origins()}["REPLAY_CACHE"] == "env XDG_CACHE_HOME"


def test_replay_cache_wins_over_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("REPLAY_CACHE", str(tmp_path / "mine"))
    assert settings().cache_dir == tmp_path / "mine"
    assert {o.variable: o.source for o in origins()}["REPLAY_CACHE"] == "env REPLAY_CACHE"


def test_without_either_the_cache_is_under_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("REPLAY_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert settings().cache_dir == tmp_path / ".cache" / "replay"
    assert {o.variable: o.source for o in origins()}["REPLAY_CACHE"] == "default"


def test_every_setting_names_its_origin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPLAY_NPM_REGISTRY", "https://npm.example.com/")
    monkeypatch.delenv("REPLAY_PYPI_INDEX", raising=False)
    found = {o.variable: o for o in origins()}
    assert found["REPLAY_NPM_REGISTRY"].value == "https://npm.example.com"
    assert found["REPLAY_NPM_REGISTRY"].source == "env REPLAY_NPM_REGISTRY"
    assert found["REPLAY_PYPI_INDEX"].source == "default"
    assert {"REPLAY_BUILDER", "REPLAY_CA_CERTS", "DOCKER_HOST", "REPLAY_DEBIAN_MIRROR"} <= set(found)


def test_the_build_timeout_names_its_origin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REPLAY_BUILD_TIMEOUT", raising=False)
    assert {o.variable: (o.value, o.source) for o in origins()}["REPLAY_BUILD_TIMEOUT"] == ("3600", "default")
    monkeypatch.setenv("REPLAY_BUILD_TIMEOUT", "900")
    assert {o.variable: (o.value, o.source) for o in origins()}["REPLAY_BUILD_TIMEOUT"] == \
        ("900", "env REPLAY_BUILD_TIMEOUT")
