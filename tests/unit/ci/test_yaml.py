"""The CI files validate against the published GitHub workflow/action and GitLab CI schemas
(check-jsonschema vendors them: offline), and call the scripts that exist."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

CI = Path(__file__).resolve().parents[3] / "ci"
FILES = [("vendor.github-actions", CI / "github/action.yml"),
         ("vendor.github-workflows", CI / "github/workflows/replay.yml"),
         ("vendor.gitlab-ci", CI / "gitlab/replay.gitlab-ci.yml")]


def checker() -> list[str]:
    exe = Path(sys.executable).with_name("check-jsonschema")
    found = str(exe) if exe.exists() else shutil.which("check-jsonschema")
    assert found, "check-jsonschema is a test dependency (pyproject.toml [test])"
    return [found]


@pytest.mark.parametrize(("schema", "path"), FILES, ids=[p.name for _, p in FILES])
def test_the_file_validates_against_its_published_schema(schema: str, path: Path) -> None:
    proc = subprocess.run([*checker(), "--builtin-schema", schema, str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_schema_check_can_fail(tmp_path: Path) -> None:
    bad = tmp_path / "action.yml"
    bad.write_text("name: x\nruns:\n  using: composite\n  steps: [{run: echo}]\n")  # a composite run step needs a shell
    proc = subprocess.run([*checker(), "--builtin-schema", "vendor.github-actions", str(bad)], capture_output=True)
    assert proc.returncode != 0


def test_the_action_passes_inputs_as_environment_never_as_shell_text() -> None:
    action = yaml.safe_load((CI / "github/action.yml").read_text())
    runs = [s["run"] for s in action["runs"]["steps"] if "run" in s]
    assert runs and not any("${{" in r for r in runs)
    assert any("replay-job.sh" in r for r in runs) and any("pr-job.sh" in r for r in runs)
    assert all((CI / name).is_file() for name in ("replay-job.sh", "pr-job.sh"))


def test_the_gitlab_template_publishes_junit_and_always_keeps_artifacts() -> None:
    doc = yaml.safe_load((CI / "gitlab/replay.gitlab-ci.yml").read_text())
    assert doc["replay:capsule"]["artifacts"]["reports"]["junit"] == "$REPLAY_OUT/replay.xml"
    assert doc[".replay"]["artifacts"]["when"] == "always"
    assert doc["replay:capsule"]["script"] == ["replay-job.sh"]


# -- the failing-test loop: capture in the test job, replay in the next (issue 20) -------------

def workflow() -> dict:  # type: ignore[type-arg]
    return yaml.safe_load((CI / "github/workflows/replay.yml").read_text())


def gitlab() -> dict:  # type: ignore[type-arg]
    return yaml.safe_load((CI / "gitlab/replay.gitlab-ci.yml").read_text())


def test_the_github_test_step_runs_under_capture_and_uploads_the_capsule_only_when_it_failed() -> None:
    steps = workflow()["jobs"]["test"]["steps"]
    (capture,) = [s for s in steps if "replay capture" in s.get("run", "")]
    assert "--only-on-failure -o capsule.json --" in capture["run"] and "if" not in capture
    upload = steps[steps.index(capture) + 1]
    assert upload["uses"].startswith("actions/upload-artifact@") and upload["if"].startswith("failure()")
    assert (upload["with"]["name"], upload["with"]["path"]) == ("capsule", "capsule.json")


def test_the_github_replay_job_needs_the_failed_test_job_and_reads_what_it_wrote() -> None:
    jobs = workflow()["jobs"]
    replay = jobs["replay"]
    assert replay["needs"] == "test" and replay["if"].startswith("failure()")
    assert "/var/run/docker.sock" in replay["container"]["options"]
    steps = replay["steps"]
    (download,) = [s for s in steps if s.get("uses", "").startswith("actions/download-artifact@")]
    (run,) = [s for s in steps if "run" in s]
    (publish,) = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert download["with"]["name"] == "capsule"  # the name the test job wrote
    assert run["env"]["REPLAY_CAPSULE"] == f"{download['with']['path']}/capsule.json"
    assert run["run"].endswith("replay-job.sh") and (CI / "replay-job.sh").is_file()
    assert publish["if"] == "always()" and publish["with"]["path"] == run["env"]["REPLAY_OUT"]
    assert steps.index(download) < steps.index(run) < steps.index(publish)


def test_the_gitlab_replay_job_runs_on_failure_with_the_test_jobs_capsule() -> None:
    doc = gitlab()
    test = doc["test"]
    assert any("replay capture --only-on-failure -o capsule.json --" in line for line in test["script"])
    assert test["artifacts"]["when"] == "on_failure" and test["artifacts"]["paths"] == ["capsule.json"]
    job = doc["replay:failure"]
    assert job["when"] == "on_failure" and job["needs"] == [{"job": "test", "artifacts": True}]
    assert job["variables"]["REPLAY_CAPSULE"] in test["artifacts"]["paths"]
    assert job["artifacts"]["reports"]["junit"] == "$REPLAY_OUT/replay.xml" and job["script"] == ["replay-job.sh"]
    assert doc["stages"].index(test["stage"]) < doc["stages"].index(job["stage"])


def test_the_replay_job_writes_the_step_summary() -> None:
    script = (CI / "replay-job.sh").read_text()
    assert "replay ci summary" in script and "GITHUB_STEP_SUMMARY" in script


# -- templates that work as copied (issue 31) --------------------------------------------------

def _pip_lines() -> list[tuple[str, str]]:
    """Every line of the templates' steps that runs pip, with where it is."""
    lines = []
    for path in (CI / "github/workflows/replay.yml", CI / "gitlab/replay.gitlab-ci.yml", CI / "github/action.yml"):
        doc = yaml.safe_load(path.read_text())
        for text in _scripts(doc):
            lines += [(path.name, line) for line in text.splitlines() if "pip install" in line]
    return lines


