"""Reports people read and verdicts to trust, on the real engine: the bundled example's
default report through the real CLI, and `--patch` judged against the unpatched run."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.integration.helpers import ROOT, TZ_CLOCK, clone_tz_clock, git, replay

pytestmark = pytest.mark.integration

TZ_CAPSULE = TZ_CLOCK / "capsule.json"
BUNDLE = TZ_CLOCK / "repo.bundle"
BOX = set("─│┃━┏┓┗┛┡┩└┘├┤┬┴┼╇╋")


def _replay(*args: str, columns: str | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI as a user runs it, piped (so: plain text)."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | ({"COLUMNS": columns} if columns else {})
    return subprocess.run([sys.executable, "-m", "runner", *args], capture_output=True, text=True, timeout=900,
                          cwd=ROOT, env=env)


def test_the_bundled_examples_one_attempt_report_is_short_and_ends_with_the_whole_verdict(engine: object) -> None:
    """`replay examples/tz-clock/capsule.json --repo examples/tz-clock/repo.bundle -n 1` in a pipe: the
    capsule, the steps in one line, no fact that could not have changed the outcome, the verdict last."""
    args = (str(TZ_CAPSULE), "--repo", str(BUNDLE), "-n", "1")
    proc = _replay(*args)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert len(lines) <= 6, proc.stdout
    assert lines[0].endswith(f"capsule {TZ_CAPSULE} (d0f03b168058c2b0): valid") and lines[1].startswith("steps: ")
    summary = json.loads(_replay(*args, "--json").stdout)["result"]["summary"]
    assert summary.startswith("REPRODUCED: 1/1 attempts failed as recorded (exit1:") and lines[-1] == summary
    assert "host-specific" not in proc.stdout and "does not need it" not in proc.stdout
    assert "env TZ" not in proc.stdout and not set(proc.stdout) & BOX
    narrow = _replay(*args, columns="60").stdout.splitlines()  # too narrow: broken between clauses only
    assert " ".join(narrow[-2:]) == summary and narrow[-2].endswith(";")
    for every in ("-v", "--all"):
        full = _replay(*args, every, columns="100")
        assert full.returncode == 0 and "env TZ" in full.stdout and "as recorded?" in full.stdout, full.stdout


def test_no_line_of_the_real_report_splits_a_sha_at_60_columns(engine: object) -> None:
    commit = json.loads(TZ_CAPSULE.read_text())["repo"]["commit"]
    proc = subprocess.run([sys.executable, "-m", "runner", str(TZ_CAPSULE), "--repo", str(BUNDLE), "-n", "1", "--all"],
                          capture_output=True, text=True, timeout=900, cwd=ROOT, env={**os.environ, "COLUMNS": "60"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert commit[:12] in proc.stdout and commit[12:20] not in proc.stdout  # the short form, whole
    lines = proc.stdout.splitlines()
    clauses = {c.rstrip(";") for c in " ".join(lines[-2:]).split("; ")}  # the verdict's: whole, even past 60
    assert all(len(line) <= 60 for line in lines if line.rstrip(";") not in clauses), proc.stdout
    runs = re.findall(r"(?<![0-9a-f])[0-9a-f]{7,}", proc.stdout)
    assert runs and all(commit.startswith(r) or len(r) in (12, 16) for r in runs), runs


@pytest.fixture(scope="module")
def placebo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real `git diff` that changes a comment only: it cannot fix anything."""
    tmp = tmp_path_factory.mktemp("placebo")
    clone = clone_tz_clock(tmp / "tz-clock")
    dates = clone / "src" / "dates.js"
    dates.write_text(dates.read_text().replace("Bug:", "Known bug:"))
    out = tmp / "placebo.diff"
    out.write_text(git(clone, "diff", "HEAD", "--binary"))
    assert out.read_text().strip()
    return out


def test_a_placebo_patch_where_the_failure_does_not_reproduce_is_inconclusive(
        engine: object, capsys: pytest.CaptureFixture[str], placebo: Path) -> None:
    """In UTC the recorded failure does not come back: passing with the patch proves nothing
    (before the baseline run, this said `fixed`)."""
    rc, report = replay(capsys, TZ_CAPSULE, "--repo", BUNDLE, "-n", "1", "--env", "TZ=UTC", "--patch", placebo)
    assert (rc, report["verdict"]) == (1, "inconclusive")
    assert [a["classification"] for a in report["attempts"]] == ["pass"]  # the patched run passed...
    assert report["baseline"]["verdict"] == "not-reproduced"  # ...and so did the unpatched one
    assert [a["exit_code"] for a in report["baseline"]["attempts"]] == [0]
    assert report["summary"].startswith("INCONCLUSIVE: the unpatched source did not reproduce the failure")


def test_a_placebo_patch_where_the_failure_reproduces_is_not_fixed(
        engine: object, capsys: pytest.CaptureFixture[str], placebo: Path) -> None:
    rc, report = replay(capsys, TZ_CAPSULE, "--repo", BUNDLE, "-n", "1", "--patch", placebo)
    assert (rc, report["verdict"], report["baseline"]["verdict"]) == (1, "not-fixed", "reproduced")
    assert report["summary"] == ("NOT-FIXED: 1/1 attempts with the patch still failed as recorded "
                                 "(the unpatched source: 1/1 failed as recorded, at least 21 % (95 %)).")


def test_the_patched_image_rebuilds_only_the_source(engine: object, capsys: pytest.CaptureFixture[str],
                                                    tmp_path: Path) -> None:
    """The unpatched run's image is the plain replay's; the patched one differs in the source
    layer only, so a patch never seen before costs a few build steps, not a build."""
    clone = clone_tz_clock(tmp_path / "tz-clock")
    dates = clone / "src" / "dates.js"
    dates.write_text(dates.read_text().replace("Bug:", f"Bug ({uuid.uuid4().hex}):"))
    fresh = tmp_path / "fresh.diff"
    fresh.write_text(git(clone, "diff", "HEAD", "--binary"))
    rc, report = replay(capsys, TZ_CAPSULE, "--repo", BUNDLE, "-n", "1", "--patch", fresh)
    assert (rc, report["verdict"]) == (1, "not-fixed")
    assert report["image"]["built"] is True and 0 < report["image"]["steps_run"] <= 4, report["image"]
    assert any(s["name"] == "the unpatched source: attempt 1/1" for s in report["steps"])
