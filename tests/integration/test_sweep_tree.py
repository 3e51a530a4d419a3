"""`replay bisect --sweep pin:node:ms` over a real npm tree (issue 38): ms sits at the top level
and, at 2.0.0, nested under debug, the same at both ends. The nested copy is held in every trial,
the top-level one is swept through the releases the npm registry offers, and the sweep names the
first failing one (before, a nested second copy made `--sweep` exit 2).

The project is tests/cases/drift/npm's (package.json and package-lock.json, installed from the
npm registry in the build) with a check that fails from ms 2.1.2 on and needs debug's nested 2.0.0.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from tests.integration.bisecting import bisect_at, passed, record_failure
from tests.integration.helpers import ROOT, env_facts, git_repo, repo_fact, twin_capsule, write_json

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # an image per swept release

CASE = ROOT / "tests" / "cases" / "drift" / "npm"
NODE, NPM = "22.23.3", "10.9.9"  # as the other node tests: their base layers are shared
CHECK = """\
'use strict';
const path = require('path');
const top = require('ms/package.json').version;
const nested = require(require.resolve('ms/package.json', { paths: [path.dirname(require.resolve('debug'))] })).version;
console.log(`ms ${top}, debug's ms ${nested}`);
if (nested !== '2.0.0') {
  console.error(`error: debug got ms ${nested}, not the nested 2.0.0`);
  process.exit(2);
}
const [major, minor, patch] = top.split('.').map(Number);
if (major > 2 || minor > 1 || (minor === 1 && patch >= 2)) {
  console.error('error: ms from 2.1.2 on is not supported here');
  process.exit(1);
}
"""


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")


def capsule(repo: Path, commit: str, ms_top: str, exit_code: int) -> dict[str, Any]:
    data = twin_capsule(["node", "check.js"], "", exit_code, repo=repo_fact(str(repo), commit), env=env_facts(CI=None))
    data["command"]["failure"] = None  # recorded by record_failure for the failing one
    data["runtimes"], data["tools"] = {"node": NODE}, {"npm": NPM}
    data["packageManagers"] = [{"name": "npm", "ecosystem": "node", "version": NPM, "declared": None,
                                "lockfile": "package-lock.json",
                                "lockfileSha256": hashlib.sha256((repo / "package-lock.json").read_bytes()).hexdigest()}]
    data["resolved"]["node"] = {"debug": ["2.6.9"], "ms": ["2.0.0", ms_top]}  # the nested copy, and the top one
    return data


def test_a_nested_copy_equal_at_both_ends_is_held_and_the_sweep_names_the_first_failing_release(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    commit = git_repo(repo, {"package.json": (CASE / "package.json").read_text(),
                             "package-lock.json": (CASE / "package-lock.json").read_text(), "check.js": CHECK})
    bad = write_json(tmp_path / "bad.json", capsule(repo, commit, "2.1.3", 1))
    record_failure(bad)
    good = write_json(tmp_path / "good.json", passed(capsule(repo, commit, "2.1.0", 0)))
    rc, result = bisect_at(capsys, bad, good, repo, "--sweep", "pin:node:ms", "-j", "2")
    assert (rc, result["mode"]) == (0, "sweep"), result
    assert result["summary"].startswith("fails from ms 2.1.2 (last passing: 2.1.1)"), result["walk"]
    assert result["walk"]["line"] == ["2.1.1", "2.1.2", "2.1.3"]  # the registry's releases between the ends
    assert any("the copy at 2.1.0 is swept, the others (2.0.0) are held" in n for n in result["walk"]["notes"])
    assert all(p["verdict"] in ("reproduced", "not-reproduced") for p in result["walk"]["trials"])  # 2.0.0 stayed
