"""What capture records besides the run (issue 38): a variable asked for by name even when it is
session noise (HOME), no interpreter's or dependencies' folder as untracked source, and an
outcome go test's cache gave named as such, at capture and in a replay's fidelity table."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runner.build.planner import make_plan
from runner.capsules import read_capsule
from runner.cli.main import main
from runner.config import Settings

GIT_ENV = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
GO_CACHED = "ok  \tdemo\t(cached)\nok  \tdemo/sub\t0.004s\n"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, check=True, capture_output=True)


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "main.py").write_text("print('hi')\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")
    monkeypatch.chdir(root)
    return root


def test_include_env_home_records_home_though_it_is_session_noise(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/sam")
    assert main(["capture", "-q", "-o", "c.json", "--", "true"]) == 0
    assert "HOME" not in json.loads((repo / "c.json").read_text())["env"]  # unasked: noise, as before
    assert main(["capture", "-q", "--include-env", "HOME", "-o", "c.json", "--", "true"]) == 0
    doc = json.loads((repo / "c.json").read_text())
    assert doc["env"]["HOME"] == {"state": "set", "value": "/home/sam"} and "HOME" in doc["redaction"]["valuesIncluded"]
    assert read_capsule(repo / "c.json").env["HOME"].value == "/home/sam"


def test_interpreter_and_dependency_folders_are_never_untracked_source(repo: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    for venv in (".venv", "py311"):  # real virtual environments: the second found by its pyvenv.cfg
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=repo, check=True, timeout=120)
    for name in ("venv/lib/site.py", "node_modules/left-pad/index.js", "pkg/__pycache__/m.cpython-311.pyc",
                 ".tox/py311/log.txt", "conda/conda-meta/history", "conda/bin/python", "tools/env/bin/python",
                 "src/new.py", "src/venv.py", "notes/node_modules.md"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("x\n")
    monkeypatch.setenv("VIRTUAL_ENV", str(repo / "tools" / "env"))  # the project's interpreter, by any name
    assert main(["capture", "-q", "-o", str(repo.parent / "c.json"), "--", "true"]) == 0
    doc = json.loads((repo.parent / "c.json").read_text())
    assert doc["repo"]["untracked"] == ["notes/node_modules.md", "src/new.py", "src/venv.py"]
    assert doc["repo"]["dirty"] is True


def test_a_go_test_cache_hit_is_recorded_warned_and_in_the_fidelity_table(
        repo: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["capture", "-o", "c.json", "--", "printf", GO_CACHED]) == 0
    err = capfd.readouterr().err.splitlines()
    (warning,) = [ln for ln in err if "warning" in ln]
    assert "go test answered from its test cache" in warning and "go test -count=1" in warning
    doc = json.loads((repo / "c.json").read_text())
    assert doc["command"]["resultCached"] == "go test" and doc["command"]["outcome"] == "pass"
    capsule = read_capsule(repo / "c.json")
    assert capsule.command.cached_by == "go test"
    (row,) = [r for r in make_plan(capsule, Settings()).fidelity if r.fact == "go test result"]
    assert (row.recorded, row.replayed, row.status) == ("cached", "run", "approximated")
    assert main(["capture", "-o", "ran.json", "--", "printf", "ok  \tdemo\t0.004s\n"]) == 0
    assert "resultCached" not in json.loads((repo / "ran.json").read_text())["command"]
    assert not [ln for ln in capfd.readouterr().err.splitlines() if "warning" in ln]


def test_a_cached_mark_other_than_go_tests_is_refused_in_one_line(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capture", "-q", "-o", "c.json", "--", "printf", GO_CACHED]) == 0
    doc = json.loads((repo / "c.json").read_text())
    doc["command"]["resultCached"] = "rm -rf /"
    (repo / "c.json").write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["inspect", "c.json"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "c.json" in line and "resultCached" in line
