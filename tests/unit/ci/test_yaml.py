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
