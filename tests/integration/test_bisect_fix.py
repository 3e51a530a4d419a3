"""`replay bisect CAPSULE --commits --fixed-at COMMIT` end to end against the real Docker engine:
a real git history where a later commit fixes the recorded failure, every trial a real image and
container. The capsule's failure fields hold a failure really observed (record_failure)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from runner.cli.main import main

from tests.envelope import result_of
from tests.integration.helpers import env_facts, git_history, write_json
from tests.integration.bisecting import python_capsule, record_failure

pytestmark = pytest.mark.integration

CHECK_PY = """\
import sys

ROUNDING = "{rounding}"
if ROUNDING == "up":
    print("error: start of day is rounded up", file=sys.stderr, flush=True)
    sys.exit(1)
print("ok", flush=True)
"""
# (file changes, subject): recorded failing at the first; the fourth fixes it
COMMITS = [({"check.py": CHECK_PY.format(rounding="up")}, "init"),
           ({"README": "a clock\n"}, "add a readme"),
           ({"NOTES": "1.1\n"}, "release 1.1"),
           ({"check.py": CHECK_PY.format(rounding="down")}, "round start of day down"),
           ({"README": "a clock that rounds down\n"}, "docs")]


@pytest.fixture(scope="module")
def fixed_history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    path = tmp_path_factory.mktemp("fixed-clock") / "repo"
    return path, git_history(path, COMMITS)


def fix_bisect(capsys: pytest.CaptureFixture[str], capsule: Path, repo: Path, fixed_at: str) -> tuple[int, dict[str, Any]]:
    rc = main(["bisect", str(capsule), "--commits", "--fixed-at", fixed_at, "--repo", str(repo), "--json"])
    captured = capsys.readouterr()
    assert captured.out.strip(), f"no result on stdout (exit {rc}); stderr: {captured.err[-2000:]}"
    return rc, result_of(captured.out)


def test_fix_bisection_names_the_commit_that_fixed_the_recorded_failure(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path,
        fixed_history: tuple[Path, list[str]]) -> None:
    repo, shas = fixed_history
    capsule = write_json(tmp_path / "failing.json", python_capsule(repo, shas[0], 1, env_facts(LANG="C.UTF-8")))
    record_failure(capsule, "--repo", str(repo))
    rc, result = fix_bisect(capsys, capsule, repo, shas[-1][:10])
    assert (rc, result["mode"], result["walk"]["status"]) == (0, "fix", "found"), result["walk"]
    assert result["fixing"] == {"sha": shas[3], "subject": "round start of day down"}
    assert [c["sha"] for c in result["commits"]] == shas[1:] and result["recorded"] == shas[0]
    trials = result["walk"]["trials"]
    # the fixed end first (it must pass), then the recorded commit (it must fail as recorded)
    assert [(t["item"], t["role"], t["verdict"]) for t in trials[:2]] == [
        (shas[-1], "good end", "not-reproduced"), (shas[0], "bad end", "reproduced")]
    verdicts = {t["item"]: t["verdict"] for t in trials}
    assert verdicts.get(shas[3]) != "reproduced" and verdicts.get(shas[2], "reproduced") == "reproduced"
    assert result["walk"]["confidence"] >= 0.95


def test_fix_bisection_says_when_the_failure_is_not_fixed_at_fixed_at(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path,
        fixed_history: tuple[Path, list[str]]) -> None:
    repo, shas = fixed_history
    capsule = write_json(tmp_path / "failing.json", python_capsule(repo, shas[0], 1, env_facts(LANG="C.UTF-8")))
    record_failure(capsule, "--repo", str(repo))
    rc, result = fix_bisect(capsys, capsule, repo, shas[2])
    assert (rc, result["walk"]["status"], result["fixing"]) == (1, "baseline fails", None)
    assert any("still comes back at" in n and "not fixed there" in n for n in result["walk"]["notes"])


def test_farm_find_fix_names_the_fixing_commit_of_a_capsule_fixed_at_ref(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path,
        fixed_history: tuple[Path, list[str]]) -> None:
    repo, shas = fixed_history
    (tmp_path / "caps").mkdir()
    capsule = write_json(tmp_path / "caps" / "clock.json", python_capsule(repo, shas[0], 1, env_facts(LANG="C.UTF-8")))
    record_failure(capsule, "--repo", str(repo))
    rc = main(["farm", "run", str(tmp_path / "caps"), "--db", str(tmp_path / "farm.sqlite"), "--repo", str(repo),
               "--ref", shas[-1], "--find-fix", "--attempts", "2", "--json"])
    night = result_of(capsys.readouterr().out)
    [r] = night["results"]
    assert (rc, r["verdict"], r["ref_verdict"]) == (0, "reproduced", "fixed")
    [fix] = night["fixes"]
    assert (fix["path"], fix["status"], fix["fixing"]) == (
        str(capsule), "found", {"sha": shas[3], "subject": "round start of day down"})
    assert main(["farm", "run", str(tmp_path / "caps"), "--db", str(tmp_path / "farm.sqlite"), "--repo", str(repo),
                 "--find-fix"]) == 2  # without --ref there is nothing to find the fix of
    assert "give --ref COMMIT" in capsys.readouterr().err
