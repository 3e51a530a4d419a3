"""The seeds a recorded run names are applied at run time (argv word or variable), said in the
fidelity table, and left out with --no-seeds; a capsule's pin is applied and checked."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from runner.build.plan import EnvSetting, Plan, PlanOptions
from runner.build.planner import make_plan
from runner.build.images import image_key
from runner.capsules import read_capsule
from runner.capsules.model import FrozenMap
from runner.errors import CapsuleError
from tests.support.planning import SETTINGS, twin_doc, written

HYPOTHESIS_OUT = ("E   AssertionError: 77\nYou can reproduce this failure by adding @seed(123456789) to this test, or "
                  "by running pytest with --hypothesis-seed=123456789.\nFAILED test_h.py::test_h - AssertionError\n")


def planned(tmp_path: Path, argv: list[str], output: str = "", seeds: bool = True, **fields: Any) -> Plan:
    capsule = read_capsule(written(tmp_path, twin_doc(argv, output, **fields)))
    return make_plan(capsule, SETTINGS, PlanOptions(seeds=seeds))


def seed_rows(plan: Plan) -> list[tuple[str, str, str, str]]:
    return [(f.recorded, f.replayed, f.status, f.why) for f in plan.fidelity if f.fact == "seed"]


def test_a_printed_hypothesis_seed_is_given_to_pytest_through_its_options_variable(tmp_path: Path) -> None:
    plan = planned(tmp_path, ["python3", "-m", "pytest", "-q"], HYPOTHESIS_OUT)
    assert plan.argv == ("python3", "-m", "pytest", "-q")  # the recorded command, as recorded
    assert plan.env["PYTEST_ADDOPTS"] == EnvSetting("set", "--hypothesis-seed=123456789")
    assert seed_rows(plan) == [("hypothesis 123456789", "PYTEST_ADDOPTS=--hypothesis-seed=123456789", "exact",
                                "applied, recorded 123456789")]


def test_no_seeds_draws_them_anew_and_says_so(tmp_path: Path) -> None:
    plan = planned(tmp_path, ["python3", "-m", "pytest", "-q"], HYPOTHESIS_OUT, seeds=False)
    assert "PYTEST_ADDOPTS" not in plan.env
    assert seed_rows(plan) == [("hypothesis 123456789", "drawn anew", "not applied", "--no-seeds")]


def test_a_seed_adds_to_the_recorded_options_variable_and_leaves_the_image_alone(tmp_path: Path) -> None:
    out = "Using --randomly-seed=2294562427\nFAILED test_a.py::test_order\n"
    env = {"PYTEST_ADDOPTS": {"state": "set", "value": "-x"}}
    plan = planned(tmp_path, ["pytest"], out, env=env)
    assert plan.env["PYTEST_ADDOPTS"] == EnvSetting("set", "-x --randomly-seed=2294562427")
    assert image_key(plan) == image_key(planned(tmp_path, ["pytest"], out, seeds=False, env=env))


def test_go_shuffle_seed_replaces_the_recorded_on(tmp_path: Path) -> None:
    out = "-test.shuffle 1796212\n--- FAIL: TestB (0.00s)\nFAIL\n"
    assert planned(tmp_path, ["go", "test", "-shuffle=on", "./..."], out).argv == \
        ("go", "test", "-shuffle=1796212", "./...")
    assert planned(tmp_path, ["go", "test", "-shuffle", "on", "."], out).argv == ("go", "test", "-shuffle", "1796212", ".")
    # run by a script: go reads the flag from GOFLAGS
    plan = planned(tmp_path, ["make", "test"], out)
    assert plan.argv == ("make", "test") and plan.env["GOFLAGS"] == EnvSetting("set", "-shuffle=1796212")


def test_jest_seed_goes_on_jests_command_line_only(tmp_path: Path) -> None:
    out = "Seed:        -1234567\nTests:       1 failed, 2 passed, 3 total\n"
    assert planned(tmp_path, ["npx", "jest", "--randomize"], out).argv == ("npx", "jest", "--randomize", "--seed=-1234567")
    assert planned(tmp_path, ["npm", "test"], out).argv == ("npm", "test", "--", "--seed=-1234567")
    plan = planned(tmp_path, ["make"], out)
    assert plan.argv == ("make",)
    assert seed_rows(plan)[0][1:3] == ("drawn anew", "not applied")


def test_a_seed_in_the_recorded_argv_and_a_recorded_hash_seed_are_named(tmp_path: Path) -> None:
    plan = planned(tmp_path, ["pytest", "--randomly-seed=42"], "", env={"PYTHONHASHSEED": {"state": "set", "value": "7"}})
    assert plan.argv == ("pytest", "--randomly-seed=42")
    assert [r[0] for r in seed_rows(plan)] == ["randomly 42", "PYTHONHASHSEED 7"]
    unseeded = planned(tmp_path, ["pytest"], "", seeds=False, env={"PYTHONHASHSEED": {"state": "set", "value": "7"}})
    assert unseeded.env["PYTHONHASHSEED"].state == "absent"


def test_a_seed_that_is_not_digits_is_not_taken(tmp_path: Path) -> None:
    plan = planned(tmp_path, ["pytest"], "Using --randomly-seed=12;rm -rf /\n@seed(abc)\n")
    assert "PYTEST_ADDOPTS" not in plan.env and not seed_rows(plan)


def test_a_pin_sets_its_settings_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    pin = {"settings": {"GOMAXPROCS": "8", "cpus": "1", "PYTHONHASHSEED": "3"}, "failed": 10, "runs": 10}
    plan = planned(tmp_path, ["go", "test", "."], pin=pin)
    assert plan.env["GOMAXPROCS"] == EnvSetting("set", "8") and plan.cpus == 1
    assert [(f.fact, f.status) for f in plan.fidelity if f.fact.startswith("pin ")] == [
        ("pin GOMAXPROCS", "exact"), ("pin cpus", "exact"), ("pin PYTHONHASHSEED", "exact")]
    assert planned(tmp_path, ["go", "test", "."], pin=pin, seeds=False).cpus is None
    with pytest.raises(CapsuleError, match="pin.settings.GOMAXPROCS: GOMAXPROCS: '8; id' is not an integer"):
        planned(tmp_path, ["go", "test", "."], pin={"settings": {"GOMAXPROCS": "8; id"}, "failed": 1, "runs": 1})
    with pytest.raises(CapsuleError, match="unknown setting 'LD_PRELOAD'"):
        planned(tmp_path, ["go", "test", "."], pin={"settings": {"LD_PRELOAD": "1"}, "failed": 1, "runs": 1})


def test_a_clock_offset_moves_the_recorded_clock(tmp_path: Path) -> None:
    import dataclasses

    from runner.build.seeding import with_setting

    plan = planned(tmp_path, ["node", "t.js"])
    assert with_setting(plan, "clock", "-3600") == (plan, None)  # no clock recorded: nothing to move
    clocked = dataclasses.replace(plan, clock_start="2026-09-27T20:25:46Z")
    moved, how = with_setting(clocked, "clock", "-3600")
    assert (moved.clock_start, how) == ("2026-09-27T19:25:46Z", "clock -3600s")


def test_a_pin_given_for_every_capsule_reaches_one_without_its_own(tmp_path: Path) -> None:
    """bisect: BAD's pin on GOOD's plans too (PlanOptions.pin_settings); a capsule's own pin wins."""
    path = tmp_path / "good.json"
    planned(tmp_path, ["go", "test", "."])  # writes capsule.json
    (tmp_path / "capsule.json").rename(path)
    plan = make_plan(read_capsule(path), SETTINGS, PlanOptions(pin_settings=FrozenMap({"GOMAXPROCS": "8"})))
    assert plan.env["GOMAXPROCS"] == EnvSetting("set", "8")
    own = planned(tmp_path, ["go", "test", "."], pin={"settings": {"GOMAXPROCS": "4"}, "failed": 10, "runs": 10})
    assert own.env["GOMAXPROCS"].value == "4"


def test_a_pin_of_a_negative_jest_seed_is_taken() -> None:
    from runner.verdict.seeds import setting_problem

    assert setting_problem("jest", "-1911746471") is None
    assert setting_problem("jest", str(2**31)) is not None
    assert setting_problem("GOMAXPROCS", "-2") is not None
