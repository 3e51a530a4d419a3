"""`replay CAPSULE` end to end against the real Docker engine (issue 3).

Each test builds (or reuses) a real image and runs real containers; `-n 1` unless
the test is about attempts. The first run downloads Node 22 (~30 MB) into
~/.cache/replay; later runs reuse it and the engine's build cache.
"""
from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from runner.build.sources.baseimage import DEFAULT, base_ref, ensure_base
from runner.config import Settings

from tests.integration.helpers import (NOVA, ROOT, TZ_CLOCK, clone_tz_clock, env_facts, git, git_repo, replay, replay_error,
                      repo_fact, twin_capsule, write_json)

pytestmark = pytest.mark.integration

CASES = ROOT / "tests" / "cases" / "replay"
TZ_CAPSULE = TZ_CLOCK / "capsule.json"
BUNDLE = TZ_CLOCK / "repo.bundle"
SEALED = NOVA / "01JC4Q7W9Z2M5N8P3R6T1V0X4B"


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")


def tz_variant(tmp_path: Path, change: Callable[[dict[str, Any]], None], name: str = "capsule.json") -> Path:
    """A copy of the tz-clock capsule with one change."""
    data = json.loads(TZ_CAPSULE.read_text())
    change(data)
    return write_json(tmp_path / name, data)


def recorded_pass(data: dict[str, Any]) -> None:
    data["command"].update(exitCode=0, outcome="pass", failure=None)


# -- 1. time zone --------------------------------------------------------------

