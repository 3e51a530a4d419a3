"""Recorded seeds applied and `replay pin`, on real frameworks in real containers (issue 37).

The suites (tests/cases/pin/) fail for some seeds or orders only: a Hypothesis health check that
depends on the draws, a pytest-randomly order dependency, a `go test -shuffle` order dependency.
Each capsule is recorded as twin's recorder would: from a real failing run of its command (runs
repeated, seeds drawn anew, until one fails). One image per language serves every test.
"""
from __future__ import annotations

import contextlib
import io
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runner.build.plan import PlanOptions
from runner.cli.main import main
from runner.replay import Progress, Replayer, ReplayOptions
from tests.envelope import envelope_of
from tests.integration.helpers import ROOT, git_repo, repo_fact, replay, twin_capsule, write_json

pytestmark = pytest.mark.integration

CASES = ROOT / "tests" / "cases" / "pin"
# test_bisect_cache's pytest (its layers are shared), Hypothesis and pytest-randomly, installed --no-deps
PYTHON_PACKAGES = {"pytest": "8.3.4", "pluggy": "1.5.0", "iniconfig": "2.0.0", "packaging": "24.2",
                   "hypothesis": "6.170.27", "sortedcontainers": "2.4.0", "pytest-randomly": "3.16.0"}
GO = "1.22.10"  # test_toolchains' Go
PYTEST = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"]
RECORD_TRIES = 12  # each run fails about every other time: 12 passes in a row would be 1 in 4,000


def record(path: Path, data: dict[str, Any], repo: Path) -> Path:
    """The capsule's failure fields from a real failing run of its command (seeds drawn anew)."""
    write_json(path, data)
    replayer = Replayer(ReplayOptions(plan=PlanOptions(repo=str(repo), seeds=False)), Progress())
    try:
        _, plan = replayer.load(path)
        image = replayer.image(plan)
        for _ in range(RECORD_TRIES):
            att = replayer.attempt(plan, image)
            if att.exit_code == 1:
                data["command"]["failure"] = {"signature": att.signature, "keyLines": list(att.key_lines),
                                              "outputTail": att.output_tail}
                return write_json(path, data)
    finally:
        replayer.close()
    raise AssertionError(f"{path.name}: no run of {RECORD_TRIES} failed")


@pytest.fixture(scope="module")
def suites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """Each case's capsule, recorded once for the module: python (two suites, one image) and go."""
    root = tmp_path_factory.mktemp("pin")
    caps: dict[str, Path] = {}
    py_repo = root / "py"
    commit = git_repo(py_repo, {p.name: p.read_text() for p in (CASES / "python").iterdir()})
    for name, argv in (("hypothesis", [*PYTEST, "-p", "no:randomly", "health_suite.py"]),
                       ("randomly", [*PYTEST, "order_suite.py"])):
        data = twin_capsule(argv, "", 1, python="3.11.2", resolved_python=PYTHON_PACKAGES,
                            repo=repo_fact(str(py_repo), commit))
        caps[name] = record(root / f"{name}.json", data, py_repo)
    go_repo = root / "go"
    commit = git_repo(go_repo, {p.name: p.read_text() for p in (CASES / "go").iterdir()})
    data = twin_capsule(["go", "test", "-shuffle=on", "-run", "TestFill|TestEmpty", "."], "", 1,
                        repo=repo_fact(str(go_repo), commit))
    data["runtimes"] = {"go": GO}
    caps["go-shuffle"] = record(root / "go-shuffle.json", data, go_repo)
    yield caps
    shutil.rmtree(root, ignore_errors=True)


def pin_json(*args: str | Path) -> tuple[int, dict[str, Any]]:
    with contextlib.redirect_stdout(io.StringIO()) as out:
        rc = main(["pin", *map(str, args), "--json"])
    doc = envelope_of(out.getvalue())
    assert doc["exit_code"] == rc and doc["command"] == "pin", doc["error"]
    return rc, doc["result"]


def seed_row(report: dict[str, Any]) -> dict[str, Any]:
    (row,) = [r for r in report["fidelity"] if r["fact"] == "seed"]
    return row


SEEDS = {"hypothesis": "@seed(", "randomly": "--randomly-seed=", "go-shuffle": "-test.shuffle "}


@pytest.mark.parametrize("case", ["hypothesis", "randomly", "go-shuffle"])
def test_the_recorded_seed_is_applied_and_the_failure_comes_back_every_time(
        engine: object, capsys: pytest.CaptureFixture[str], suites: dict[str, Path], case: str) -> None:
    tail = json.loads(suites[case].read_text())["command"]["failure"]["outputTail"]
    assert SEEDS[case] in tail, tail  # the framework printed its seed, as it does
    rc, report = replay(capsys, suites[case], "-n", "6")
    assert (rc, report["verdict"]) == (0, "reproduced"), [a["output_tail"][-300:] for a in report["attempts"]]
    assert [a["classification"] for a in report["attempts"]] == ["recorded"] * 6
    row = seed_row(report)
    assert row["status"] == "exact" and row["why"].startswith("applied, recorded "), row


def test_no_seeds_draws_them_anew(engine: object, capsys: pytest.CaptureFixture[str], suites: dict[str, Path]) -> None:
    """Without its seed the order test passes about every other run: 8 runs all failing would be 1 in 256."""
    rc, report = replay(capsys, suites["randomly"], "-n", "8", "--no-seeds")
    assert seed_row(report)["status"] == "not applied"
    outcomes = {a["classification"] for a in report["attempts"]}
    assert "recorded" in outcomes and len(outcomes) > 1, outcomes


@pytest.mark.parametrize("case", ["hypothesis", "randomly", "go-shuffle"])
def test_pin_pins_each_suite_at_every_run_and_writes_the_pin(
        engine: object, capsys: pytest.CaptureFixture[str], suites: dict[str, Path], case: str,
        tmp_path: Path) -> None:
    repo = json.loads(suites[case].read_text())["repo"]["remote"]
    out = tmp_path / "pinned.json"
    rc, result = pin_json(suites[case], "--repo", repo, "-o", out)
    assert (rc, result["pinned"]) == (0, True), result["axes"]
    assert result["rate"]["failed"] == result["rate"]["runs"] == 10
    assert result["settings"], result  # the seed it pinned is stated, as a setting
    assert result["written"] == str(out)
    pinned = json.loads(out.read_text())
    assert pinned["pin"]["settings"] == result["settings"]
    # replayed with --no-seeds, the pin is not applied; replayed as written, it is
    rc, report = replay(capsys, out, "-n", "4")
    assert (rc, report["verdict"]) == (0, "reproduced")
    assert any(r["fact"].startswith("pin ") and r["status"] == "exact" for r in report["fidelity"]), report["fidelity"]
    assert main(["inspect", str(out)]) == 0
    assert "the recorded failure came back in 10 of 10 runs" in capsys.readouterr().out
