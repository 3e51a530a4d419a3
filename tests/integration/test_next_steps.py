"""Every command line replay prints as the next step works as printed (issue 40): `replay diff`'s
next command, copied into a shell as it is, runs and answers on the real engine."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.bisecting import BUNDLE, tz_pair
from tests.integration.helpers import ROOT

pytestmark = pytest.mark.integration


def _shell_env() -> dict[str, str]:
    """A shell where `replay` is this checkout's console script, as a user's install has it."""
    scripts = Path(sys.executable).parent
    assert (scripts / "replay").exists(), "the console script is installed beside the interpreter"
    return {**os.environ, "PATH": f"{scripts}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT),
            "COLUMNS": "200"}


def test_the_next_command_diff_prints_runs_as_printed(tmp_path: Path) -> None:
    bad, good = tz_pair(tmp_path / "pair", build_facts=False)
    diff = subprocess.run([sys.executable, "-m", "runner", "diff", str(bad), str(good), "--repo", str(BUNDLE),
                           "--json"], capture_output=True, text=True, timeout=300, env=_shell_env(), cwd=tmp_path)
    assert diff.returncode == 1, diff.stderr  # they differ
    step = json.loads(diff.stdout)["result"]["next"]
    assert step["argv"][:2] == ["replay", "bisect"] and "PATH_OR_URL" not in step["command"], step
    text = subprocess.run([sys.executable, "-m", "runner", "diff", str(bad), str(good), "--repo", str(BUNDLE)],
                          capture_output=True, text=True, timeout=300, env=_shell_env(), cwd=tmp_path).stdout
    assert step["command"] in text  # the line a user copies is the one --json names
    ran = subprocess.run(["bash", "-c", step["command"]], capture_output=True, text=True, timeout=1800,
                         env=_shell_env(), cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]  # found
    assert "TZ" in ran.stdout, ran.stdout
