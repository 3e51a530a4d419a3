"""`replay bisect BAD --good GOOD` end to end against the real Docker engine (issue 5).

Every trial builds (or reuses) a real image and runs a real container. The capsule
builders at the top are shared with scripts/bench_bisect.py. A bad capsule's failure
fields always hold a failure really observed: the example's recorded one, or one
recorded here by running the command once (record_failure), as a recorder would.
"""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from runner.verdict import signature as sig
from runner.cli.main import main

from tests.integration.helpers import (ROOT, TZ_CLOCK, clone_tz_clock, env_facts, git, git_repo, repo_fact, twin_capsule,
                      with_local_repo, write_json)
from tests.envelope import result_of

pytestmark = pytest.mark.integration

TZ_CAPSULE = TZ_CLOCK / "capsule.json"
BUNDLE = TZ_CLOCK / "repo.bundle"
SIX_PIN = ROOT / "tests" / "cases" / "replay" / "six-pin"
TZ_SIGNATURE = "exit1:799fec462e83a86f"  # examples/tz-clock/capsule.json's recorded failure

# The good end of the time-zone pair: four run-time and two build-time differences.
GOOD_RUN = {"CI": "true", "LANG": "C.UTF-8", "NODE_ENV": "production", "TZ": "UTC"}
GOOD_NODE, GOOD_NPM = "22.23.2", "10.9.8"  # both offered by the npm registry, as 22.23.3 and 10.9.9 are

FEATURES_JS = """\
'use strict';
// Fails only when both features are on: neither variable alone is the cause.
const a = process.env.FEATURE_A, b = process.env.FEATURE_B;
console.log(`features: A=${a || '-'} B=${b || '-'}`);
if (a && b) {
  console.error('Error: FEATURE_A and FEATURE_B cannot be enabled together');
  process.exit(3);
}
console.log('ok');
"""


# --- capsule builders (scripts/bench_bisect.py uses them too) ------------------------


def passed(capsule: dict[str, Any]) -> dict[str, Any]:
    """A copy of a capsule, recorded passing."""
    data = copy.deepcopy(capsule)
    data["command"].update(exitCode=0, outcome="pass", failure=None)
    return data


def set_env(capsule: dict[str, Any], values: dict[str, str]) -> None:
    capsule["env"].update(env_facts(**values))
    included = set(capsule["redaction"]["valuesIncluded"]) | set(values)
    capsule["redaction"]["valuesIncluded"] = sorted(included)
    if "TZ" in values:
        capsule["locale"]["timeZone"] = values["TZ"]


def tz_pair(dest: Path, *, build_facts: bool = True, remote: str = str(BUNDLE)) -> tuple[Path, Path]:
    """(bad, good): the example's failing capsule under New York, and the same project
    recorded passing with TZ=UTC, LANG=C.UTF-8, CI=true, NODE_ENV=production, and (with
    build_facts) node 22.23.2 and npm 10.9.8 instead of 22.23.3 and 10.9.9."""
    bad = json.loads(TZ_CAPSULE.read_text())
    bad["repo"]["remote"] = remote
    good = passed(bad)
    set_env(good, GOOD_RUN)
    if build_facts:
        good["runtimes"]["node"] = GOOD_NODE
        good["tools"]["npm"] = GOOD_NPM
        good["packageManagers"][0]["version"] = GOOD_NPM
    dest.mkdir(parents=True, exist_ok=True)
    return write_json(dest / "bad.json", bad), write_json(dest / "good.json", good)


def record_failure(capsule_path: Path, *replay_args: str) -> dict[str, Any]:
    """Fill a failing capsule's failure fields from one real run of its command, as
    twin's recorder does: the output tail, its key lines and signature."""
    data = json.loads(capsule_path.read_text())
    data["command"]["failure"] = None  # nothing to match yet: any run ending the same way counts
    write_json(capsule_path, data)
    # --allow-unverified: a capsule recorded failing without its failure fields does not verify (yet)
    proc = subprocess.run([sys.executable, "-m", "runner", *with_local_repo([str(capsule_path), *replay_args]),
                           "-n", "1", "--allow-unverified", "--json"],
                          capture_output=True, text=True, timeout=600)
    assert proc.stdout.strip(), f"replay printed no report (exit {proc.returncode}): {proc.stderr[-2000:]}"
    attempt = result_of(proc.stdout)["attempts"][0]
    assert attempt["exit_code"] == data["command"]["exitCode"], attempt["output_tail"]
    # The recorder keeps the tail; its signature must be the run's, or the capsule would lie.
    again = sig.compute(attempt["output_tail"], attempt["exit_code"], attempt["signal"])
    assert (again.signature, list(again.key_lines)) == (attempt["signature"], attempt["key_lines"])
    failure = {"signature": attempt["signature"], "keyLines": attempt["key_lines"],
               "outputTail": attempt["output_tail"]}
    data["command"]["failure"] = failure
    write_json(capsule_path, data)
    return failure


