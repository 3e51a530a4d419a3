"""templates/scripts/npm-deps.js, the helper replay runs inside npm builds (needs node here)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "templates" / "scripts" / "npm-deps.js"
NODE = shutil.which("node")
# Skipped only on a developer machine without node; in CI (REPLAY_REQUIRE_ENGINE=1) it must run.
pytestmark = pytest.mark.skipif(NODE is None and os.environ.get("REPLAY_REQUIRE_ENGINE") != "1",
                                reason="node is not installed here")


def _root_runs(scripts: dict[str, str]) -> list[str]:
    code = f"console.log(JSON.stringify(require({json.dumps(str(SCRIPT))}).rootRuns({json.dumps(scripts)})))"
    return json.loads(subprocess.run([NODE or "node", "-e", code], capture_output=True, text=True, check=True).stdout)


@pytest.mark.parametrize("names, runs", [
    # `npm run install` runs preinstall and postinstall itself: each script once.
    (["preinstall", "install", "postinstall"], ["install"]),
    # Without `install`, its pre and post scripts still run, as `npm ci` runs them.
    (["postinstall", "preinstall"], ["preinstall", "postinstall"]),
    (["postprepare", "prepare", "prepublish", "postinstall"], ["postinstall", "prepublish", "prepare"]),
    (["preprepare"], ["preprepare"]),
    (["test", "build", "prestart"], []),
])
def test_each_root_lifecycle_script_runs_once_in_npm_ci_order(names: list[str], runs: list[str]) -> None:
    assert _root_runs({name: f"echo {name}" for name in names}) == runs


def test_a_script_that_is_not_a_string_is_not_run() -> None:
    assert _root_runs({"prepare": {"not": "a command"}, "postinstall": "echo ok"}) == ["postinstall"]  # type: ignore[dict-item]


def test_an_unknown_command_exits_2() -> None:
    proc = subprocess.run([NODE or "node", str(SCRIPT), "bogus"], capture_output=True, text=True)
    assert (proc.returncode, proc.stderr.strip()) == (2, "npm-deps.js: unknown command bogus")
