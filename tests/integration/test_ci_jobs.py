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

from runner.report.comment import read_marker
from runner.engine import DockerEngine, Mount

from tests.integration.helpers import git, git_repo, repo_fact, twin_capsule, write_json
from tests.integration.runner_image import run_in_image

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # minutes: `pytest -m "not slow"` for a quick run
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
    # the same run, recorded with a failure that never happens here (another exit code): no baseline
    elsewhere = twin_capsule(["python3", "check.py"], "FAIL: value is 41, expected 42\n", 7, python="3.11.2",
                             repo=repo_fact("https://git.example.com/acme/app.git", failing))
    write_json(root / "elsewhere.json", elsewhere)
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
    # no REPLAY_ATTEMPTS: replay stops when decided (a fix needs 5 straight passes after 3 failures)
    env = [("REPLAY_REF", project[commit]), ("REPLAY_REPO", "/w/repo"), ("REPLAY_OUT", "/out")]
    res = run_in_image(engine, label, ["pr-job.sh", "capsule.json"], mounts, env=env)
    assert res.exit_code == exit_code, res.output[-3000:]
    run = json.loads((tmp_path / "run-1.json").read_text())["result"]
    assert (len(run["baseline"]["attempts"]), len(run["attempts"])) == ((3, 5) if state == "fixed" else (3, 1))
    comment = (tmp_path / "comment-1.md").read_text()
    assert read_marker(comment) is not None and read_marker(comment)[1] == state  # type: ignore[index]
    assert comment.splitlines()[1].startswith("### ") and f" {words} at `{project[commit][:12]}`" in comment
    assert f"capsule.json: {state}" in res.output.decode()


def test_the_pr_job_never_calls_fixed_a_failure_that_does_not_come_back_at_its_commit(
        engine: DockerEngine, label: str, tmp_path: Path, project: dict[str, str]) -> None:
    """The fixing commit passes, but the recorded failure (exit 7) never happens at its own commit
    here: nothing was shown fixed, so the comment says inconclusive and the job fails, as replay does."""
    mounts = [Mount(project["root"], "/w", True), Mount(str(tmp_path), "/out", False)]
    env = [("REPLAY_REF", project["fixed"]), ("REPLAY_REPO", "/w/repo"), ("REPLAY_OUT", "/out")]
    res = run_in_image(engine, label, ["pr-job.sh", "elsewhere.json"], mounts, env=env)
    assert res.exit_code == 1, res.output[-3000:]
    comment = (tmp_path / "comment-1.md").read_text()
    assert read_marker(comment)[1] == "inconclusive"  # type: ignore[index]
    assert "fixed" not in comment.splitlines()[1] and "did not reproduce the failure here" in comment
    run = json.loads((tmp_path / "run-1.json").read_text())
    assert run["exit_code"] == 1 and run["result"]["verdict"] == "inconclusive"
    assert run["result"]["baseline"]["verdict"] == "different-failure" and run["result"]["attempts"] == []


# -- the failing-test loop, run as the CI files say (issue 20) -------------------------------
# No GitHub or GitLab runner is reachable here, so a small step runner executes each job's
# steps in order: `run:`/`script:` lines in bash (the test job on this host, the replay job in
# the runner image, as the workflow's `container:` says), the actions the loop needs as what
# they do (checkout: the project; upload/download-artifact: an artifacts folder), and the
# `if:` / `when:` hand-offs by a tiny evaluator that refuses any expression it does not know.

import os  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from typing import Any  # noqa: E402

import yaml  # noqa: E402

from tests.integration.helpers import clone_tz_clock  # noqa: E402

CI = Path(__file__).resolve().parents[2] / "ci"
IN_IMAGE = "/github/workspace"


