"""The CI templates work as copied (issue 31): each job's install and run lines, read from the YAML
with pyyaml, run in a clean container of the image the job names, against a local clone of this
repository, and the step summary and the documented exit codes come out.

The images are stood in for where no registry answers (tests/integration/ci_jobs.py says with what):
GitLab's `node:20` by the local bookworm base with python3 3.11 and no pip (as node:20), Node 20 and npm;
GitHub's `ubuntu-latest` after setup-python/setup-node by that plus a Python 3.11 with pip on PATH;
the runner image is the real one, built by `replay ci image`. The install line's git URL is pointed at
the clone by git's `url.<clone>.insteadOf` in the job's environment; the template's text is run as it is.
The project is the bundled tz-clock example, whose test fails in New York (the CI machine's zone here).
"""
from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from lxml import etree

from runner.engine import DockerEngine

from tests.integration.ci_jobs import (TOOLCACHE, Expressions, Ran, gitlab_expand, gitlab_key, gitlab_variables,
                                       hosted_image, job_container, node20_image, run_steps,
                                       runner_image_id, shell_text)
from tests.integration.helpers import clone_tz_clock, git
from tests.integration.runner_image import SOCKET

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # minutes: `pytest -m "not slow"` for a quick run
ROOT = Path(__file__).resolve().parents[2]
CI = ROOT / "ci"
DISTRIBUTION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"]
CLONE = "/opt/replay-clone"  # where a job's container sees the clone of this repository
HOST_WS, CONTAINER_WS = "/home/runner/work/app/app", "/__w/app/app"  # github.workspace; $GITHUB_WORKSPACE in a container job
TEMP = "/__w/_temp"
ACTION_PATH = "/home/runner/work/_actions/your-org/replay/v1"
GITLAB_DIR = "/builds/your-org/app"
MACHINE = {"CI": "true", "TZ": "America/New_York"}  # the CI machine is in New York: the tz-clock test fails
GITHUB_REPOSITORY = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/app"}  # set in every job
GITLAB_PROJECT_URL = "https://gitlab.example.com/your-org/app"  # CI_PROJECT_URL: GitLab's predefined variable
REPRODUCED = re.compile(r"\*\*REPRODUCED\*\*: `(\d+) of \1 attempts came back as recorded")  # the reason: capsule text, a code span


def reproduce_here(html: Path) -> str:
    """The report's one "reproduce here" command (a single capsule)."""
    (cmd,) = {"".join(c.itertext()) for c in etree.parse(str(html), etree.HTMLParser()).xpath("//code[@class='cmd']")}
    return str(cmd)


def workflow() -> dict[str, Any]:
    return yaml.safe_load((CI / "github/workflows/replay.yml").read_text())  # type: ignore[no-any-return]


def gitlab() -> dict[str, Any]:
    return yaml.safe_load((CI / "gitlab/replay.gitlab-ci.yml").read_text())  # type: ignore[no-any-return]


def install_source(script: str) -> tuple[str, str]:
    """The git URL and revision of the template's install line; its requirement names the distribution."""
    m = re.search(r'pip install (?:--quiet )?"([A-Za-z0-9_.-]+) @ git\+(https://[^@"]+)@([\w.-]+)"', script)
    assert m, f"no `pip install \"NAME @ git+URL@REV\"` line in {script!r}"
    assert m.group(1) == DISTRIBUTION, f"the install line names {m.group(1)!r}, the distribution is {DISTRIBUTION!r}"
    return m.group(2), m.group(3)