def mirror_remote(capsule: Path, dest: Path, *args: str) -> None:
    """Mirror a capsule's remote into the cache once, alone (`replay render -o`): trials
    whose images differ then build at once without racing to clone it."""
    assert main(with_local_repo(["render", str(capsule), "-o", str(dest), *args])) == 0


def node_capsule(repo: Path, commit: str, env: dict[str, Any], exit_code: int) -> dict[str, Any]:
    """`node check.js` recorded with the example's node and npm (a failure still to record)."""
    data = twin_capsule(["node", "check.js"], "", exit_code, repo=repo_fact(str(repo), commit), env=env)
    data["command"]["failure"] = None
    data["runtimes"], data["tools"] = {"node": "22.23.3"}, {"npm": "10.9.9"}
    return data


# --- running it ---------------------------------------------------------------------


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")


@pytest.fixture(scope="module", autouse=True)
def bundle_mirrored(tmp_path_factory: pytest.TempPathFactory) -> None:
    mirror_remote(TZ_CAPSULE, tmp_path_factory.mktemp("render") / "ctx", "--repo", str(BUNDLE))


def bisect(capsys: pytest.CaptureFixture[str], bad: Path, good: Path, *args: str | Path) -> tuple[int, dict[str, Any]]:
    """`replay bisect BAD --good GOOD ARGS --json` in-process: the exit code and the result."""
    rc = main(with_local_repo(["bisect", str(bad), "--good", str(good), *map(str, args)]) + ["--json"])
    captured = capsys.readouterr()
    assert captured.out.strip(), f"no result on stdout (exit {rc}); stderr: {captured.err[-2000:]}"
    return rc, result_of(captured.out)


def by_keys(result: dict[str, Any]) -> dict[tuple[str, ...], dict[str, Any]]:
    return {tuple(t["keys"]): t for t in result["trials"]}


def ends_first(result: dict[str, Any]) -> list[str]:
    return [t["role"] for t in result["trials"][:2]]


# -- 1. a time-zone culprit among six differences -------------------------------------


