"""Ambiguous capsules are tried every way (issue 30), for real: a capsule records `ms` at 2.1.2 and
2.1.3 and no lockfile places them; replay installs the newest at the top level, which passes; the
failure needs 2.1.2, the alternative replay then tries (from the npm registry, in a real build)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.helpers import git_repo, replay, repo_fact, twin_capsule, write_json

pytestmark = [pytest.mark.integration, pytest.mark.slow]

NODE, NPM = "22.23.3", "10.9.9"  # as the other node tests: their base layers are shared
CHECK = ("const v = require('ms/package.json').version;\n"
         "if (v === '2.1.2') { console.error('Error: ms ' + v + ' rounds 1.5s down'); process.exit(1); }\n"
         "console.log('ok with ms', v);\n")


def capsule(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    commit = git_repo(repo, {"check.js": CHECK, "package.json": '{"name": "alt", "version": "1.0.0"}\n'})
    data = twin_capsule(["node", "check.js"], "Error: ms 2.1.2 rounds 1.5s down\n", 1, repo=repo_fact(str(repo), commit))
    data["runtimes"], data["tools"] = {"node": NODE}, {"npm": NPM}
    data["resolved"]["node"] = {"ms": ["2.1.2", "2.1.3"]}
    return write_json(tmp_path / "capsule.json", data)


def test_the_other_placement_brings_the_failure_back(engine: object, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = capsule(tmp_path)
    rc, report = replay(capsys, path, "-n", "1")
    assert (rc, report["verdict"], report["alternative"]) == (0, "reproduced", "ms 2.1.2 at the top level")
    assert report["attempts"][0]["classification"] == "recorded"
    assert any("tried ms 2.1.2 at the top level: reproduced" in n for n in report["notes"]), report["notes"]
    rc, report = replay(capsys, path, "-n", "1", "--no-alternatives")  # both images cached by now
    assert (rc, report["verdict"], report["alternatives_tried"]) == (1, "not-reproduced", [])
