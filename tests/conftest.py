"""Shared fixtures. Integration tests need the real Docker engine: in CI
(REPLAY_REQUIRE_ENGINE=1, set by scripts/test) a missing engine is a failure,
never a skip."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "examples"


@pytest.fixture(scope="session")
def engine():
    from runner.engine import DockerEngine
    from runner.errors import EngineUnavailable

    try:
        return DockerEngine()
    except EngineUnavailable as exc:
        if os.environ.get("REPLAY_REQUIRE_ENGINE") == "1" or os.environ.get("CI"):
            pytest.fail(f"integration test needs the Docker engine: {exc}")
        pytest.skip(f"no Docker engine (set REPLAY_REQUIRE_ENGINE=1 to fail instead): {exc}")


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    why = "needs Chromium (Debian: apt-get install -y chromium)"
    if os.environ.get("REPLAY_REQUIRE_ENGINE") == "1" or os.environ.get("CI"):
        pytest.fail(why)
    pytest.skip(f"{why}; set REPLAY_REQUIRE_ENGINE=1 to fail instead")
