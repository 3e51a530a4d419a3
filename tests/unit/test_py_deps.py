"""templates/scripts/py-deps.py, the build's Python drift helper, run with this interpreter
(report mode and the uv project sync's arguments: nothing is installed)."""
from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from runner.resources import templates_dir

SCRIPT = templates_dir() / "scripts" / "py-deps.py"


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60)


def test_drift_is_what_differs_from_the_installed_versions_and_merges_with_node_drift(tmp_path: Path) -> None:
    typer = metadata.version("typer")
    pins = tmp_path / "pins.txt"
    # typer differs, Jinja2 (PEP 503 name) matches, the project itself is not installed: left alone
    pins.write_text(f"typer==0.0.1\njinja2=={metadata.version('jinja2')}\nmy-project==1.0\n")
    drift = tmp_path / "drift.json"
    drift.write_text(json.dumps({"mode": "pin", "drift": [{"name": "lodash", "recorded": "1", "installed": "2"}]}))
    proc = run("pin", pins, drift, "report", "yes")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(drift.read_text()) == {"mode": "pin", "python_mode": "report", "drift": [
        {"name": "lodash", "recorded": "1", "installed": "2"},
        {"name": "typer", "recorded": "0.0.1", "installed": typer, "ecosystem": "python"}]}
    assert "1 Python package(s) drifted" in proc.stdout


def test_bad_arguments_exit_2() -> None:
    assert run("pin", "only-one").returncode == 2