def test_the_time_zone_is_found_among_six_differences_without_building_for_run_time_trials(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad, good = tz_pair(tmp_path)
    rc, result = bisect(capsys, bad, good)
    assert (rc, result["status"], result["minimal"]) == (0, "found", ["env:TZ"]), result["trials"]
    assert [(c["key"], c["stage"], c["good"], c["bad"]) for c in result["candidates"]] == [
        ("env:CI", "run", "true", "(absent)"), ("env:LANG", "run", "C.UTF-8", "en_US.UTF-8"),
        ("env:NODE_ENV", "run", "production", "(absent)"), ("env:TZ", "run", "UTC", "America/New_York"),
        ("tool:npm", "build", "npm 10.9.8", "npm 10.9.9"), ("runtime:node", "build", "node 22.23.2", "node 22.23.3")]
    trials = result["trials"]
    assert ends_first(result) == ["good end", "bad end"]
    assert [t["verdict"] for t in trials[:2]] == ["not-reproduced", "reproduced"]
    assert by_keys(result)[("env:TZ",)]["verdict"] == "reproduced"
    assert by_keys(result)[("env:TZ",)]["signature"] == TZ_SIGNATURE
    assert len({tuple(t["keys"]) for t in trials}) <= 2 * 3 + 2  # a single culprit among 6: at most 2*ceil(log2 6) + 2
    # Only the two ends' images exist: no other trial built, and every trial ran on one of them.
    assert [t["number"] for t in trials[2:] if t["built"]] == []
    assert {tuple(t["image_keys"]) for t in trials} == {(), ("tool:npm", "runtime:node")}
    assert result["variant_builds"] == int(trials[1]["built"])
    assert all(not t["image_keys"] for t in trials if t["keys"] and all(k.startswith("env:") for k in t["keys"]))
    assert result["also_failing"] == []
    # a deterministic failure: one run per trial of the search; the bad end three times (its rate first),
    # and the good end until the answer's one removal passes even for a failure that only looked deterministic
    assert [len(t["attempts"]) for t in trials if t["role"] == "search"] == [1] * sum(t["role"] == "search" for t in trials)
    assert [t["attempts"] for t in trials if t["role"] == "bad end"] == [["recorded"]] * 3
    assert result["confidence"] >= 0.95 and result["removals"][0]["key"] == "env:TZ"
    totals = result["totals"]
    assert (totals["trials"], totals["attempts"]) == (len(trials), sum(len(t["attempts"]) for t in trials))
    assert totals["builds"] == sum(t["built"] for t in trials) and totals["wall_s"] > 0
    assert any("shared one test-tool cache per image" in n for n in result["notes"])


# -- 2. an interaction of two variables ------------------------------------------------


@pytest.fixture(scope="module")
def features_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A Node project failing when FEATURE_A and FEATURE_B are both set: (repo, first
    commit, a second commit that changes only the error message)."""
    path = tmp_path_factory.mktemp("features") / "repo"
    first = git_repo(path, {"check.js": FEATURES_JS})
    (path / "check.js").write_text(FEATURES_JS.replace("together'", "together (v2)'"))
    git(path, "commit", "-q", "-am", "v2 message")
    return path, first, git(path, "rev-parse", "HEAD").strip()


def test_two_variables_needed_together_are_both_reported(engine: object, capsys: pytest.CaptureFixture[str],
                                                         tmp_path: Path, features_repo: tuple[Path, str, str]) -> None:
    repo, commit, _ = features_repo
    bad = write_json(tmp_path / "bad.json", node_capsule(repo, commit, env_facts(
        FEATURE_A="1", FEATURE_B="on", CI="true", LANG="en_US.UTF-8", NODE_ENV="test"), 3))
    failure = record_failure(bad)
    assert "Error: FEATURE_A and FEATURE_B cannot be enabled together" in failure["keyLines"]
    good = write_json(tmp_path / "good.json", passed(node_capsule(repo, commit, env_facts(
        FEATURE_A=None, FEATURE_B=None, CI=None, LANG="C.UTF-8", NODE_ENV=None), 0)))
    rc, result = bisect(capsys, bad, good)
    assert (rc, result["status"], result["minimal"]) == (0, "found", ["env:FEATURE_A", "env:FEATURE_B"])
    assert [c["key"] for c in result["candidates"]] == [
        "env:CI", "env:FEATURE_A", "env:FEATURE_B", "env:LANG", "env:NODE_ENV"]
    trials = by_keys(result)
    assert trials[("env:FEATURE_A",)]["verdict"] == "not-reproduced"
    assert trials[("env:FEATURE_B",)]["verdict"] == "not-reproduced"
    assert "interaction: the failure needs these 2 facts together" in result["notes"]
    assert result["variant_builds"] == 0
    assert [t["number"] for t in result["trials"][1:] if t["built"]] == []  # one image for all of them


# -- 3. a pinned Python dependency -----------------------------------------------------


@pytest.fixture(scope="module")
def six_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("six") / "repo"
    commit = git_repo(path, {"check.py": (SIX_PIN / "check.py").read_text()})
    bad, _ = six_pair(path.parent, path, commit)
    mirror_remote(bad, path.parent / "ctx")
    return path, commit


def six_pair(dest: Path, repo: Path, commit: str) -> tuple[Path, Path]:
    """(bad, good): check.py on six 1.16.0 (fails) and 1.17.0, with CI and LANG differing too."""
    def six(version: str, output: str, exit_code: int, env: dict[str, Any]) -> dict[str, Any]:
        return twin_capsule(["python3", "check.py"], output, exit_code, python="3.11.2",
                            resolved_python={"six": version}, repo=repo_fact(str(repo), commit), env=env)

    # check.py's real output on six 1.16.0 (tests/cases/replay/six-pin), as the recorder saw it
    output = (SIX_PIN / "output-1.16.0.txt").read_text()
    return (write_json(dest / "bad.json", six("1.16.0", output, 1, env_facts(PYTHONPATH=None, CI=None, LANG="en_US.UTF-8"))),
            write_json(dest / "good.json", six("1.17.0", "", 0, env_facts(PYTHONPATH=None, CI="true", LANG="C.UTF-8"))))


def test_a_pinned_python_dependency_is_found_among_run_time_differences(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path, six_repo: tuple[Path, str]) -> None:
    bad, good = six_pair(tmp_path, *six_repo)
    rc, result = bisect(capsys, bad, good, "-j", "2")  # the two ends' images are built at once
    assert (rc, result["status"], result["minimal"]) == (0, "found", ["pin:python:six"]), result["trials"]
    assert [(c["key"], c["stage"], c["good"], c["bad"]) for c in result["candidates"]] == [
        ("env:CI", "run", "true", "(absent)"), ("env:LANG", "run", "C.UTF-8", "en_US.UTF-8"),
        ("pin:python:six", "build", "1.17.0", "1.16.0")]
    recorded = json.loads(bad.read_text())["command"]["failure"]["signature"]
    assert by_keys(result)[("pin:python:six",)]["signature"] == recorded
    assert by_keys(result)[("env:CI", "env:LANG")]["verdict"] == "not-reproduced"
    # the pin alone runs on the bad end's image: one variant image in all
    assert by_keys(result)[("pin:python:six",)]["built"] is False


def test_the_two_ends_build_at_once_from_a_remote_not_yet_mirrored(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    repo = tmp_path / "repo"  # a path no earlier run has mirrored (the cache is keyed by it)
    commit = git_repo(repo, {"check.py": (SIX_PIN / "check.py").read_text()})
    bad, good = six_pair(tmp_path, repo, commit)
    rc, result = bisect(capsys, bad, good, "-j", "2")
    assert (rc, result["minimal"]) == (0, ["pin:python:six"])


# -- 4. a culprit in the recorded diff -------------------------------------------------


@pytest.fixture(scope="module")
def broken_start_of_day(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A real `git diff HEAD --binary` that makes startOfDay round to the nearest day."""
    clone = clone_tz_clock(tmp_path_factory.mktemp("tzc") / "tz-clock")
    dates = clone / "src" / "dates.js"
    broken = dates.read_text().replace("Math.floor(ms / 86400000)", "Math.round(ms / 86400000)")
    assert broken != dates.read_text()
    dates.write_text(broken)
    return git(clone, "diff", "HEAD", "--binary")


def test_the_diff_is_found_with_repo_given_on_the_command_line(engine: object, capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path, broken_start_of_day: str) -> None:
    # The example's remote is unreachable; --repo supplies both ends' commit.
    bad, good = tz_pair(tmp_path, build_facts=False, remote=json.loads(TZ_CAPSULE.read_text())["repo"]["remote"])
    for path, lang in ((bad, "en_US.UTF-8"), (good, "C.UTF-8")):
        data = json.loads(path.read_text())
        set_env(data, {"TZ": "UTC", "LANG": lang, "CI": "true", "NODE_ENV": "production"})
        write_json(path, data)
    data = json.loads(bad.read_text())
    data["repo"].update(dirty=True, diff=broken_start_of_day)
    write_json(bad, data)
    failure = record_failure(bad, "--repo", str(BUNDLE))
    assert "✖ startOfDay rounds down to midnight UTC" in failure["keyLines"]
    rc, result = bisect(capsys, bad, good, "--repo", BUNDLE)
    assert (rc, result["status"], result["minimal"]) == (0, "found", ["source:diff"]), result["trials"]
    assert [(c["key"], c["stage"]) for c in result["candidates"]] == [("env:LANG", "run"), ("source:diff", "build")]
    assert by_keys(result)[("source:diff",)]["signature"] == failure["signature"]
    assert by_keys(result)[("env:LANG",)]["verdict"] == "not-reproduced"


# -- 5. differing commits --------------------------------------------------------------


def test_differing_commits_are_reported_and_the_search_runs_at_the_bad_one(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path,
        features_repo: tuple[Path, str, str]) -> None:
    repo, first, second = features_repo
    bad = write_json(tmp_path / "bad.json", node_capsule(repo, second, env_facts(FEATURE_A="1", FEATURE_B="1"), 3))
    failure = record_failure(bad)
    assert "Error: FEATURE_A and FEATURE_B cannot be enabled together (v2)" in failure["keyLines"]
    good = write_json(tmp_path / "good.json", passed(node_capsule(repo, first, env_facts(FEATURE_A=None,
                                                                                        FEATURE_B=None), 0)))
    rc, result = bisect(capsys, bad, good)
    # Found with the v2 message's signature: the trials ran the bad commit's check.js.
    assert (rc, result["minimal"]) == (0, ["env:FEATURE_A", "env:FEATURE_B"])
    assert result["trials"][1]["signature"] == failure["signature"]
    assert (f"the capsules are from different commits (good {first[:12]}, bad {second[:12]}): "
            "the environment bisect runs at the bad commit") in result["notes"]
    commits = [(n["good"], n["bad"]) for n in result["not_varied"] if n["key"] == "source:commit"]
    assert commits == [(first, second)]
