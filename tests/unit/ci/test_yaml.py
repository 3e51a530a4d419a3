"""The CI files validate against the published GitHub workflow/action and GitLab CI schemas
(check-jsonschema vendors them: offline), and call the scripts that exist."""
from __future__ import annotations

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
    assert run["run"] == "replay-job.sh" and (CI / "replay-job.sh").is_file()
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
