"""Noise-aware bisect end to end, on the real Docker engine (issue 27), and a value supplied for
a variable recorded by name only (issue 30), and --resume under another supplied value (issue 37).

Real images, real containers; only the outcome of each run of a bad commit is decided by the test,
run by run: the check reads a schedule ("f" fails, "p" passes) and a counter from a directory the
test mounts into every attempt, so a failure that comes back half the time is reproduced exactly,
with no chance in the test. Counts over random runs belong in scripts/bench_noise_bisect.py.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import runner.cli.bisect as cli
from runner.bisect.rules import RATE_FIRST
from runner.build.plan import Plan
from runner.cli.main import main
from runner.engine import Mount
from runner.replay import BuiltImage, Replayer
from runner.verdict.judge import Attempt, Expected
from tests.envelope import result_of
from tests.integration.helpers import env_facts, git, git_repo, repo_fact, twin_capsule, write_json
from tests.integration.bisecting import passed, python_capsule, record_failure

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SCHEDULE = "/schedule"  # where the check finds the test's schedule in the container
# From the commit that sets BROKEN, the check fails or passes as the schedule's next letter says
# (the letters are used in turn by every run of a broken commit); with no schedule mounted (the
# run that records the bad capsule's failure) it fails.
CHECK_PY = """\
import os
import sys

BROKEN = {broken}


def fails() -> bool:
    if not os.path.isdir("{schedule}"):
        return True
    with open("{schedule}/plan") as f:
        plan = f.read().strip()
    count = os.path.join("{schedule}", "count")
    n = int(open(count).read()) if os.path.exists(count) else 0
    with open(count, "w") as f:
        f.write(str(n + 1))
    return plan[n % len(plan)] == "f"


if BROKEN and fails():
    print("error: start of day is rounded up", file=sys.stderr, flush=True)
    sys.exit(1)
print("ok", flush=True)
"""
SUBJECTS = ["init", "add a readme", "refactor", "round start of day up", "docs", "release 2.0"]
CULPRIT = 3


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Six commits; the fourth sets BROKEN (fixed dates: stable commits, so cached images)."""
    path = tmp_path_factory.mktemp("noisy") / "repo"
    shas = [git_repo(path, {"check.py": CHECK_PY.format(broken=False, schedule=SCHEDULE)})]
    for i, subject in enumerate(SUBJECTS[1:], start=1):
        (path / "check.py").write_text(CHECK_PY.format(broken=i >= CULPRIT, schedule=SCHEDULE))
        (path / "NOTES").write_text(f"{subject}\n")
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", subject)
        shas.append(git(path, "rev-parse", "HEAD").strip())
    return path, shas


class Scheduled:
    """The real replayer, every attempt with the test's schedule directory mounted."""

    def __init__(self, replayer: Replayer, schedule: Path) -> None:
        self.replayer, self.mount = replayer, Mount(str(schedule), SCHEDULE, read_only=False)

    def image(self, plan: Plan) -> BuiltImage:
        return self.replayer.image(plan)

    def fetch(self, plan: Plan) -> tuple[BuiltImage, bool]:
        return self.replayer.fetch(plan)

    def attempt(self, plan: Plan, image: BuiltImage, expected: Expected | None = None, *,
                mounts: tuple[Mount, ...] = (), fill_go: bool = True) -> Attempt:
        return self.replayer.attempt(plan, image, expected, mounts=(*mounts, self.mount), fill_go=fill_go)

    def close(self) -> None:
        self.replayer.close()


def test_commits_finds_a_culprit_that_fails_half_the_time_and_says_how_sure(
        engine: object, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        history: tuple[Path, list[str]]) -> None:
    repo, shas = history
    env = env_facts(LANG="C.UTF-8")
    bad = write_json(tmp_path / "bad.json", python_capsule(repo, shas[-1], 1, env))
    record_failure(bad)  # no schedule mounted: the broken check fails
    good = write_json(tmp_path / "good.json", passed(python_capsule(repo, shas[0], 0, env)))
    schedule = tmp_path / "schedule"
    schedule.mkdir()
    (schedule / "plan").write_text("pf")  # every second run of a broken commit fails: a rate of one half
    monkeypatch.setattr(cli, "Replayer", lambda options, progress: Scheduled(Replayer(options, progress), schedule))

    rc = main(["bisect", str(bad), "--good", str(good), "--repo", str(repo), "--commits", "-j", "1", "--json"])
    captured = capsys.readouterr()
    assert captured.out.strip(), captured.err[-3000:]
    result = result_of(captured.out)
    walk = result["walk"]
    assert (rc, walk["status"], result["first_failing"]["sha"]) == (0, "found", shas[CULPRIT]), walk
    assert walk["last_passing"] == shas[CULPRIT - 1]
    assert walk["confidence"] >= walk["target"] == 0.95
    assert walk["candidates"][0]["item"] == shas[CULPRIT]
    # the bad end's rate first: pass, fail, pass, fail... until RATE_FIRST recorded failures
    bad_end = [k for t in walk["trials"] if t["role"] == "bad end" for k in t["attempts"]]
    assert bad_end[:2 * RATE_FIRST] == ["pass", "recorded"] * RATE_FIRST
    assert (walk["rate"]["failed"], walk["rate"]["runs"]) == (bad_end.count("recorded"), len(bad_end))
    # every run of a broken commit took the schedule's next letter: the test decided each one
    broken_runs = [k for t in walk["trials"] if shas.index(t["item"]) >= CULPRIT for k in t["attempts"]]
    assert int((schedule / "count").read_text()) == len(broken_runs)
    assert broken_runs == [("pass", "recorded")[i % 2] for i in range(len(broken_runs))]
    # a pass of a broken commit is not taken for good: the culprit, or a commit after it, ran again
    runs = {sha: sum(len(t["attempts"]) for t in walk["trials"] if t["item"] == sha) for sha in shas}
    assert runs[shas[CULPRIT]] >= 1 and max(runs.values()) > 1
    assert result["totals"]["attempts"] == sum(runs.values())

    rc = main(["bisect", str(bad), "--good", str(good), "--repo", str(repo), "--commits", "-j", "1",
               "--max-runs", "4"])
    out = capsys.readouterr().out
    assert rc == 1 and "undecided, likeliest first: " in out and "the run budget (4 runs) is spent" in out
    assert "would likely decide it" in out and "--max-runs" in out and out.rstrip().endswith("--resume")