def test_tz_clock_reproduces_under_new_york_with_the_recorded_signature(engine: object,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    recorded = json.loads(TZ_CAPSULE.read_text())["command"]["failure"]["signature"]
    rc, report = replay(capsys, TZ_CAPSULE, "--repo", BUNDLE, "-n", "1")
    assert (rc, report["verdict"]) == (0, "reproduced")
    assert report["expected"]["signature"] == recorded
    assert [(a["exit_code"], a["signature"], a["classification"]) for a in report["attempts"]] == [
        (1, recorded, "recorded")]
    assert "'2025-12-31'" in report["attempts"][0]["output_tail"]


def test_tz_clock_passes_under_utc(engine: object, capsys: pytest.CaptureFixture[str]) -> None:
    rc, report = replay(capsys, TZ_CAPSULE, "--repo", BUNDLE, "-n", "1", "--env", "TZ=UTC")
    assert (rc, report["verdict"]) == (1, "not-reproduced")
    assert [(a["exit_code"], a["classification"]) for a in report["attempts"]] == [(0, "pass")]
    tz_rows = [f for f in report["fidelity"] if f["fact"] == "env TZ"]
    assert [(r["replayed"], r["why"]) for r in tz_rows] == [("(supplied)", "overridden with --env")]


# -- 2. a pinned Python package ------------------------------------------------

@pytest.fixture(scope="module")
def six_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("six") / "repo"
    commit = git_repo(path, {"check.py": (CASES / "six-pin" / "check.py").read_text()})
    return path, commit


@pytest.mark.parametrize("six, exit_code", [("1.16.0", 1), ("1.17.0", 0)])
def test_the_pinned_python_package_drives_the_outcome(engine: object, capsys: pytest.CaptureFixture[str],
                                                      tmp_path: Path, six_repo: tuple[Path, str],
                                                      six: str, exit_code: int) -> None:
    repo, commit = six_repo
    # What the recorder saw: check.py's real output on the failing version (a pass records none).
    output = (CASES / "six-pin" / "output-1.16.0.txt").read_text() if exit_code else ""
    capsule = write_json(tmp_path / "capsule.json", twin_capsule(
        ["python3", "check.py"], output, exit_code, python="3.11.2", resolved_python={"six": six},
        repo=repo_fact(str(repo), commit), env=env_facts(PYTHONPATH=None)))
    rc, report = replay(capsys, capsule, "-n", "1")
    assert (rc, report["verdict"]) == (0, "reproduced"), report["attempts"]
    attempt = report["attempts"][0]
    assert attempt["exit_code"] == exit_code
    assert attempt["stdout"].startswith(f"six {six}\n")
    if exit_code:
        assert report["expected"]["signature_source"] == "recorded"
        assert attempt["signature"] == json.loads(capsule.read_text())["command"]["failure"]["signature"]
    rows = {f["fact"]: f for f in report["fidelity"]}
    assert rows["runtime python"]["status"] == "exact"
    assert rows["platform distro"]["replayed"] == "debian 12 (bookworm)"


# -- 3. the recorded diff ------------------------------------------------------

@pytest.fixture(scope="module")
def utc_fix_diff(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A real `git diff HEAD --binary` fixing isoDay to use the UTC getters."""
    clone = clone_tz_clock(tmp_path_factory.mktemp("tzc") / "tz-clock")
    dates = clone / "src" / "dates.js"
    fixed = dates.read_text()
    for getter in ("FullYear", "Month", "Date"):
        fixed = fixed.replace(f"d.get{getter}()", f"d.getUTC{getter}()")
    assert fixed != dates.read_text()
    dates.write_text(fixed)
    return git(clone, "diff", "HEAD", "--binary")


def test_a_recorded_diff_is_applied(engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                    utc_fix_diff: str) -> None:
    def dirty_pass(d: dict[str, Any]) -> None:
        recorded_pass(d)
        d["repo"].update(dirty=True, diff=utc_fix_diff)

    rc, report = replay(capsys, tz_variant(tmp_path, dirty_pass), "--repo", BUNDLE, "-n", "1")
    assert (rc, report["verdict"]) == (0, "reproduced"), report["attempts"]
    assert [a["exit_code"] for a in report["attempts"]] == [0]
    assert not any("diff applied" in n for n in report["notes"])


def test_without_the_diff_the_recorded_pass_is_not_reproduced(engine: object, capsys: pytest.CaptureFixture[str],
                                                              tmp_path: Path) -> None:
    rc, report = replay(capsys, tz_variant(tmp_path, recorded_pass), "--repo", BUNDLE, "-n", "1")
    assert (rc, report["verdict"]) == (1, "not-reproduced")
    assert [(a["exit_code"], a["classification"]) for a in report["attempts"]] == [(1, "other")]


# -- 4. NovaFabric -------------------------------------------------------------

def test_the_sealed_novafabric_example_reproduces_its_stdout(engine: object,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    rc, report = replay(capsys, SEALED, "-n", "1")
    assert (rc, report["verdict"]) == (0, "reproduced")
    assert report["expected"]["stdout"] == "3 the\n2 and\n1 bat\n"
    assert [(a["stdout"], a["classification"]) for a in report["attempts"]] == [("3 the\n2 and\n1 bat\n", "recorded")]
    assert report["verification"]["valid"] is True
    assert report["verification"]["sealed"] is True


def test_a_trusted_key_makes_the_verification_trusted(engine: object, capsys: pytest.CaptureFixture[str]) -> None:
    rc, report = replay(capsys, SEALED, "-n", "1", "--trust-key", NOVA / "dana-p256.pub.pem")
    assert (rc, report["verdict"]) == (0, "reproduced")
    assert report["verification"]["valid"] is True
    assert report["verification"]["trusted"] is True


def test_a_novafabric_capsule_without_source_needs_source(engine: object, capsys: pytest.CaptureFixture[str]) -> None:
    rc, errors = replay_error(capsys, NOVA / "minimal-run", "-n", "1")
    assert rc == 2
    assert len(errors) == 1
    assert "--source" in errors[0] and "minimal-run" in errors[0]


# -- 5. the lockfile hash ------------------------------------------------------

def test_a_lockfile_hash_mismatch_stops_the_build(engine: object, capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path) -> None:
    real = json.loads(TZ_CAPSULE.read_text())["packageManagers"][0]["lockfileSha256"]
    wrong = hashlib.sha256(b"not the lockfile").hexdigest()

    def tamper(d: dict[str, Any]) -> None:
        d["packageManagers"][0]["lockfileSha256"] = wrong

    rc, errors = replay_error(capsys, tz_variant(tmp_path, tamper), "--repo", BUNDLE, "-n", "1")
    assert rc == 3
    assert len(errors) == 1
    assert wrong in errors[0] and real in errors[0] and "package-lock.json" in errors[0]


# -- 6. absent variables the image sets ----------------------------------------

@pytest.fixture
def made_images(engine: Any) -> Iterator[list[str]]:
    """Images a test makes only for itself: removed afterwards, newest first."""
    made: list[str] = []
    yield made
    for ref in reversed(made):
        engine.client.images.remove(ref, force=True)


@pytest.fixture
def base_setting_env(engine: Any, monkeypatch: pytest.MonkeyPatch, made_images: list[str]) -> str:
    """A base repo whose bookworm image sets LANG and FROM_IMAGE (removed afterwards)."""
    real = ensure_base(engine, Settings(), DEFAULT)
    repo = f"replay-test-{uuid.uuid4().hex[:8]}/debian"
    ref = base_ref(Settings(base_repo=repo), DEFAULT)
    engine.client.images.build(path=str(CASES / "env-absent"), tag=ref, buildargs={"BASE": real},
                               labels={"replay": "test"}, rm=True, forcerm=True)
    made_images.append(ref)
    monkeypatch.setenv("REPLAY_BASE_REPO", repo)
    return ref


def test_an_absent_variable_the_image_sets_is_unset(engine: Any, base_setting_env: str, made_images: list[str],
                                                    capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert {"LANG": "C.UTF-8", "FROM_IMAGE": "1"}.items() <= engine.image_env(base_setting_env).items()
    check = (CASES / "env-absent" / "check.py").read_text()
    capsule = write_json(tmp_path / "capsule.json", twin_capsule(
        ["python3", "-c", check], "", 0, env=env_facts(LANG=None, FROM_IMAGE=None)))
    (tmp_path / "src").mkdir()
    rc, report = replay(capsys, capsule, "-n", "1", "--source", tmp_path / "src")
    made_images.append(report["image"]["ref"])
    assert report["image"]["built"] is True
    assert (rc, report["verdict"]) == (0, "reproduced"), report["attempts"]
    assert report["attempts"][0]["stdout"] == "present: none\n"
    # The control: recorded without the two facts, the image's values leak into the run.
    unrecorded = write_json(tmp_path / "unrecorded.json", twin_capsule(["python3", "-c", check], "", 0))
    rc, report = replay(capsys, unrecorded, "-n", "1", "--source", tmp_path / "src")
    assert (rc, report["verdict"]) == (1, "not-reproduced")
    assert report["attempts"][0]["stdout"] == "present: LANG,FROM_IMAGE\n"


# -- 8. the image cache --------------------------------------------------------

def test_a_second_replay_builds_nothing(engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                        made_images: list[str]) -> None:
    # A never-seen source (a unique comment at the end of the test file, which moves no
    # line of the recorded stack trace) so that the first replay really builds.
    clone = clone_tz_clock(tmp_path / "tz-clock")
    with (clone / "test" / "dates.test.js").open("a") as fh:
        fh.write(f"// nonce {uuid.uuid4().hex}\n")
    nonce_diff = git(clone, "diff", "HEAD", "--binary")
    capsule = tz_variant(tmp_path, lambda d: d["repo"].update(dirty=True, diff=nonce_diff))
    rc1, first = replay(capsys, capsule, "--repo", BUNDLE, "-n", "1")
    made_images.append(first["image"]["ref"])
    rc2, second = replay(capsys, capsule, "--repo", BUNDLE, "-n", "1")
    assert (rc1, first["verdict"], first["image"]["built"]) == (0, "reproduced", True)
    assert (rc2, second["verdict"], second["image"]["built"]) == (0, "reproduced", False)
    assert second["image"]["ref"] == first["image"]["ref"]
    assert not any(step["name"].startswith("build image") for step in second["steps"])


def test_shell_opens_the_replayed_environment(engine: object) -> None:
    """`replay shell`: the recorded environment, the restored source, no network; commands from stdin."""
    import subprocess
    import sys

    script = ('echo "TZ=$TZ LANG=$LANG CI=${CI-unset}"; node --version; ls /work/repo/src; '
              'getent hosts pypi.org || echo offline; grep NoNewPrivs /proc/self/status | tr -d "\\t"; '
              'cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max 2>/dev/null | head -1\n')
    proc = subprocess.run([sys.executable, "-m", "runner", "shell", str(TZ_CAPSULE), "--repo", str(BUNDLE)],
                          input=script, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # the same containment as an attempt: no new privileges, the pids limit
    assert proc.stdout.splitlines() == ["TZ=America/New_York LANG=en_US.UTF-8 CI=unset", "v22.23.3", "dates.js", "offline",
                                        "NoNewPrivs:1", "4096"]
