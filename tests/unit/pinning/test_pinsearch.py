"""The pin search over a seeded stand-in of a flaky command: the axes a command exposes, the first
setting that fails every run is the pin, each axis's pooled rate when none does, the budget."""
from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

from runner.build.plan import Plan, PlanOptions
from runner.build.planner import make_plan
from runner.capsules import read_capsule
from runner.capsules.model import Capsule
from runner.pinning.axes import candidates, exposed
from runner.pinning.pinsearch import Search, axis_rates, command_line, search
from tests.support.planning import SETTINGS, twin_doc, written


def capsule_of(tmp_path: Path, argv: list[str], output: str, **fields: Any) -> tuple[Capsule, Plan]:
    capsule = read_capsule(written(tmp_path, twin_doc(argv, output, **fields)))
    return capsule, make_plan(capsule, SETTINGS, PlanOptions(seeds=False))


def flaky(rate: float, always: dict[str, str], seed: int = 7) -> Any:
    """A stand-in run: fails always under the `always` variables, else at `rate` (seeded)."""
    rng, lock, runs = random.Random(seed), threading.Lock(), []

    def run(plan: Plan) -> bool:
        with lock:
            runs.append(plan)
            if all(plan.env.get(k) is not None and plan.env[k].value == v for k, v in always.items()) and always:
                return True
            return rng.random() < rate
    run.runs = runs  # type: ignore[attr-defined]
    return run


GO_OUT = "-test.shuffle 1796212\n--- FAIL: TestEmpty (0.00s)\nFAIL\n"


def test_a_go_test_exposes_its_shuffle_seed_gomaxprocs_and_the_cpus(tmp_path: Path) -> None:
    capsule, plan = capsule_of(tmp_path, ["go", "test", "-shuffle=on", "."], GO_OUT)
    assert exposed(capsule).frameworks == {"go-shuffle"} and not exposed(capsule).python
    cands = candidates(capsule, plan, cores=2)
    assert cands[0].label == "go-shuffle=1796212"  # the recorded seed first, stated as a setting
    assert [c.axis for c in cands].count("GOMAXPROCS") == 4 and [c.axis for c in cands].count("cpus") == 2
    assert not any(c.axis in ("PYTHONHASHSEED", "clock") for c in cands)
    assert all(c.settings["go-shuffle"] == "1796212" for c in cands if c.axis != "order")  # over the recorded run


def test_the_first_setting_failing_every_run_is_the_pin(tmp_path: Path) -> None:
    capsule, plan = capsule_of(tmp_path, ["go", "test", "."], "--- FAIL: TestRace (0.00s)\nFAIL\n")
    run = flaky(0.5, {"GOMAXPROCS": "8"})
    tried, pin, over = search(capsule, plan, candidates(capsule, plan, 2), run, Search(10, 2, None, 0.95),
                              lambda _: None)
    assert pin is not None and pin.label == "GOMAXPROCS=8" and not over
    (mine,) = [t for t in tried if t.setting == "GOMAXPROCS=8"]
    assert (mine.rate.failed, mine.rate.runs) == (10, 10)
    assert all(t.rate.failed < t.rate.runs for t in tried if t.setting != "GOMAXPROCS=8" and not t.cut_short)
    pinned_plans = [p for p in run.runs if p.env.get("GOMAXPROCS") is not None and p.env["GOMAXPROCS"].value == "8"]
    assert len(pinned_plans) == 10
    assert command_line(pinned_plans[0]) == "GOMAXPROCS=8 go test ."


def test_nothing_pins_a_failure_no_axis_moves_and_each_axis_has_its_rate(tmp_path: Path) -> None:
    capsule, plan = capsule_of(tmp_path, ["python3", "-m", "pytest", "-q"], "FAILED t.py::test_x\n")
    tried, pin, _ = search(capsule, plan, candidates(capsule, plan, 2), flaky(0.5, {}), Search(10, 2, None, 0.95),
                           lambda _: None)
    assert pin is None
    axes = {a.axis: a for a in axis_rates(tried, 0.95)}
    assert set(axes) == {"as recorded", "PYTHONHASHSEED", "cpus"}
    assert all(a.rate.runs >= 2 * a.settings and 0 < a.rate.failed < a.rate.runs for a in axes.values())


def test_the_budget_ends_the_search(tmp_path: Path) -> None:
    capsule, plan = capsule_of(tmp_path, ["go", "test", "."], "FAIL\n")
    tried, pin, over = search(capsule, plan, candidates(capsule, plan, 2), flaky(1.0, {}), Search(10, 1, 0.0, 0.95),
                              lambda _: None)
    assert over and pin is None and all(t.cut_short for t in tried)


def test_a_script_beside_pytest_gets_no_pytest_axes(tmp_path: Path) -> None:
    capsule, plan = capsule_of(tmp_path, ["python3", "coin_flip.py"], "tails\n",
                               resolved={"python": {"pytest": "8.3.4", "hypothesis": "6.170.27"}})
    assert exposed(capsule).frameworks == frozenset() and exposed(capsule).python
    assert {c.axis for c in candidates(capsule, plan, 2)} == {"as recorded", "PYTHONHASHSEED", "cpus"}