def pointed_at_clone(url: str) -> dict[str, str]:
    """The job's environment sends git's fetches of URL to the clone (the template stays as it is)."""
    return {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": f"url.file://{CLONE}.insteadOf", "GIT_CONFIG_VALUE_0": url}


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This repository with its history (what `git clone` of any copy of replay holds), its files as
    they are now (tracked and new) committed on top. Nothing is tagged or made for the templates:
    the revisions they install must already be in it."""
    dest = tmp_path_factory.mktemp("replay-clone") / "replay"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(dest)], check=True, capture_output=True)
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "--allow-empty", "-m", "this repository, as tested")
    for doc in (workflow(), gitlab()):
        rev = install_source(shell_text(doc))[1]
        assert git(dest, "cat-file", "-t", rev).strip() == "commit", f"the templates install {rev}: not in replay's history"
    return dest


@pytest.fixture(scope="module")
def pip_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("pip-cache"))  # the jobs' downloads, kept between them as a CI cache would


@pytest.fixture(scope="module")
def label(engine: DockerEngine) -> Iterator[str]:
    value = f"test-ci-templates-{uuid.uuid4().hex[:8]}"
    yield value
    engine.cleanup(value)


def github_actions(workspace: Path, checkout: Path, artifacts: Path) -> Any:
    """The actions the jobs use, done for what they do; setup-python/-node: the image has them."""
    def action(uses: str, args: dict[str, str]) -> None:
        name = uses.split("@")[0]
        if name == "actions/checkout":
            shutil.copytree(checkout, workspace, symlinks=True, dirs_exist_ok=True)
        elif name in ("actions/setup-node", "actions/setup-python"):
            assert args == {"node-version": "20"} or args == {"python-version": "3.11"}, args  # what the stand-in has
        elif name == "actions/upload-artifact":
            src = workspace / args["path"]
            assert src.exists() or args.get("if-no-files-found", "warn") != "error", f"{src}: nothing to upload"
            if src.is_dir():
                shutil.copytree(src, artifacts / args["name"], dirs_exist_ok=True)
            elif src.exists():
                (artifacts / args["name"]).mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, artifacts / args["name"])
        elif name == "actions/download-artifact":
            shutil.copytree(artifacts / args["name"], workspace / args.get("path", "."), dirs_exist_ok=True)
        else:
            raise AssertionError(f"the step runner does not know the action {uses}")
    return action


@pytest.fixture(scope="module")
def github_test_job(engine: DockerEngine, label: str, clone: Path, pip_cache: str,
                    tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Ran]:
    """The workflow's `test` job on `ubuntu-latest` (its stand-in): install replay, npm ci, the
    tests under capture, the capsule kept as the artifact `capsule`. Returns (root, what ran)."""
    root = tmp_path_factory.mktemp("github")
    (root / "origin").mkdir()
    checkout = clone_tz_clock(root / "origin" / "app")
    job = workflow()["jobs"]["test"]
    assert job["runs-on"] == "ubuntu-latest"
    ws, artifacts = root / "test-ws", root / "artifacts"
    ws.mkdir()
    (root / "temp").mkdir()
    url, _ = install_source(shell_text(job["steps"]))
    expr = Expressions({"github.event_name": "push", "github.workspace": HOST_WS}, ws)
    assert expr.eval(job["if"])
    mounts = {str(ws): HOST_WS, str(clone): CLONE, pip_cache: "/root/.cache/pip", str(root / "temp"): "/home/runner/_temp"}
    env = {**MACHINE, "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": HOST_WS,
           "GITHUB_STEP_SUMMARY": "/home/runner/_temp/step_summary"}
    with job_container(engine, label, hosted_image(), mounts, {**env, **pointed_at_clone(url)}, HOST_WS) as step:
        code, where = step("python -m pip --version", {})  # setup-python's: a Python 3.11 with pip, first on PATH
        assert code == 0 and f"{TOOLCACHE}/lib/python3.11/" in where, where
        ran = run_steps(job["steps"], expr, step, env, github_actions(ws, checkout, artifacts))
    return root, ran


def test_the_github_test_job_installs_replay_and_keeps_the_failing_runs_capsule(
        github_test_job: tuple[Path, Ran]) -> None:
    root, ran = github_test_job
    assert ran.exit_of("Install replay") == 0, ran.log_of("Install replay")
    assert ran.exit_of("Install the project") == 0, ran.log_of("Install the project")
    # `replay capture` exits with its command's own code: npm test's 1
    tests = "Tests, recorded as a capsule when they fail"
    assert ran.exit_of(tests) == 1 and "✖ isoDay formats the first day of the year" in ran.log_of(tests), \
        ran.log_of(tests)
    ran.exit_of("Keep the capsule of the failing run")
    assert (root / "artifacts" / "capsule" / "capsule.json").is_file()


def test_the_github_replay_job_replays_in_the_runner_image_with_the_containers_workspace(
        engine: DockerEngine, label: str, github_test_job: tuple[Path, Ran]) -> None:
    """A container job: github.workspace is the host's path here, which the container does not have."""
    root, _ = github_test_job
    job = workflow()["jobs"]["replay"]
    assert job["needs"] == "test" and "/var/run/docker.sock" in job["container"]["options"]
    assert job["container"]["image"].endswith("/replay:latest")  # the runner image: `replay ci image --tag ...`
    ws, temp = root / "replay-ws", root / "replay-temp"
    ws.mkdir()
    temp.mkdir()
    expr = Expressions({"github.event_name": "push", "github.workspace": HOST_WS}, ws, failed=True)
    assert expr.eval(job["if"])  # the test job failed
    expr.failed = False  # a job of its own
    env = {"CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": CONTAINER_WS, **GITHUB_REPOSITORY,
           "GITHUB_STEP_SUMMARY": f"{TEMP}/_runner_file_commands/step_summary_1"}
    (temp / "_runner_file_commands").mkdir()
    mounts = {str(ws): CONTAINER_WS, str(temp): TEMP, SOCKET: SOCKET}
    checkout = root / "origin" / "app"
    with job_container(engine, label, runner_image_id(), mounts, env, CONTAINER_WS) as step:
        ran = run_steps(job["steps"], expr, step, env, github_actions(ws, checkout, root / "artifacts"))
    # replay-job.sh exits as farm run: 0 when the capsule got a verdict
    replayed = "Replay the failing run's capsule"
    assert ran.exit_of(replayed) == 0, ran.log_of(replayed)
    summary = (temp / "_runner_file_commands" / "step_summary_1").read_text()
    assert REPRODUCED.search(summary) and "#### Fidelity" in summary, summary
    results = root / "artifacts" / "replay-results"
    assert len(list(etree.parse(str(results / "replay.xml")).getroot().iter("testcase"))) == 1
    assert (results / "replay.html").is_file() and (results / "summary.md").read_text() == summary
    assert reproduce_here(results / "replay.html") == "replay replay-in/capsule.json --repo https://github.com/acme/app"


def test_the_action_installs_itself_and_replays_on_a_hosted_runner(
        engine: DockerEngine, label: str, clone: Path, pip_cache: str, github_test_job: tuple[Path, Ran]) -> None:
    """ci/github/action.yml, mode replay, as a job without a container uses it: after checkout and the
    capsule's download, `uses: your-org/replay/ci/github@v1` with `capsule` and `repo`."""
    root, _ = github_test_job
    action = yaml.safe_load((CI / "github/action.yml").read_text())
    ws, temp = root / "action-ws", root / "action-temp"
    ws.mkdir()
    temp.mkdir()
    shutil.copytree(root / "origin" / "app", ws, symlinks=True, dirs_exist_ok=True)  # actions/checkout
    shutil.copytree(root / "artifacts" / "capsule", ws / "replay-in")  # actions/download-artifact
    given = {"capsule": "replay-in/capsule.json", "repo": HOST_WS, "output-dir": "action-out"}
    inputs = {f"inputs.{k}": given.get(k, v.get("default", "")) for k, v in action["inputs"].items()}
    expr = Expressions({**inputs, "github.workspace": HOST_WS}, ws)
    env = {**MACHINE, "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": HOST_WS,
           "GITHUB_ACTION_PATH": f"{ACTION_PATH}/ci/github", "GITHUB_STEP_SUMMARY": "/home/runner/_temp/step_summary"}
    mounts = {str(ws): HOST_WS, str(clone): ACTION_PATH, pip_cache: "/root/.cache/pip", str(temp): "/home/runner/_temp",
              SOCKET: SOCKET}
    artifacts = root / "action-artifacts"
    with job_container(engine, label, hosted_image(), mounts, env, HOST_WS) as step:
        ran = run_steps(action["runs"]["steps"], expr, step, env, github_actions(ws, ws, artifacts))
    assert ran.exit_of("Install replay") == 0, ran.log_of("Install replay")
    assert ran.exit_of("Replay the capsule") == 0, ran.log_of("Replay the capsule")
    published = artifacts / "replay-results"  # the artifact-name's default
    assert len(list(etree.parse(str(published / "replay.xml")).getroot().iter("testcase"))) == 1
    assert REPRODUCED.search((temp / "step_summary").read_text())


@pytest.fixture(scope="module")
def gitlab_test_job(engine: DockerEngine, label: str, clone: Path, pip_cache: str,
                    tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, str]:
    """The template's `test` job in (the stand-in of) its image: before_script and script in one shell,
    as GitLab runs them. Returns (the project folder, the exit code, the log)."""
    doc = gitlab()
    job = doc["test"]
    assert job["image"] == "node:20"
    project = tmp_path_factory.mktemp("gitlab") / "project"
    clone_tz_clock(project)
    lines = [*job.get("before_script", []), *job["script"]]
    url, _ = install_source("\n".join(lines))
    env = {**MACHINE, **gitlab_variables(doc, "test", {"CI_PROJECT_DIR": GITLAB_DIR}), **pointed_at_clone(url)}
    mounts = {str(project): GITLAB_DIR, str(clone): CLONE, pip_cache: "/root/.cache/pip"}
    with job_container(engine, label, node20_image(), mounts, env, GITLAB_DIR) as step:
        no_pip, why = step("python3 --version && ! python3 -m pip --version", {})
        assert no_pip == 0 and "Python 3.11" in why, f"the stand-in must be node:20's python3, without pip: {why}"
        code, log = step("\n".join(lines), {})
    return project, code, log


def test_the_gitlab_test_job_installs_replay_in_node_20_and_keeps_the_capsule(
        gitlab_test_job: tuple[Path, int, str]) -> None:
    project, code, log = gitlab_test_job
    assert code == 1, log[-3000:]  # npm test's own code, through `replay capture`
    assert "replay capture: fail: exit 1" in log and "✖ isoDay formats the first day of the year" in log, log[-3000:]
    kept = [p for p in gitlab()["test"]["artifacts"]["paths"] if (project / p).is_file()]
    assert kept == ["capsule.json"]


def run_gitlab_job(engine: DockerEngine, label: str, doc: dict[str, Any], name: str, project: Path,
                   pipeline: dict[str, str]) -> tuple[int, str, dict[str, str]]:
    """A replay job of the template in the image it names (the runner image), as GitLab would."""
    variables = gitlab_variables(doc, name, {"CI_PROJECT_DIR": GITLAB_DIR, **pipeline})
    image = gitlab_expand(gitlab_key(doc, name, "image")["name"], variables)
    assert image == "replay:latest", image  # REPLAY_IMAGE: `replay ci image --tag replay:latest`
    env = {"CI": "true", **variables}
    with job_container(engine, label, runner_image_id(), {str(project): GITLAB_DIR, SOCKET: SOCKET}, env,
                       GITLAB_DIR) as step:
        code, log = step("\n".join(doc[name]["script"]), {})
    return code, log, variables


def test_the_gitlab_replay_job_replays_the_capsule_in_the_runner_image(
        engine: DockerEngine, label: str, gitlab_test_job: tuple[Path, int, str], tmp_path: Path) -> None:
    doc = gitlab()
    job = doc["replay:failure"]
    assert job["when"] == "on_failure" and job["needs"] == [{"job": "test", "artifacts": True}]
    project = tmp_path / "project"  # a fresh checkout, the test job's artifacts in it
    clone_tz_clock(project)
    shutil.copy2(gitlab_test_job[0] / "capsule.json", project / "capsule.json")
    code, log, variables = run_gitlab_job(engine, label, doc, "replay:failure", project,
                                          {"CI_PROJECT_URL": GITLAB_PROJECT_URL})
    assert code == 0, log[-3000:]
    assert REPRODUCED.search(log) and "#### Fidelity" in log, log[-6000:]  # the summary, in the job log
    junit = project / gitlab_expand(job["artifacts"]["reports"]["junit"], variables).removeprefix(GITLAB_DIR + "/")
    assert len(list(etree.parse(str(junit)).getroot().iter("testcase"))) == 1
    assert reproduce_here(junit.with_name("replay.html")) == f"replay capsule.json --repo {GITLAB_PROJECT_URL}"


def test_the_gitlab_capsule_job_exits_2_for_a_capsule_that_is_not_there(
        engine: DockerEngine, label: str, tmp_path: Path) -> None:
    """replay-job.sh's documented exit for bad input, through the `replay:capsule` job."""
    doc = gitlab()
    assert doc["replay:capsule"]["rules"] == [{"if": "$REPLAY_CAPSULE"}]
    project = tmp_path / "project"
    clone_tz_clock(project)
    code, log, _ = run_gitlab_job(engine, label, doc, "replay:capsule", project, {"REPLAY_CAPSULE": "missing.json"})
    assert code == 2, log[-3000:]
    assert "missing.json" in log
