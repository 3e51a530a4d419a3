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

from runner.cli.main import main
from tests.envelope import envelope_of
from tests.integration.helpers import replay
from tests.integration.pinning import record_jest, record_suites

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def suites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """Each case's capsule, recorded once for the module (tests/integration/pinning.py)."""
    root = tmp_path_factory.mktemp("pin")
    yield record_suites(root)
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


SEEDS = {"hypothesis": "@seed(", "randomly": "--randomly-seed=", "go-shuffle": "-test.shuffle ", "jest": "Seed:"}


@pytest.mark.parametrize("case", ["hypothesis", "randomly", "go-shuffle"])
def test_the_recorded_seed_is_applied_and_the_failure_comes_back_every_time(
        engine: object, capsys: pytest.CaptureFixture[str], suites: dict[str, Path], case: str) -> None:
    tail = json.loads(suites[case].read_text())["command"]["failure"]["outputTail"]
    assert SEEDS[case] in tail, tail  # the framework printed its seed, as it does
    rc, report = replay(capsys, suites[case], "-n", "5")
    assert (rc, report["verdict"]) == (0, "reproduced"), [a["output_tail"][-300:] for a in report["attempts"]]
    assert [a["classification"] for a in report["attempts"]] == ["recorded"] * 5
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


def test_a_race_that_needs_more_cpus_pins_through_gomaxprocs(engine: object, capsys: pytest.CaptureFixture[str],
                                                             suites: dict[str, Path]) -> None:
    """Recorded on 8 cores; here GOMAXPROCS is 2 and the limiter never overflows with two workers."""
    repo = json.loads(suites["race"].read_text())["repo"]["remote"]
    rc, result = pin_json(suites["race"], "--repo", repo)
    assert (rc, result["pinned"]) == (0, True), result["tried"]
    assert set(result["settings"]) == {"GOMAXPROCS"} and int(result["settings"]["GOMAXPROCS"]) > 2, result
    assert result["command"].startswith(f"GOMAXPROCS={result['settings']['GOMAXPROCS']} go test"), result["command"]
    recorded = [t for t in result["tried"] if t["axis"] == "as recorded"]
    assert recorded and recorded[0]["rate"]["failed"] < recorded[0]["rate"]["runs"], recorded


def test_a_failure_no_axis_moves_is_not_pinned_and_each_axis_has_its_rate(
        engine: object, suites: dict[str, Path]) -> None:
    repo = json.loads(suites["coin"].read_text())["repo"]["remote"]
    rc, result = pin_json(suites["coin"], "--repo", repo)
    assert (rc, result["pinned"], result["settings"]) == (1, False, {}), result["tried"]
    axes = {a["axis"]: a for a in result["axes"]}
    assert {"as recorded", "PYTHONHASHSEED", "cpus"} <= set(axes), axes
    assert all(a["rate"]["runs"] >= 2 for a in axes.values())
    assert sum(a["rate"]["failed"] for a in axes.values()) > 0  # it did fail, just not every time


@pytest.fixture(scope="module")
def jest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("pin-jest")
    yield record_jest(root)
    shutil.rmtree(root, ignore_errors=True)


def test_jests_recorded_seed_is_applied_and_pin_pins_it(engine: object, capsys: pytest.CaptureFixture[str],
                                                        jest: Path) -> None:
    tail = json.loads(jest.read_text())["command"]["failure"]["outputTail"]
    assert SEEDS["jest"] in tail, tail
    rc, report = replay(capsys, jest, "-n", "5")
    assert (rc, report["verdict"]) == (0, "reproduced"), [a["output_tail"][-300:] for a in report["attempts"]]
    assert seed_row(report)["replayed"].startswith("--seed="), seed_row(report)
    repo = json.loads(jest.read_text())["repo"]["remote"]
    rc, result = pin_json(jest, "--repo", repo)
    assert (rc, result["pinned"], list(result["settings"])) == (0, True, ["jest"]), result["tried"]
    assert result["command"].startswith("npx jest --randomize --seed="), result["command"]