def _scripts(node: object) -> list[str]:
    """The shell text of a parsed CI file: GitHub `run:` values, GitLab `script`-like lists."""
    if isinstance(node, dict):
        found = []
        for key, value in node.items():
            if key == "run" and isinstance(value, str):
                found.append(value)
            elif key in ("script", "before_script", "after_script") and isinstance(value, list):
                found += [str(v) for v in value]
            else:
                found += _scripts(value)
        return found
    if isinstance(node, list):
        return [s for item in node for s in _scripts(item)]
    return []


def test_every_install_line_names_the_real_distribution() -> None:
    """`pip install replay` fetches an unrelated project, and `replay @ git+...` makes pip refuse
    the checkout ("inconsistent name"): the name is pyproject's, replay-runner."""
    import tomllib

    name = tomllib.loads((CI.parent / "pyproject.toml").read_text())["project"]["name"]
    lines = _pip_lines()
    assert len(lines) == 3, lines  # the GitHub test job, the GitLab test job, the action
    for where, line in lines:
        requirement = re.search(r"pip install (?:--quiet )?\"([^\"]+)\"", line)
        assert requirement, f"{where}: {line}"
        spec = requirement.group(1)
        assert spec.startswith(f"{name} @ git+") or spec.startswith("$GITHUB_ACTION_PATH/"), f"{where}: {spec}"
        assert not re.search(r"pip install (--quiet )?[\"']?replay\b(?!-runner)", line), f"{where}: {line}"


HOST_PATHS = re.compile(r"\$\{\{[^}]*\bgithub\.(workspace|action_path)\b")


def test_container_jobs_name_the_workspace_as_the_container_sees_it() -> None:
    """In a container job `${{ github.workspace }}` (and `github.action_path`) is the host's path
    (actions/runner#2058); the steps read $GITHUB_WORKSPACE at run time instead."""
    jobs = workflow()["jobs"]
    in_containers = [job for job in jobs.values() if "container" in job]
    assert in_containers
    for job in in_containers:
        assert not HOST_PATHS.search(yaml.safe_dump(job["steps"]))
    (run,) = [s for s in jobs["replay"]["steps"] if "run" in s]
    assert "REPLAY_REPO" not in run["env"] and 'REPLAY_REPO="$GITHUB_WORKSPACE"' in run["run"]
    # the action may run in a container job too
    action = (CI / "github/action.yml").read_text()
    assert not HOST_PATHS.search(action)
    assert 'REPLAY_REPO="${REPLAY_REPO:-$GITHUB_WORKSPACE}"' in action


def test_the_gitlab_test_job_installs_replay_into_a_venv_not_the_system_python() -> None:
    """node:20 has python3 but no pip, and PEP 668 refuses a system pip install: the template makes
    a venv (tests/integration/test_ci_templates.py runs it in a stand-in for node:20)."""
    text = "\n".join(gitlab()["test"]["before_script"])
    assert "python3-venv" in text and "python3 -m venv" in text
    assert "python3 -m pip install" not in text and "--break-system-packages" not in text


