"""The test-tool cache bisect trials share holds build artefacts only (issue 21), on the real engine.

Go's test cache keys a result on the environment variables the test reads through os.Getenv;
the time package reads TZ past it, so a cached `ok` of the good end (TZ=UTC) would answer every
later trial in that image whatever its TZ. Every fact here is a run-time one: all trials share one
image and its GOCACHE volume, filled by the good end. The search only finds env:TZ if each
trial really runs its test (GOFLAGS=-count=1): no trial's outcome depends on the one before it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.integration.helpers import ROOT, env_facts, git_repo, repo_fact, twin_capsule, write_json
from tests.integration.test_bisect import passed, record_failure
from tests.integration.test_bisect_more import bisect

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
    assert "Go's build cache (GOCACHE=/opt/replay/toolcache/go-build; test results never reused" in notes, notes
    assert "jest" not in notes
