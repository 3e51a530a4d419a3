"""Shared fixtures. Integration tests need the real Docker engine: in CI
(REPLAY_REQUIRE_ENGINE=1, set by scripts/test) a missing engine is a failure,
never a skip."""
from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.services import missing, static_server

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "examples"


@pytest.fixture(scope="session")
def engine():
    from runner.engine import DockerEngine
    from runner.errors import EngineUnavailable

    try:
        return DockerEngine()
    except EngineUnavailable as exc:
        missing(f"integration test needs the Docker engine: {exc}")


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    missing("needs Chromium (Debian: apt-get install -y chromium)")


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """A local HTTP server for capsule URLs: (base URL, the folder it serves); the cache in tmp_path."""
    root = tmp_path / "www"
    root.mkdir()
    monkeypatch.setenv("REPLAY_CACHE", str(tmp_path / "cache"))
    with static_server(root) as base:
        yield base, root
