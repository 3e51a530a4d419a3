"""Drift over a uv lockfile on the real engine (issue 12): the recorded installed versions
win over uv.lock's, are listed as drift, are undone by --no-pin, and bisect names them.

The project's uv.lock holds six 1.16.0; check.py fails from six 1.16 on. The passing
capsule recorded six 1.15.0 installed over the lock (upgraded, here downgraded, in the
venv after `uv sync`), the failing one the lock's own 1.16.0. Both recorded the project itself
(demo 0.1.0, a virtual project uv never installs): the build names it as not applied (issue 21).
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from runner.cli.main import main
from runner.engine.builders import find_buildkit_cli
from tests.envelope import result_of

from tests.integration.helpers import ROOT, env_facts, git_repo, replay, repo_fact, twin_capsule, write_json
from tests.integration.bisecting import SIX_PY, passed, record_failure

pytestmark = pytest.mark.integration

UV_SIX = ROOT / "tests" / "cases" / "toolchains" / "uv-six"
DRIFT = [{"name": "six", "recorded": "1.15.0", "installed": "1.16.0"}]


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")


def uv_capsule(repo: Path, commit: str, six: str, exit_code: int, env: dict[str, Any]) -> dict[str, Any]:
    data = twin_capsule(["python3", "check.py"], "", exit_code, python="3.11.2", env=env,
                        resolved_python={"six": six, "demo": "0.1.0"}, repo=repo_fact(str(repo), commit))
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
    rows = {f["fact"]: (f["recorded"], f["replayed"], f["status"], f["why"]) for f in report["fidelity"]
            if f["fact"].startswith("package python ")}
    assert rows == {
        "package python six": ("1.15.0", "1.15.0", "exact",
                               "kept when the uv lockfile installs it, else pinned with pip over it (checked in the build)"),
        "package python demo": ("0.1.0", "the lockfile's", "not applied",
                                "found in the build: the lockfile does not install it")}


def test_downloads_land_in_the_machine_cache_and_never_in_a_layer(
        engine: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """BuildKit: uv's and pip's downloads go to cache mounts shared by later builds (here a
    namespace of this test's own, so it starts empty); the image holds none of them."""
    cli = find_buildkit_cli()
    assert cli is not None, "this machine builds with BuildKit (MACHINE-NOTES)"
    space = f"test-{uuid.uuid4().hex[:10]}"
    monkeypatch.setenv("REPLAY_BUILD_CACHE", space)
    # a project of its own (pyproject.toml differs): BuildKit keys no layer on a cache mount's id
    files = {name: (UV_SIX / name).read_text() for name in ("pyproject.toml", "uv.lock")}
    files["pyproject.toml"] += f"# {space}\n"
    repo = tmp_path / "repo"
    commit = git_repo(repo, {**files, "check.py": SIX_PY})
    good = write_json(tmp_path / "good.json",
                      passed(uv_capsule(repo, commit, "1.15.0", 0, env_facts(CI="true", LANG="C.UTF-8"))))
    rc, report = replay(capsys, good, "-n", "1")
    assert (rc, report["image"]["builder"]) == (0, "buildkit")
    listing = engine.client.containers.run(report["image"]["ref"], ["sh", "-c", "find /root/.cache /root/.npm -type f 2>/dev/null; true"],
                                           remove=True, network_mode="none")
    assert listing.decode().strip() == ""
    # what a later build finds in the caches: six from the lockfile (uv's), the pinned one (pip's)
    (tmp_path / "Dockerfile").write_text(
        f"FROM {report['image']['ref']}\n"
        f"RUN --mount=type=cache,id={space}-uv,target=/uv --mount=type=cache,id={space}-pip,target=/pip \\\n"
        "    sh -c 'find /uv -iname \"*six*\"; echo pip-files $(find /pip -type f | wc -l)' > /found\n")
    tag = f"replay-test/cache-probe:{space}"
    try:
        subprocess.run([*cli, "-t", tag, str(tmp_path)], check=True, capture_output=True,
                       env={**os.environ, "DOCKER_BUILDKIT": "1"}, timeout=300)
        found = engine.client.containers.run(tag, ["cat", "/found"], remove=True, network_mode="none").decode()
    finally:
        engine.client.images.remove(tag, force=True)
    assert "six-1.16.0" in found, found  # pip's cache names its files by hash: it holds something
    assert int(found.split("pip-files ")[1]) > 0, found


def test_no_pin_keeps_the_lockfile_version_and_still_lists_the_drift(
        engine: object, capsys: pytest.CaptureFixture[str], pair: tuple[Path, Path, Path]) -> None:
    _, good, _ = pair
    rc, report = replay(capsys, good, "-n", "1", "--no-pin")
    assert (rc, report["verdict"]) == (1, "not-reproduced"), report["attempts"]
    assert "needs six < 1.16" in report["attempts"][0]["output_tail"]
    assert report["drift"] == DRIFT
    row = next(f for f in report["fidelity"] if f["fact"] == "package python demo")
    assert (row["status"], row["why"]) == ("not applied", "found in the build: the lockfile does not install it")


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