class Runner:
    def __init__(self, root: Path, event: str = "push") -> None:
        self.root, self.event = root, event
        self.artifacts = root / "artifacts"
        self.summary = root / "summary" / "step-summary.md"
        self.summary.parent.mkdir(parents=True)
        self.summary.touch()
        self.failed = False
        self.logs: list[str] = []  # each run step's output, for the failure messages

    def expr(self, text: str, workspace: str) -> Any:
        text = text.strip()
        if text.startswith("${{") and text.endswith("}}"):
            text = text[3:-2].strip()
        if " && " in text:
            return all(self.expr(t, workspace) for t in text.split(" && "))
        if m := re.fullmatch(r"(.+?) (==|!=) (.+)", text):
            a, b = self.expr(m.group(1), workspace), self.expr(m.group(3), workspace)
            return (a == b) == (m.group(2) == "==")
        if m := re.fullmatch(r"'([^']*)'", text):
            return m.group(1)
        if m := re.fullmatch(r"hashFiles\('([^']+)'\)", text):
            return "some-hash" if (Path(workspace) / m.group(1)).exists() else ""
        known = {"failure()": self.failed, "always()": True, "success()": not self.failed,
                 "github.event_name": self.event, "github.workspace": workspace}
        assert text in known, f"the step runner does not know the expression {text!r}"
        return known[text]

    def env_of(self, step: dict[str, Any], workspace: str) -> dict[str, str]:
        return {k: str(self.expr(str(v), workspace)) if "${{" in str(v) else str(v)
                for k, v in (step.get("env") or {}).items()}

    def action(self, uses: str, args: dict[str, Any], workspace: Path, checkout: Path) -> None:
        name = uses.split("@")[0]
        if name == "actions/checkout":
            shutil.copytree(checkout, workspace, symlinks=True, dirs_exist_ok=True)
        elif name in ("actions/setup-node", "actions/setup-python"):
            pass  # the host has node 20 and Python; the runner image has its own
        elif name == "actions/upload-artifact":
            src = workspace / args["path"]
            if not src.exists():
                assert args.get("if-no-files-found", "warn") != "error", f"{src}: nothing to upload"
                return
            dest = self.artifacts / args["name"]
            dest.mkdir(parents=True, exist_ok=True)
            (shutil.copytree(src, dest / src.name, dirs_exist_ok=True) if src.is_dir()
             else shutil.copy2(src, dest / src.name))
        elif name == "actions/download-artifact":
            shutil.copytree(self.artifacts / args["name"], workspace / args.get("path", "."), dirs_exist_ok=True)
        else:
            raise AssertionError(f"the step runner does not know the action {uses}")


def run_github_job(runner: Runner, job: dict[str, Any], workspace: Path, checkout: Path,
                   host_env: dict[str, str], in_image: Any = None) -> list[str]:
    """The job's steps in order; a failed step marks the job failed and later steps run only by
    their `if:` (default success()). Returns the names of the steps that ran."""
    ran = []
    workspace.mkdir(parents=True, exist_ok=True)
    seen_ws = IN_IMAGE if in_image else str(workspace)
    for step in job["steps"]:
        if not runner.expr(step.get("if", "success()"), str(workspace)):
            continue
        ran.append(step.get("name") or step["uses"])
        if "uses" in step:
            runner.action(step["uses"], step.get("with") or {}, workspace, checkout)
            continue
        env = {**runner.env_of(step, seen_ws), "GITHUB_WORKSPACE": seen_ws, "CI": "true",
               "GITHUB_STEP_SUMMARY": "/github/summary/step-summary.md" if in_image else str(runner.summary)}
        if in_image:
            code, output = in_image(step["run"], env)
        else:
            proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                                  cwd=workspace, env={**host_env, **env}, capture_output=True, text=True, timeout=900)
            code, output = proc.returncode, proc.stdout + proc.stderr
        runner.logs.append(output[-3000:])
        if code != 0:
            runner.failed = True
        ran[-1] += f" (exit {code})"
    return ran


