"""A value supplied with --env never lands in an image layer, its history, a label, the
cache, a log or a report, even when the program prints it."""
from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from runner.config import Settings

from .helpers import ROOT, twin_capsule, write_json

pytestmark = pytest.mark.integration


def test_a_supplied_secret_is_nowhere_but_in_the_run(engine: Any, tmp_path: Path) -> None:
    marker = f"s3cr3t-{uuid.uuid4().hex}"
    # the program prints the secret and fails on it: judged on what it printed, reported without it
    argv = ["sh", "-c", 'echo "token=$API_TOKEN"; test -n "$API_TOKEN" && exit 3']
    capsule = write_json(tmp_path / "capsule.json", twin_capsule(argv, "token=[supplied value]\n", 3))
    proc = subprocess.run([sys.executable, "-m", "runner", str(capsule), "-n", "1", "-v", "--json",
                           "--env", f"API_TOKEN={marker}"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    data = json.loads(proc.stdout)
    report = data["result"]
    assert data["exit_code"] in (0, 1), proc.stderr[-2000:]
    assert report["attempts"][0]["exit_code"] == 3  # the run got the value
    assert "token=[supplied value]" in report["attempts"][0]["output_tail"]
    assert marker not in proc.stdout and marker not in proc.stderr
    image = report["image"]["ref"]
    saved = subprocess.run(["docker", "save", image], capture_output=True, timeout=300).stdout
    assert saved and marker.encode() not in saved
    history = subprocess.run(["docker", "history", "--no-trunc", image], capture_output=True, text=True).stdout
    inspect = subprocess.run(["docker", "image", "inspect", image], capture_output=True, text=True).stdout
    assert marker not in history + inspect
    hits = subprocess.run(["grep", "-rl", marker, str(Settings().cache_dir)], capture_output=True, text=True)
    assert hits.stdout == ""
