"""`replay bisect --commits` and `--sweep FACT` end to end against the real Docker engine.

Every trial builds (or reuses) a real image and runs a real container. The bad
capsules' failure fields hold a failure really observed (record_failure).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from runner.bisect.rules import RATE_FIRST
from runner.cli.main import main

from tests.integration.helpers import env_facts, git_history, git_repo, write_json
from tests.integration.bisecting import SIX_PY, bisect_at as bisect, passed, python_capsule, record_failure

pytestmark = pytest.mark.integration

# Fails from the commit that sets ROUNDING = "up", and (whatever the commit) under STRICT=1.
CHECK_PY = """\
import os
import sys

ROUNDING = "{rounding}"
if ROUNDING == "up" or os.environ.get("STRICT") == "1":
    print("error: start of day is rounded up", file=sys.stderr, flush=True)
    sys.exit(1)
print("ok", flush=True)
"""
# (file changes, subject): the failure comes in with the third commit
COMMITS = [({"check.py": CHECK_PY.format(rounding="down")}, "init"),
           ({"README": "a clock\n"}, "add a readme"),
           ({"check.py": CHECK_PY.format(rounding="up")}, "round start of day up"),
           ({"README": "a clock that rounds\n"}, "docs"),
           ({"NOTES": "2.0\n"}, "release 2.0")]

# Fails from six 1.16.0 on; the message names no version, so every failing version fails the same way.
@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")


# -- 1. --commits ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A repository of five commits (fixed dates: stable commits, so cached images)."""
    path = tmp_path_factory.mktemp("clock") / "repo"
    return path, git_history(path, COMMITS)


def commit_pair(dest: Path, repo: Path, good: str, bad: str, bad_env: dict[str, Any]) -> tuple[Path, Path]:
    """(bad, good): the bad commit failing under bad_env (recorded), the good one passing."""
    bad_path = write_json(dest / "bad.json", python_capsule(repo, bad, 1, bad_env))
    record_failure(bad_path)
    good_path = write_json(dest / "good.json", passed(python_capsule(repo, good, 0, env_facts(LANG="C.UTF-8",
                                                                                               STRICT=None))))
    return bad_path, good_path


def test_commits_finds_the_commit_that_brought_the_failure(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path, history: tuple[Path, list[str]]) -> None:
    repo, shas = history
    bad, good = commit_pair(tmp_path, repo, shas[0], shas[-1], env_facts(LANG="en_US.UTF-8", STRICT=None))
    rc, result = bisect(capsys, bad, good, repo, "--commits")
    assert (rc, result["mode"], result["walk"]["status"]) == (0, "commits", "found"), result["walk"]
    assert result["first_failing"] == {"sha": shas[2], "subject": "round start of day up"}
    assert result["walk"]["last_passing"] == shas[1]
    assert [c["sha"] for c in result["commits"]] == shas[1:]
    probes = result["walk"]["trials"]
    assert [(p["role"], p["verdict"]) for p in probes[:2]] == [("good end", "not-reproduced"), ("bad end", "reproduced")]
    assert {p["item"]: p["verdict"] for p in probes}[shas[2]] == "reproduced"
    recorded = json.loads(bad.read_text())["command"]["failure"]["signature"]
    assert all(p["signature"] == recorded for p in probes if p["verdict"] == "reproduced")
    assert len({p["item"] for p in probes}) <= 5  # four commits after the good one: the ends and at most three more
    assert result["walk"]["confidence"] >= 0.95 and result["walk"]["rate"]["failed"] == RATE_FIRST  # its rate first


def test_commits_says_when_the_good_commit_already_fails_in_the_bad_environment(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path, history: tuple[Path, list[str]]) -> None:
    repo, shas = history
    bad, good = commit_pair(tmp_path, repo, shas[0], shas[1], env_facts(LANG="C.UTF-8", STRICT="1"))
    rc, result = bisect(capsys, bad, good, repo, "--commits")
    assert (rc, result["walk"]["status"], result["first_failing"]) == (1, "baseline fails", None)
    assert any(n.startswith(f"the good commit {shas[0][:12]} already fails in the bad environment (reproduced")
               for n in result["walk"]["notes"])
    assert len(result["walk"]["trials"]) == 2


# -- 2. --sweep ------------------------------------------------------------------------


def test_sweep_finds_the_first_failing_six(engine: object, capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    commit = git_repo(repo, {"check.py": SIX_PY})
    env = env_facts(LANG="C.UTF-8")
    bad = write_json(tmp_path / "bad.json", python_capsule(repo, commit, 1, env, six="1.17.0"))
    record_failure(bad)
    good = write_json(tmp_path / "good.json", passed(python_capsule(repo, commit, 0, env, six="1.15.0")))
    rc, result = bisect(capsys, bad, good, repo, "--sweep", "pin:python:six", "-j", "2")
    assert (rc, result["mode"], result["summary"]) == (
        0, "sweep", "fails from six 1.16.0 (last passing: 1.15.0), probability ≥ 0.99")
    walk = result["walk"]
    assert walk["line"] == ["1.16.0", "1.17.0"]  # what the index offers between the two ends
    tried = {(p["item"], p["role"]): p["verdict"] for p in walk["trials"]}
    assert tried == {("1.15.0", "good end"): "not-reproduced", ("1.17.0", "bad end"): "reproduced",
                     ("1.16.0", "search"): "reproduced"}
    rc = main(["bisect", str(bad), "--good", str(good), "--repo", str(repo), "--sweep", "runtime:node"])
    assert rc == 2 and "--sweep runtime:node is not among the differences" in capsys.readouterr().err