def test_the_github_loop_captures_a_failing_test_and_replays_it_in_the_runner_image(
        engine: DockerEngine, label: str, tmp_path: Path) -> None:
    doc = yaml.safe_load((CI / "github/workflows/replay.yml").read_text())
    (tmp_path / "origin").mkdir()
    checkout = clone_tz_clock(tmp_path / "origin" / "tz-clock")
    runner = Runner(tmp_path)
    host_env = {**os.environ, "TZ": "America/New_York",  # the CI machine is in New York: the test fails
                "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    test_job = doc["jobs"]["test"]
    assert runner.expr(test_job["if"], "")
    ran = run_github_job(runner, test_job, tmp_path / "test-ws", checkout, host_env)
    assert runner.failed and "Tests, recorded as a capsule when they fail (exit 1)" in ran, ran
    assert "Keep the capsule of the failing run" in ran and (runner.artifacts / "capsule" / "capsule.json").is_file()

    replay_job = doc["jobs"]["replay"]
    assert replay_job["needs"] == "test" and runner.expr(replay_job["if"], "")
    runner.failed = False  # a job of its own
    ws = tmp_path / "replay-ws"

    def in_image(script: str, env: dict[str, str]) -> tuple[int, str]:
        mounts = [Mount(str(ws), IN_IMAGE, False), Mount(str(runner.summary.parent), "/github/summary", False)]
        res = run_in_image(engine, label, ["bash", "-eo", "pipefail", "-c", script], mounts, workdir=IN_IMAGE,
                           env=sorted({**env, "REPLAY_ATTEMPTS": "1"}.items()))
        return res.exit_code, res.output.decode("utf-8", "replace")

    ran = run_github_job(runner, replay_job, ws, checkout, host_env, in_image=in_image)
    assert "Replay the failing run's capsule (exit 0)" in ran, runner.logs[-1]
    assert "Publish the JUnit file and the HTML report" in ran
    summary = runner.summary.read_text()
    assert "**REPRODUCED**: `1 of 1 attempts came back as recorded: fails in at least 21 % of runs (95 %)`." in summary, \
        summary
    assert "#### Fidelity" in summary and re.search(r"\d+ of \d+ recorded facts replayed exactly", summary)
    results = runner.artifacts / "replay-results" / "replay-out"
    suite = etree.parse(str(results / "replay.xml")).getroot()
    assert len(list(suite.iter("testcase"))) == 1 and (results / "replay.html").is_file()


def test_the_gitlab_loop_captures_a_failing_test_and_replays_it_in_the_runner_image(
        engine: DockerEngine, label: str, tmp_path: Path) -> None:
    doc = yaml.safe_load((CI / "gitlab/replay.gitlab-ci.yml").read_text())
    (tmp_path / "origin").mkdir()
    checkout = clone_tz_clock(tmp_path / "origin" / "tz-clock")
    ws = tmp_path / "project"
    shutil.copytree(checkout, ws, symlinks=True)
    env = {**os.environ, "TZ": "America/New_York", "CI": "true", "CI_PROJECT_DIR": str(ws),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    test = doc["test"]
    code = 0
    for line in [*test.get("before_script", []), *test["script"]]:  # GitLab stops at the first failing line
        code = subprocess.run(["bash", "-eo", "pipefail", "-c", line], cwd=ws, env=env, capture_output=True,
                              timeout=900).returncode
        if code:
            break
    assert code == 1 and test["artifacts"]["when"] == "on_failure"
    kept = [p for p in test["artifacts"]["paths"] if (ws / p).is_file()]
    assert kept == ["capsule.json"]
    job = doc["replay:failure"]
    assert job["when"] == "on_failure" and job["needs"][0]["job"] == "test"
    replay_ws = tmp_path / "replay-project"  # a fresh checkout with the test job's artifacts in it
    shutil.copytree(checkout, replay_ws, symlinks=True)
    shutil.copy2(ws / "capsule.json", replay_ws / "capsule.json")
    variables = {**doc["variables"], **job["variables"], "REPLAY_ATTEMPTS": "1"}
    variables = {k: str(v).replace("$CI_PROJECT_DIR", "/builds/project") for k, v in variables.items()}
    res = run_in_image(engine, label, ["bash", "-eo", "pipefail", "-c", "\n".join(job["script"])],
                       [Mount(str(replay_ws), "/builds/project", False)], workdir="/builds/project",
                       env=sorted(variables.items()))
    log = res.output.decode("utf-8", "replace")
    assert res.exit_code == 0, log[-3000:]
    assert "**REPRODUCED**: `1 of 1 attempts came back as recorded: fails in at least 21 % of runs" in log  # the summary
    junit = replay_ws / job["artifacts"]["reports"]["junit"].replace("$REPLAY_OUT", variables["REPLAY_OUT"])
    assert len(list(etree.parse(str(junit)).getroot().iter("testcase"))) == 1
