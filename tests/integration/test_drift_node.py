"""Node drift pinned with the project's own package manager, on the real engine (issue 21).

One project (tests/cases/drift): ms 2.1.3 at the top level and debug 2.6.9 with its own ms 2.0.0
nested under it, locked by npm, by pnpm 9 and by yarn 1. check.js fails on the lockfile's top-level ms
2.1.3 and checks that debug keeps its nested 2.0.0. The passing capsule recorded ms at 2.0.0 and
2.1.2 (the top level drifted to 2.1.2, the nested copy as the lockfile places it) and another CI
value (a decoy); the failing one the lockfile's 2.0.0 and 2.1.3. Both recorded left-pad, which
no lockfile of the project installs: the report names it as not applied.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from tests.integration.helpers import ROOT, env_facts, git_repo, replay, repo_fact, twin_capsule, write_json
from tests.integration.bisecting import bisect_at as bisect, passed, record_failure

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # minutes: `pytest -m "not slow"` for a quick run

CASES = ROOT / "tests" / "cases" / "drift"
LOCKS = {"npm": ("package-lock.json", "10.9.9"), "pnpm": ("pnpm-lock.yaml", "9.15.9"), "yarn": ("yarn.lock", "1.22.22")}
NODE, NPM = "22.23.3", "10.9.9"  # as the other node tests: their base layers are shared
DRIFT = [{"name": "ms", "recorded": "2.1.2", "installed": "2.1.3"}]


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")


def node_capsule(manager: str, repo: Path, commit: str, ms_top: str, exit_code: int, ci: str | None) -> dict[str, Any]:
    lockfile, version = LOCKS[manager]
    data = twin_capsule(["node", "check.js"], "", exit_code, repo=repo_fact(str(repo), commit),
                        env=env_facts(CI=ci))
    data["command"]["failure"] = None  # recorded by record_failure for the failing one
    data["runtimes"], data["tools"] = {"node": NODE}, {"npm": NPM, manager: version}
    data["packageManagers"] = [{"name": manager, "ecosystem": "node", "version": version, "declared": None,
                                "lockfile": lockfile,
                                "lockfileSha256": hashlib.sha256((repo / lockfile).read_bytes()).hexdigest()}]
    # left-pad: recorded, but installed by no lockfile of the project (found so in the build)
    data["resolved"]["node"] = {"debug": ["2.6.9"], "left-pad": ["1.3.0"], "ms": ["2.0.0", ms_top]}
    return data


@pytest.fixture(scope="module", params=sorted(LOCKS))
def pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, Path, Path]:
    """(manager, bad, good, repo)."""
    manager = request.param
    dest = tmp_path_factory.mktemp(f"drift-{manager}")
    repo = dest / "repo"
    commit = git_repo(repo, {p.name: p.read_text() for p in (CASES / manager).iterdir()})
    bad = write_json(dest / "bad.json", node_capsule(manager, repo, commit, "2.1.3", 1, None))
    record_failure(bad)
    good = write_json(dest / "good.json", passed(node_capsule(manager, repo, commit, "2.1.2", 0, "true")))
    return manager, bad, good, repo


def test_the_drifted_top_level_version_is_pinned_with_the_projects_manager(
        engine: object, capsys: pytest.CaptureFixture[str], pair: tuple[str, Path, Path, Path]) -> None:
    manager, bad, good, _ = pair
    rc, report = replay(capsys, good, "-n", "1")
    assert (rc, report["verdict"]) == (0, "reproduced"), report["attempts"]
    assert report["attempts"][0]["stdout"] == "ms 2.1.2, debug's ms 2.0.0\n"  # the nested copy kept
    assert report["drift"] == DRIFT
    row = next(f for f in report["fidelity"] if f["fact"] == "package node ms")
    assert (row["recorded"], row["status"]) == ("2.0.0, 2.1.2", "exact") and manager in row["why"]
    row = next(f for f in report["fidelity"] if f["fact"] == "package node left-pad")
    assert (row["recorded"], row["status"], row["why"]) == (
        "1.3.0", "not applied", "found in the build: the lockfile does not install it")
    rc, report = replay(capsys, bad, "-n", "1")
    assert (rc, report["verdict"], report["drift"]) == (0, "reproduced", [])


def test_bisect_names_the_pin_alone(engine: object, capsys: pytest.CaptureFixture[str],
                                    pair: tuple[str, Path, Path, Path]) -> None:
    _, bad, good, repo = pair
    rc, result = bisect(capsys, bad, good, repo, "-j", "2")
    assert (rc, result["status"], result["minimal"]) == (0, "found", ["pin:node:ms"]), result["trials"]
    candidates = {c["key"]: (c["good"], c["bad"]) for c in result["candidates"]}
    assert candidates == {"env:CI": ("true", "(absent)"), "pin:node:ms": ("2.0.0, 2.1.2", "2.0.0, 2.1.3")}
