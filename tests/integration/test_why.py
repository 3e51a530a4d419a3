"""The why list names the cause by evidence (issue 38), on real programs in real containers:
a Python program decided by HOME (the capsule does not record HOME), a Node test reading
ZZ_MODE among 20 variables recorded by name only, the quickstart's `--env TZ=UTC` override,
and a flaky `sh` script. Each why list puts the cause first (or "its own randomness") and says
its evidence; the recorded output is each program's own, run here the way it failed there.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from runner.engine import DockerEngine, Mount, RunResult, RunSpec

from tests.integration.helpers import ROOT, TZ_CLOCK, git_repo, replay, repo_fact, twin_capsule, write_json

pytestmark = pytest.mark.integration

CASE = ROOT / "tests" / "cases" / "why"
TZ_NODE = json.loads((TZ_CLOCK / "capsule.json").read_text())["runtimes"]["node"]  # its image's node: cached
CA_NAMES = ("AWS_CA_BUNDLE", "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO",
            "NODE_EXTRA_CA_CERTS", "PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE")


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")


def name_only(*names: str) -> dict[str, dict[str, str]]:
    return {name: {"state": "set"} for name in names}


def run_here(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """The program's real output where it failed: run on this machine with the recorded environment."""
    proc = subprocess.run(argv, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


def first(report: dict[str, Any]) -> dict[str, Any]:
    assert report["why"], report
    return dict(report["why"][0])


def test_a_program_decided_by_home_has_home_first_with_the_line_that_reads_it(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """HOME=/dev/null on the recording machine (the capsule does not record HOME, as capture
    drops it); the container's HOME is a directory, so the run passes here."""
    repo = tmp_path / "repo"
    commit = git_repo(repo, {"settings.py": (CASE / "settings.py").read_text()})
    code, output = run_here([sys.executable, "settings.py"], repo, {"HOME": "/dev/null"})
    assert code == 1 and "Not a directory" in output, output
    capsule = write_json(tmp_path / "capsule.json", twin_capsule(
        ["python3", "settings.py"], output, 1, python="3.11.2", repo=repo_fact(str(repo), commit),
        env=name_only(*CA_NAMES)))
    rc, report = replay(capsys, capsule, "-n", "1")
    assert (rc, report["verdict"]) == (1, "not-reproduced"), report["attempts"]
    home = first(report)
    assert (home["fact"], home["cause"]) == ("env HOME", "env-unrecorded")
    assert home["evidence"].startswith("source: settings.py:4 reads HOME"), home
    assert "tool: python reads HOME" in home["evidence"]
    assert {c["fact"] for c in report["why"]} >= {f"env {n}" for n in CA_NAMES}  # every candidate kept
    assert all(c["score"] < home["score"] for c in report["why"][1:])


def test_a_node_test_reading_zz_mode_among_20_name_only_variables_has_zz_mode_first(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert shutil.which("node"), "the host needs node (scripts/setup)"
    repo = tmp_path / "repo"
    commit = git_repo(repo, {"test/mode.test.js": (CASE / "mode.test.js").read_text()})
    argv = ["node", "--test", "--test-reporter=spec", "test/mode.test.js"]
    code, output = run_here(argv, repo, {"ZZ_MODE": "strict"})
    assert code == 1 and "strict mode rejects" in output, output
    names = (*CA_NAMES, *(f"APP_SETTING_{i}" for i in range(11)), "ZZ_MODE")
    assert len(names) == 20
    data = twin_capsule(argv, output, 1, repo=repo_fact(str(repo), commit), env=name_only(*names))
    data["runtimes"] = {"node": TZ_NODE}
    rc, report = replay(capsys, write_json(tmp_path / "capsule.json", data), "-n", "1")
    assert (rc, report["verdict"]) == (1, "not-reproduced"), report["attempts"]
    zz = first(report)
    assert (zz["fact"], zz["cause"]) == ("env ZZ_MODE", "env-value")
    assert zz["evidence"] == ("source: test/mode.test.js:4 reads ZZ_MODE; capsule: recorded by name only; "
                              "the replay ran without it")
    assert "--env 'ZZ_MODE=…'" in zz["next"]
    assert len([c for c in report["why"] if c["cause"] == "env-value"]) == 20

    from runner.cli.main import main  # the text: the first five and how many more
    main([str(tmp_path / "capsule.json"), "--repo", str(repo), "-n", "1"])
    said = capsys.readouterr().out
    assert "  1. env ZZ_MODE (score 45): source: test/mode.test.js:4 reads ZZ_MODE" in said
    assert "  6. " not in said and f"and {len(report['why']) - 5} more (--all lists them" in said


def test_an_env_override_after_which_the_run_passed_is_named_first(engine: object,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The quickstart's `--env TZ=UTC`: the story starts with the override, not a runtime."""
    rc, report = replay(capsys, TZ_CLOCK / "capsule.json", "--repo", TZ_CLOCK / "repo.bundle", "-n", "1",
                        "--env", "TZ=UTC")
    assert (rc, report["verdict"]) == (1, "not-reproduced")
    tz = first(report)
    assert (tz["cause"], tz["fact"]) == ("change", "env TZ")
    assert tz["evidence"].startswith("--env TZ replaced the recorded TZ (America/New_York)")
    python = next(c for c in report["why"] if c["fact"] == "runtime python")  # the command does not run it
    assert python["score"] < 5


SCHEDULED = ("n=$(cat /schedule/count 2>/dev/null || echo 0); echo $((n + 1)) > /schedule/count; "
             "if [ $((n % 2)) -eq 0 ]; then echo 'Error: unlucky draw'; exit 1; fi; echo ok")


class Scheduled(DockerEngine):
    """The real engine; every container also gets a folder the script counts its runs in, so
    its failures alternate (a coin a test can rely on) while replay sees only a flaky command."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder

    def run(self, spec: RunSpec, on_output: Callable[[bytes], None] | None = None) -> RunResult:
        spec = dataclasses.replace(spec, mounts=(*spec.mounts, Mount(str(self.folder), "/schedule", False)))
        return super().run(spec, on_output)


@pytest.fixture
def scheduled(tmp_path: Path) -> Iterator[tuple[Scheduled, str]]:
    folder = tmp_path / "schedule"
    folder.mkdir()
    label = f"test-why-{uuid.uuid4().hex[:8]}"
    engine = Scheduled(folder)
    yield engine, label
    engine.cleanup(label)


def test_a_flaky_sh_script_is_its_own_randomness_never_a_ca_variable(
        engine: object, tmp_path: Path, scheduled: tuple[Scheduled, str]) -> None:
    from runner.build.plan import PlanOptions
    from runner.replay import Progress, ReplayOptions, replay_capsule

    argv = ["sh", "-c", SCHEDULED]
    capsule = write_json(tmp_path / "capsule.json", twin_capsule(argv, "Error: unlucky draw\n", 1,
                                                                 env=name_only(*CA_NAMES, "TERM")))
    fake, label = scheduled
    report = replay_capsule(capsule, ReplayOptions(label=label, plan=PlanOptions()), Progress(), engine=fake)
    assert report.verdict == "flaky", [a.classification for a in report.attempts]
    cause = report.why[0]
    assert (cause.cause, cause.evidence.split(" (")[0]) == (
        "randomness", "no recorded fact explains it: the command's own randomness")
    assert "replay pin" in cause.next
    assert not any(c.fact.removeprefix("env ") in CA_NAMES for c in report.why[:1])
