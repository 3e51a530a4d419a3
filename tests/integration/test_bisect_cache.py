"""The test-tool cache bisect trials share holds build artefacts only (issue 21), on the real engine.

Go's test cache keys a result on the environment variables the test reads through os.Getenv;
the time package reads TZ past it, so a cached `ok` of the good end (TZ=UTC) would answer every
later trial in that image whatever its TZ. Every fact here is a run-time one: all trials share one
image and one GOCACHE volume (the replayer's, filled from the image's compiled packages). The search only finds env:TZ if each
trial really runs its test (GOFLAGS=-count=1): no trial's outcome depends on the one before it.

pytest's bytecode is shared (PYTHONPYCACHEPREFIX), its lastfailed state is not: the capsule's
command runs `pytest --lf`, which with a shared lastfailed would run only the tests the trial
before it failed, so a trial failing another test would pass.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from runner.build.plan import PlanOptions
from runner.bisect.trial import Trials
from runner.replay import Progress, Replayer, ReplayOptions, expected_of
from runner.replay.loading import Loader
from tests.integration.helpers import ROOT, env_facts, git_repo, repo_fact, twin_capsule, write_json
from tests.integration.bisecting import bisect_at as bisect, passed, record_failure

pytestmark = pytest.mark.integration

GO_DAY = ROOT / "tests" / "cases" / "toolchains" / "go-day"
GO = "1.22.10"  # test_toolchains' Go: its image layers are shared


def go_capsule(repo: Path, commit: str, exit_code: int, env: dict[str, Any]) -> dict[str, Any]:
    data = twin_capsule(["go", "test", "./..."], "", exit_code, repo=repo_fact(str(repo), commit), env=env)
    data["command"]["failure"] = None
    data["runtimes"] = {"go": GO}
    return data


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")


def test_a_go_trial_never_reuses_the_test_result_of_the_trial_before(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    commit = git_repo(repo, {p.name: p.read_text() for p in GO_DAY.iterdir()})
    bad = write_json(tmp_path / "bad.json",
                     go_capsule(repo, commit, 1, env_facts(TZ="America/New_York", CI=None, APP_MODE="full")))
    record_failure(bad)
    good = write_json(tmp_path / "good.json", passed(go_capsule(repo, commit, 0, env_facts(TZ="UTC", CI="true",
                                                                                           APP_MODE="lite"))))
    rc, result = bisect(capsys, bad, good, repo)
    assert (rc, result["status"], result["minimal"]) == (0, "found", ["env:TZ"]), result["trials"]
    searched = [t for t in result["trials"] if t["role"] == "search"]
    assert any("env:TZ" in t["keys"] and t["verdict"] == "reproduced" for t in searched), searched
    notes = " ".join(result["notes"])
    assert "every attempt shared Go's build cache (GOCACHE=/opt/replay/toolcache/go-build; test results never " \
           "reused: GOFLAGS=-count=1), one per toolchain" in notes, notes
    assert "jest" not in notes


PYTEST = {"pytest": "8.3.4", "pluggy": "1.5.0", "iniconfig": "2.0.0", "packaging": "24.2"}  # installed --no-deps
SUITE = """\
import os


def test_mode():
    assert os.environ.get("APP_MODE") != "full", "APP_MODE=full breaks the mode check"


def test_region():
    assert os.environ.get("REGION") != "eu", "REGION=eu breaks the region check"
"""


def pytest_capsule(repo: Path, commit: str, exit_code: int, mode: str, region: str) -> dict[str, Any]:
    # python 3.11.2: test_drift's, its base layers are shared; only env facts differ: one image
    data = twin_capsule(["python3", "-m", "pytest", "--lf", "-q", "-p", "no:randomly"], "", exit_code,
                        python="3.11.2", resolved_python=PYTEST, repo=repo_fact(str(repo), commit),
                        env=env_facts(APP_MODE=mode, REGION=region))
    data["command"]["failure"] = None
    return data


def test_a_pytest_trial_never_runs_only_what_the_trial_before_it_failed(engine: Any, tmp_path: Path) -> None:
    """The bisect's trial runner, trials in a known order on one image: the bad end (test_mode fails)
    fills the cache, the good end passes; then a trial failing test_region, then the bad one again.
    Each runs the whole suite: the first fails its own test, the second reproduces."""
    repo = tmp_path / "repo"
    commit = git_repo(repo, {"test_suite.py": SUITE})
    bad = write_json(tmp_path / "bad.json", pytest_capsule(repo, commit, 1, "full", "us"))
    record_failure(bad)
    good = write_json(tmp_path / "good.json", passed(pytest_capsule(repo, commit, 0, "lite", "us")))
    # a trial's plan only (judged against the bad end's failure, as every trial): its own outcome is not read
    other = write_json(tmp_path / "other.json", passed(pytest_capsule(repo, commit, 0, "lite", "eu")))
    replayer = Replayer(ReplayOptions(plan=PlanOptions(repo=str(repo))), Progress())
    try:
        (bad_capsule, bad_plan), (_, good_plan), (_, other_plan) = (Loader(replayer.options).load(p) for p in (bad, good, other))
        trials = Trials(replayer, expected_of(bad_capsule), Progress(), cache_reuse=True)
        seen = [trials.observe(plan, bad_plan, end, title).verdict for plan, end, title in (
            (bad_plan, "bad", "bad end"), (good_plan, "good", "good end"),
            (other_plan, None, "fails test_region"), (bad_plan, None, "fails test_mode"))]
        assert seen == ["reproduced", "not-reproduced", "different-failure", "reproduced"]
        # the bytecode is shared: the trials' volume holds the suite's, as pytest rewrote it, and no run state
        image, made = replayer.fetch(bad_plan)  # built above: not again
        assert not made
        assert trials.tool_cache is not None
        (volume,) = trials.tool_cache.mounts(image.ref, None, bad_plan)[0].mounts
        found = engine.client.containers.run(image.ref, ["find", "/cache", "-type", "f"], remove=True,
                                             network_mode="none", volumes={volume.source: {"bind": "/cache", "mode": "ro"}},
                                             labels={"replay": replayer.label}).decode()
        assert "/work/repo/test_suite.cpython-311-pytest-8.3.4.pyc" in found, found
        assert "lastfailed" not in found and ".pytest_cache" not in found, found
        # the image itself holds the bytecode of its source and installed packages (compileall at build time)
        compiled = engine.client.containers.run(image.ref, ["sh", "-c", "ls /work/repo/__pycache__; ls "
                                                "/opt/venv/lib/python3.11/site-packages/_pytest/__pycache__ | head -3"],
                                                remove=True, network_mode="none",
                                                labels={"replay": replayer.label}).decode()
        assert "test_suite.cpython-311.pyc" in compiled and ".cpython-311.pyc" in compiled.split("\n", 1)[1], compiled
        assert trials.close() == [
            "trials after the ends shared one test-tool cache per image: Python's bytecode "
            "(PYTHONPYCACHEPREFIX=/opt/replay/toolcache/pycache; pytest's lastfailed state is not shared); filled by "
            "the ends' first attempts from an empty one; --no-cache-reuse runs every trial from a cold cache"]
    finally:
        replayer.close()
