"""Runtimes, package managers and Python lockfiles on the real engine (issue 3).

Each test replays a capsule whose command only works when the recorded toolchain
is really installed: six comes from the lockfile alone, Go and Bun print their own
version. First run downloads uv (PyPI), Go 1.22.10 (70 MB wheel) and Bun (40 MB).
"""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.integration.helpers import ROOT, git_repo, nova_run, replay, repo_fact, twin_capsule, write_json

pytestmark = pytest.mark.integration

CASES = ROOT / "tests" / "cases" / "toolchains"
UV_SIX = CASES / "uv-six"


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rows(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["fact"]: f for f in report["fidelity"]}


# -- Python: uv.lock -----------------------------------------------------------

def test_a_uv_lock_installs_the_dependencies_with_the_recorded_uv(engine: object, capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    files = {name: (UV_SIX / name).read_text() for name in ("pyproject.toml", "uv.lock", "check.py")}
    repo = tmp_path / "repo"
    commit = git_repo(repo, files)
    data = twin_capsule(["python3", "check.py"], "", 0, python="3.11.2", repo=repo_fact(str(repo), commit))
    data["tools"] = {"uv": "0.9.9"}
    data["packageManagers"] = [{"name": "uv", "ecosystem": "python", "version": "0.9.9", "declared": None,
                                "lockfile": "uv.lock", "lockfileSha256": sha256(UV_SIX / "uv.lock")}]
    rc, report = replay(capsys, write_json(tmp_path / "capsule.json", data), "-n", "1")
    assert (rc, report["verdict"]) == (0, "reproduced"), report["attempts"]
    assert report["attempts"][0]["stdout"] == "six 1.16.0\n"
    found = rows(report)
    assert (found["package manager uv"]["replayed"], found["package manager uv"]["status"]) == ("0.9.9", "exact")
    assert found["lockfile"]["status"] == "exact" and "uv sync --frozen" in found["lockfile"]["why"]


# -- Python: requirements.txt shipped in a NovaFabric capsule -------------------

def novafabric_with_requirements(dest: Path, requirements: str) -> Path:
    """The minimal-run example, its env.lock pointing at a requirements.txt inside the capsule."""
    lock = hashlib.sha256(requirements.encode()).hexdigest()
    nova_run(dest, ["python3", "check.py"], "six 1.16.0\n", {
        "package_manager": "pip", "lock_file_kind": "requirements.txt", "lock_file_ref": "requirements.txt",
        "installed_packages": [], "lock_file_hash": f"sha256:{lock}"})
    (dest / "requirements.txt").write_text(requirements)
    return dest


def test_a_novafabric_requirements_lock_is_installed(engine: object, capsys: pytest.CaptureFixture[str],
                                                    tmp_path: Path) -> None:
    capsule = novafabric_with_requirements(tmp_path / "capsule", "six==1.16.0\n")
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy2(UV_SIX / "check.py", src / "check.py")
    rc, report = replay(capsys, capsule, "-n", "1", "--source", src)
    assert report["attempts"][0]["stdout"] == "six 1.16.0\n", report["attempts"]
    assert (rc, report["verdict"]) == (0, "reproduced")
    lock = rows(report)["lockfile"]
    assert (lock["replayed"], lock["status"]) == ("requirements.txt", "exact")


# -- Go and Bun at the recorded version ----------------------------------------

def version_capsule(tmp_path: Path, argv: list[str], runtime: str, version: str) -> Path:
    data = twin_capsule(argv, "", 0)
    data["runtimes"] = {runtime: version}
    return write_json(tmp_path / "capsule.json", data)


def test_go_runs_at_the_recorded_version(engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy2(CASES / "go-version" / "main.go", src / "main.go")
    capsule = version_capsule(tmp_path, ["go", "run", "main.go"], "go", "1.22.10")
    rc, report = replay(capsys, capsule, "-n", "1", "--source", src)
    assert report["attempts"][0]["stdout"] == "go1.22.10\n", report["attempts"]
    assert (rc, report["verdict"]) == (0, "reproduced")
    assert rows(report)["runtime go"]["status"] == "exact"


def test_bun_runs_at_the_recorded_version(engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy2(CASES / "bun-version" / "hello.ts", src / "hello.ts")
    capsule = version_capsule(tmp_path, ["bun", "run", "hello.ts"], "bun", "1.3.9")
    rc, report = replay(capsys, capsule, "-n", "1", "--source", src)
    assert report["attempts"][0]["stdout"] == "bun 1.3.9\n", report["attempts"]
    assert (rc, report["verdict"]) == (0, "reproduced")
    assert rows(report)["runtime bun"]["status"] == "exact"
