"""Drift over a uv lockfile on the real engine (issue 12): the recorded installed versions
win over uv.lock's, are listed as drift, are undone by --no-pin, and bisect names them.

The project's uv.lock holds six 1.16.0; check.py fails from six 1.16 on. The passing
capsule recorded six 1.15.0 installed over the lock (upgraded, here downgraded, in the
venv after `uv sync`), the failing one the lock's own 1.16.0.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from runner.cli.main import main
from tests.envelope import result_of

from .helpers import ROOT, env_facts, git_repo, replay, repo_fact, twin_capsule, write_json
from .test_bisect import passed, record_failure
from .test_bisect_more import SIX_PY

pytestmark = pytest.mark.integration

UV_SIX = ROOT / "tests" / "cases" / "toolchains" / "uv-six"
DRIFT = [{"name": "six", "recorded": "1.15.0", "installed": "1.16.0"}]


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")


def uv_capsule(repo: Path, commit: str, six: str, exit_code: int, env: dict[str, Any]) -> dict[str, Any]:
    data = twin_capsule(["python3", "check.py"], "", exit_code, python="3.11.2", env=env,
                        resolved_python={"six": six}, repo=repo_fact(str(repo), commit))
    data["command"]["failure"] = None  # filled by record_failure for the failing one
    data["tools"] = {"uv": "0.9.9"}
    lock_sha = hashlib.sha256((UV_SIX / "uv.lock").read_bytes()).hexdigest()
    data["packageManagers"] = [{"name": "uv", "ecosystem": "python", "version": "0.9.9", "declared": None,
                                "lockfile": "uv.lock", "lockfileSha256": lock_sha}]
    return data


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(bad, good, repo): a uv project; good drifted to six 1.15.0, bad on the lock's 1.16.0."""
    dest = tmp_path_factory.mktemp("uvdrift")
    repo = dest / "repo"
    files = {name: (UV_SIX / name).read_text() for name in ("pyproject.toml", "uv.lock")}
    commit = git_repo(repo, {**files, "check.py": SIX_PY})
    bad = write_json(dest / "bad.json", uv_capsule(repo, commit, "1.16.0", 1, env_facts(CI=None, LANG="en_US.UTF-8")))
    record_failure(bad)
    good = write_json(dest / "good.json",
                      passed(uv_capsule(repo, commit, "1.15.0", 0, env_facts(CI="true", LANG="C.UTF-8"))))
    return bad, good, repo


def test_the_passing_uv_capsule_gets_its_drifted_version_and_lists_it(
        engine: object, capsys: pytest.CaptureFixture[str], pair: tuple[Path, Path, Path]) -> None:
    _, good, _ = pair
    rc, report = replay(capsys, good, "-n", "1")
    assert (rc, report["verdict"]) == (0, "reproduced"), report["attempts"]
    assert report["drift"] == DRIFT


def test_no_pin_keeps_the_lockfile_version_and_still_lists_the_drift(
        engine: object, capsys: pytest.CaptureFixture[str], pair: tuple[Path, Path, Path]) -> None:
    _, good, _ = pair
    rc, report = replay(capsys, good, "-n", "1", "--no-pin")
    assert (rc, report["verdict"]) == (1, "not-reproduced"), report["attempts"]
    assert "needs six < 1.16" in report["attempts"][0]["output_tail"]
    assert report["drift"] == DRIFT


def test_the_failing_uv_capsule_fails_as_recorded(
        engine: object, capsys: pytest.CaptureFixture[str], pair: tuple[Path, Path, Path]) -> None:
    bad, _, _ = pair
    rc, report = replay(capsys, bad, "-n", "1")
    assert (rc, report["verdict"]) == (0, "reproduced"), report["attempts"]
    assert report["drift"] == []


def test_bisect_names_the_drifted_package(
        engine: object, capsys: pytest.CaptureFixture[str], pair: tuple[Path, Path, Path]) -> None:
    bad, good, repo = pair
    rc = main(["bisect", str(bad), "--good", str(good), "--repo", str(repo), "-j", "2", "--json"])
    out = capsys.readouterr().out
    result = result_of(out)
    assert (rc, result["status"], result["minimal"]) == (0, "found", ["pin:python:six"]), result["trials"]
    assert ("pin:python:six", "build", "1.15.0", "1.16.0") in [
        (c["key"], c["stage"], c["good"], c["bad"]) for c in result["candidates"]]
    assert json.loads(bad.read_text())["command"]["failure"]["signature"] in {t["signature"] for t in result["trials"]}
