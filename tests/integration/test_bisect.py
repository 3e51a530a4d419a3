"""`replay bisect BAD --good GOOD` end to end against the real Docker engine (issue 5).

Every trial builds (or reuses) a real image and runs a real container. The capsule
builders at the top are shared with scripts/bench_bisect.py. A bad capsule's failure
fields always hold a failure really observed: the example's recorded one, or one
recorded here by running the command once (record_failure), as a recorder would.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from runner.bisect.rules import RATE_FIRST
from tests.integration.bisecting import (BUNDLE, SIX_PIN, TZ_CAPSULE, TZ_SIGNATURE, bisect,
                                         mirror_remote, node_capsule, passed, record_failure, set_env, tz_pair)
from tests.integration.helpers import (clone_tz_clock, env_facts, git, git_repo, repo_fact, twin_capsule,
                                       write_json)

pytestmark = pytest.mark.integration

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


# --- running it ---------------------------------------------------------------------


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")


@pytest.fixture(scope="module", autouse=True)
def bundle_mirrored(tmp_path_factory: pytest.TempPathFactory) -> None:
    mirror_remote(TZ_CAPSULE, tmp_path_factory.mktemp("render") / "ctx", "--repo", str(BUNDLE))


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
    # a deterministic failure: one run per trial of the search; the bad end RATE_FIRST times (its rate first),
    # and the good end until the answer's one removal passes even for a failure that only looked deterministic
    assert [len(t["attempts"]) for t in trials if t["role"] == "search"] == [1] * sum(t["role"] == "search" for t in trials)
    assert [t["attempts"] for t in trials if t["role"] == "bad end"] == [["recorded"]] * RATE_FIRST
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