# -- a version that exists, and a reproduce-here line that names the repository (issue 40) -------

def _revisions() -> list[tuple[str, str]]:
    """(where, revision) of every replay the templates install or use: `@REV` of the install lines'
    git URLs and of the workflow's `uses: .../ci/github@REV`."""
    found = []
    for where, line in _pip_lines():
        m = re.search(r"git\+\S+@([^\"\s]+)\"", line)
        if m:
            found.append((where, m.group(1)))
    for step in (s for job in workflow()["jobs"].values() for s in job.get("steps", [])):
        if str(step.get("uses", "")).startswith("your-org/replay/"):
            found.append(("replay.yml", step["uses"].rpartition("@")[2]))
    return found


def test_the_templates_install_a_commit_this_repository_has() -> None:
    """`@v1` was a tag that never existed: each template pins a commit of replay's own history
    (what `git clone` of any copy of replay holds), never a branch or a tag someone must make."""
    root = CI.parent
    revisions = _revisions()
    assert len(revisions) == 4, revisions  # two install lines, two `uses:` of the action
    for where, rev in revisions:
        assert re.fullmatch(r"[0-9a-f]{40}", rev), f"{where}: {rev!r} is not a pinned commit"
        has = subprocess.run(["git", "cat-file", "-e", f"{rev}^{{commit}}"], cwd=root, capture_output=True)
        assert has.returncode == 0, f"{where}: commit {rev} is not in this repository"
        ancestor = subprocess.run(["git", "merge-base", "--is-ancestor", rev, "HEAD"], cwd=root, capture_output=True)
        assert ancestor.returncode == 0, f"{where}: commit {rev} is not in this branch's history"


def test_the_pinned_commit_runs_the_job_scripts_this_tree_documents() -> None:
    """The action at the pinned commit runs that commit's job scripts: pinned before a change to them
    (a `--repo-url` the docs describe), the templates would run the old ones. Move the pin when they change."""
    root = CI.parent
    for where, rev in _revisions():
        for script in ("ci/replay-job.sh", "ci/pr-job.sh", "ci/github/action.yml"):
            pinned = subprocess.run(["git", "show", f"{rev}:{script}"], cwd=root, capture_output=True, text=True)
            assert pinned.returncode == 0, f"{where}: {script} is not at {rev}"
            assert pinned.stdout == (root / script).read_text(), f"{where}: {script} changed since {rev[:12]}: move the pin"


def _job_args(tmp_path: Path, env: dict[str, str]) -> list[str]:
    """replay-job.sh run as copied, with a `replay` on PATH that records its arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "replay"
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$*" >> "$ARGS_LOG"\n')
    fake.chmod(0o755)
    log = tmp_path / "args.log"
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_", "REPLAY_"))}
    proc = subprocess.run(["bash", str(CI / "replay-job.sh"), "capsule.json"], cwd=tmp_path, capture_output=True,
                          text=True, env={**clean, "PATH": f"{bin_dir}:{clean['PATH']}", "ARGS_LOG": str(log), **env})
    assert proc.returncode == 0, proc.stderr
    return log.read_text().splitlines()


@pytest.mark.parametrize(("ci_env", "url"), [
    ({"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/app"}, "https://github.com/acme/app"),
    ({"CI_PROJECT_URL": "https://gitlab.example.com/acme/app"}, "https://gitlab.example.com/acme/app"),
    ({"GITHUB_REPOSITORY": "acme/app", "REPLAY_REPO_URL": "https://git.example.com/acme/app.git"},
     "https://git.example.com/acme/app.git"),
])
def test_the_replay_jobs_reproduce_here_line_names_the_repository_not_the_jobs_path(
        tmp_path: Path, ci_env: dict[str, str], url: str) -> None:
    farm_run = _job_args(tmp_path, {**ci_env, "REPLAY_REPO": "/__w/app/app"})[0]
    assert farm_run.startswith("farm run capsule.json --repo /__w/app/app --repo-url ") and url in farm_run.split()


def test_without_a_ci_the_replay_job_leaves_the_reproduce_here_line_as_given(tmp_path: Path) -> None:
    assert "--repo-url" not in _job_args(tmp_path, {"REPLAY_REPO": "/srv/app"})[0]