def test_bisect_finds_a_variable_recorded_by_name_only_with_its_value_supplied(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # rich's suite fails with TTY_COMPATIBLE=1; twin recorded the variable by name only
    repo = tmp_path / "repo"
    code = ("import os, sys\n"
            "if os.environ.get('TTY_COMPATIBLE') == '1':\n"
            "    print('FAILED tests/test_console.py::test_size', file=sys.stderr, flush=True)\n"
            "    sys.exit(1)\n"
            "print('ok', flush=True)\n")
    commit = git_repo(repo, {"check.py": code})

    def capsule(exit_code: int, env: dict[str, Any]) -> dict[str, Any]:
        data = twin_capsule(["python3", "check.py"], "", exit_code, python="3.11.2", env=env,
                            repo=repo_fact(str(repo), commit))
        data["command"]["failure"] = None
        data["redaction"]["valuesIncluded"] = sorted(k for k, v in env.items() if "value" in v)
        return data

    bad = write_json(tmp_path / "bad.json", capsule(1, {"TTY_COMPATIBLE": {"state": "set"}, **env_facts(CI="true")}))
    record_failure(bad, "--env", "TTY_COMPATIBLE=1")
    good = write_json(tmp_path / "good.json", passed(capsule(0, env_facts(CI=None))))
    rc = main(["bisect", str(bad), "--good", str(good), "--repo", str(repo), "--env", "TTY_COMPATIBLE=1", "--json"])
    captured = capsys.readouterr()
    assert captured.out.strip(), captured.err[-3000:]
    result = result_of(captured.out)
    assert (rc, result["status"], result["minimal"]) == (0, "found", ["env:TTY_COMPATIBLE"]), result["notes"]
    assert {c["key"]: (c["good"], c["bad"]) for c in result["candidates"]}["env:TTY_COMPATIBLE"] == (None, "(supplied)")
    assert result["confidence"] >= 0.95
    # the good end ran without it (kept unset there), the bad end with it
    assert [t["verdict"] for t in result["trials"][:2]] == ["not-reproduced", "reproduced"]


TOKEN_PY = """\
import os
import sys

BROKEN = {broken}

if BROKEN and os.environ.get("TOKEN") == "right-token":
    print("error: the token takes the broken path", file=sys.stderr, flush=True)
    sys.exit(1)
print("ok", flush=True)
"""


def test_a_rerun_with_the_right_token_and_resume_takes_no_outcome_of_the_wrong_one(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # issue 37's review: the plan holds a supplied variable by name only, so --resume took the outcomes
    # a bisect under a wrong --env value kept (the bad end passing) for the rerun with the right one
    repo = tmp_path / "repo"
    shas = [git_repo(repo, {"check.py": TOKEN_PY.format(broken=False)})]
    for i, subject in enumerate(SUBJECTS[1:], start=1):
        (repo / "check.py").write_text(TOKEN_PY.format(broken=i >= CULPRIT))
        (repo / "NOTES").write_text(f"{subject}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", subject)
        shas.append(git(repo, "rev-parse", "HEAD").strip())
    env = {"TOKEN": {"state": "set"}, **env_facts(LANG="C.UTF-8")}  # recorded by name only
    bad = write_json(tmp_path / "bad.json", python_capsule(repo, shas[-1], 1, env))
    record_failure(bad, "--env", "TOKEN=right-token")
    good = write_json(tmp_path / "good.json", passed(python_capsule(repo, shas[0], 0, env)))
    ask = ["bisect", str(bad), "--good", str(good), "--repo", str(repo), "--commits", "-j", "1", "--json"]

    rc = main([*ask, "--env", "TOKEN=wrong-token"])
    wrong = result_of(capsys.readouterr().out)
    assert rc == 1 and wrong["walk"]["status"] != "found"  # the bad end passes under the wrong token

    rc = main([*ask, "--env", "TOKEN=right-token", "--resume"])
    captured = capsys.readouterr()
    assert captured.out.strip(), captured.err[-3000:]
    result = result_of(captured.out)
    assert (rc, result["walk"]["status"]) == (0, "found"), result["walk"]["notes"]  # not the wrong token's passes
    assert result["first_failing"]["sha"] == shas[CULPRIT]
    assert not any("taken from the outcomes" in n for n in result["walk"]["notes"])
