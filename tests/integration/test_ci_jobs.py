"""The CI jobs' scripts, run in the runner image against the host's engine: the replay job
produces the JUnit and HTML files; the PR job writes a `fixed` comment for a fixing commit
and `still failing` for one that does not fix, and its exit says so."""
from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import etree

from runner.ci.comment import read_marker
from runner.engine import DockerEngine, Mount

from tests.integration.helpers import git, git_repo, repo_fact, twin_capsule, write_json
from tests.integration.runner_image import run_in_image

pytestmark = pytest.mark.integration
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures/examples/codeinstances"
CHECK = ("import sys\nvalue = open('value.txt').read().strip()\nif value != '42':\n"
         "    print(f'FAIL: value is {value}, expected 42')\n    sys.exit(1)\nprint('ok')\n")


@pytest.fixture()
def label(engine: DockerEngine) -> Iterator[str]:
    value = f"test-ci-{uuid.uuid4().hex[:8]}"
    yield value
    engine.cleanup(value)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A repository whose check fails at its first commit, a commit that fixes it, one that does not."""
    root = tmp_path_factory.mktemp("ci-project")
    repo = root / "repo"
    failing = git_repo(repo, {"check.py": CHECK, "value.txt": "41\n"})
    (repo / "README").write_text("a change that fixes nothing\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "docs")
    unfixed = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "fix", failing)
    (repo / "value.txt").write_text("42\n")
    git(repo, "commit", "-q", "-am", "the right value")
    fixed = git(repo, "rev-parse", "HEAD").strip()
    capsule = twin_capsule(["python3", "check.py"], "FAIL: value is 41, expected 42\n", 1, python="3.11.2",
                           repo=repo_fact("https://git.example.com/acme/app.git", failing))
    write_json(root / "capsule.json", capsule)
    return {"root": str(root), "fixed": fixed, "unfixed": unfixed}


def test_the_replay_job_publishes_junit_and_html(engine: DockerEngine, label: str, tmp_path: Path) -> None:
    mounts = [Mount(str(FIXTURES), "/w", True), Mount(str(tmp_path), "/out", False)]
    res = run_in_image(engine, label, ["replay-job.sh", "fetch-greeting.json"], mounts,
                       env=[("REPLAY_OUT", "/out"), ("REPLAY_ATTEMPTS", "1")])
    assert res.exit_code == 0, res.output[-3000:]
    suite = etree.parse(str(tmp_path / "replay.xml")).getroot()
    (case,) = suite.iter("testcase")
    assert "fetch-greeting" in (case.get("name", "") + case.get("classname", "") + case.get("file", ""))
    html = (tmp_path / "replay.html").read_text()
    assert html.lstrip().lower().startswith("<!doctype html") and "reproduced" in html
    night = json.loads((tmp_path / "farm-run.json").read_text())["result"]
    assert [r["verdict"] for r in night["results"]] == ["reproduced"] and (tmp_path / "farm.sqlite").is_file()


@pytest.mark.parametrize(("commit", "state", "words", "exit_code"), [
    ("fixed", "fixed", "fixed", 0), ("unfixed", "not-fixed", "still failing", 1)])
def test_the_pr_job_comments_fixed_or_still_failing(engine: DockerEngine, label: str, tmp_path: Path,
                                                    project: dict[str, str], commit: str, state: str, words: str,
                                                    exit_code: int) -> None:
    mounts = [Mount(project["root"], "/w", True), Mount(str(tmp_path), "/out", False)]
    env = [("REPLAY_REF", project[commit]), ("REPLAY_REPO", "/w/repo"), ("REPLAY_OUT", "/out"),
           ("REPLAY_ATTEMPTS", "1")]
    res = run_in_image(engine, label, ["pr-job.sh", "capsule.json"], mounts, env=env)
    assert res.exit_code == exit_code, res.output[-3000:]
    comment = (tmp_path / "comment-1.md").read_text()
    assert read_marker(comment) is not None and read_marker(comment)[1] == state  # type: ignore[index]
    assert comment.splitlines()[1].startswith("### ") and f" {words} at `{project[commit][:12]}`" in comment
    assert f"capsule.json: {state}" in res.output.decode()
