"""A value supplied with --env never lands in an image layer, its history, a label, the
cache, a log or a report, even when the program prints it; nor in a farm's history and
its reports, where what twin's secret rules catch (a recorded value nobody scrubbed) is
scrubbed too."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from runner.config import Settings

from tests.integration.helpers import (
    ROOT, SUPPLIED_NAME, assert_no_marker, own_image_repo, secret_marker, secret_printer, token_marker,
)

pytestmark = pytest.mark.integration


def replay_cli(*args: str | Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """`replay ARGS` as its own process: what a terminal or a CI log would get."""
    return subprocess.run([sys.executable, "-m", "runner", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def test_a_supplied_secret_is_nowhere_but_in_the_run(engine: Any, tmp_path: Path) -> None:
    marker = secret_marker()
    # the program prints the secret and fails on it: judged on what it printed, reported without it
    capsule = secret_printer(tmp_path / "capsule.json")
    proc = replay_cli(capsule, "-n", "1", "-v", "--json", "--env", f"{SUPPLIED_NAME}={marker}")
    data = json.loads(proc.stdout)
    report = data["result"]
    assert data["exit_code"] in (0, 1), proc.stderr[-2000:]
    assert report["attempts"][0]["exit_code"] == 3  # the run got the value
    assert "token=[supplied value]" in report["attempts"][0]["output_tail"]
    assert_no_marker([marker], {"stdout": proc.stdout, "stderr": proc.stderr})
    image = report["image"]["ref"]
    saved = subprocess.run(["docker", "save", image], capture_output=True, timeout=300).stdout
    assert saved and marker.encode() not in saved
    history = subprocess.run(["docker", "history", "--no-trunc", image], capture_output=True, text=True).stdout
    inspect = subprocess.run(["docker", "image", "inspect", image], capture_output=True, text=True).stdout
    assert marker not in history + inspect
    hits = subprocess.run(["grep", "-rl", marker, str(Settings().cache_dir)], capture_output=True, text=True)
    assert hits.stdout == ""


def test_a_farm_night_keeps_no_secret_in_its_history_reports_or_output(engine: Any, tmp_path: Path) -> None:
    supplied, recorded = secret_marker(), token_marker()
    folder = tmp_path / "capsules"
    folder.mkdir()
    secret_printer(folder / "prints-secrets.json", recorded_token=recorded)
    db, html, junit = tmp_path / "farm.sqlite", tmp_path / "farm.html", tmp_path / "farm.xml"
    with own_image_repo(engine, "replay-test-farm-secrets"):
        night = replay_cli("farm", "run", folder, "--db", db, "-n", "1", "--max-attempts", "1", "--json",
                           "--env", f"{SUPPLIED_NAME}={supplied}")
        plain = replay_cli("farm", "run", folder, "--db", db, "-n", "1", "--max-attempts", "1",
                           "--env", f"{SUPPLIED_NAME}={supplied}")  # the text view and the progress lines
        data = json.loads(night.stdout)
        assert data["exit_code"] == 0 and plain.returncode == 0, night.stderr[-2000:] + plain.stderr[-2000:]
        result = data["result"]["results"][0]
        assert [a["exit_code"] for a in result["attempts"]] == [3]  # the run got the supplied value
        assert any("<redacted:github-token>" in line for line in result["key_lines"]), result["key_lines"]
        digest = result["image_digest"]
        report = replay_cli("farm", "report", "--db", db, "--html", html, "--junit", junit, "--json")
        text = replay_cli("farm", "report", "--db", db)
        history = replay_cli("farm", "history", folder / "prints-secrets.json", "--db", db, "--json")
        assert report.returncode == text.returncode == history.returncode == 0, report.stderr + history.stderr
        image = subprocess.run(["docker", "history", "--no-trunc", digest], capture_output=True, text=True).stdout + \
            subprocess.run(["docker", "image", "inspect", digest], capture_output=True, text=True).stdout
    places: dict[str, bytes | str] = {p.name: p.read_bytes() for p in tmp_path.glob("farm.sqlite*")}
    places |= {"html": html.read_bytes(), "junit": junit.read_bytes(), "image history and inspect": image}
    for name, proc in {"farm run --json": night, "farm run": plain, "farm report --json": report,
                       "farm report": text, "farm history --json": history}.items():
        places |= {f"{name} stdout": proc.stdout, f"{name} stderr": proc.stderr}
    assert "farm.sqlite" in places
    assert_no_marker([supplied, recorded], places)
