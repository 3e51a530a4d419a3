"""Every recorded installed version ends up pinned or named as not applied (issue 21), in the
three formats: twin `resolved.node` / `resolved.python`, NovaFabric `installed_packages`,
CodeInstances (none recorded). The registries are faked (tests/unit/build/conftest.py)."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.build.plan import Plan
from runner.build.plan import PlanOptions
from runner.build.planner import make_plan
from runner.capsules import read_capsule

from tests.support.planning import SETTINGS, pm, row, twin

pytestmark = pytest.mark.usefixtures("registries")

EXAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "examples"


def recorded_packages(path: Path) -> set[tuple[str, str]]:
    """(ecosystem, name) of every recorded installed package, read from the file itself."""
    if path.is_dir():  # NovaFabric: env.lock's installed_packages, PEP 503 names
        env = yaml.safe_load((path / "env.lock").read_text())
        packages = (env.get("python") or {}).get("installed_packages") or []
        return {("python", re.sub(r"[-_.]+", "-", p["name"]).lower()) for p in packages}
    data = json.loads(path.read_text())
    if data.get("format") == "codeinstances/0":
        return set()
    resolved = data.get("resolved") or {}
    return ({("node", n) for n in resolved.get("node") or {}}
            | {("python", re.sub(r"[-_.]+", "-", n).lower()) for n in resolved.get("python") or {}})


def package_rows(plan: Plan) -> dict[tuple[str, str], Any]:
    out = {}
    for f in plan.fidelity:
        if f.fact.startswith(("package node ", "package python ")):
            _, eco, name = f.fact.split(" ", 2)
            out[(eco, name)] = f
    return out


@pytest.mark.parametrize("capsule", [
    EXAMPLES / "twin" / "echarts-new-york.json",
    EXAMPLES / "novafabric" / "minimal-run",
    EXAMPLES / "novafabric" / "01JC4Q7W9Z2M5N8P3R6T1V0X4B",
    EXAMPLES / "codeinstances" / "fetch-greeting.json",
], ids=lambda p: p.name)
@pytest.mark.parametrize("all_runtimes", [False, True])
def test_no_recorded_package_is_missing_from_the_report(capsule: Path, all_runtimes: bool,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("runner.build.planner.resolve_runtime", _any_runtime)
    plan = make_plan(read_capsule(capsule), SETTINGS, PlanOptions(source_dir=str(capsule.parent),
                                                                 all_runtimes=all_runtimes))
    recorded, rows = recorded_packages(capsule), package_rows(plan)
    assert set(rows) == recorded  # one row per recorded package, none made up
    pinned = {("node", n) for n in plan.node_pins} | {("python", n) for n in plan.python_pins}
    for key, f in rows.items():
        assert f.status in ("exact", "approximated", "not applied"), f
        assert (key in pinned) == (f.status != "not applied" or f.replayed == "the lockfile's"), f
        assert f.why, f  # applied how, or why not
    if capsule.name == "minimal-run":  # a python program: its packages are pinned, pip's own is not
        assert rows[("python", "pluggy")].status == "exact"


def _any_runtime(name: str, version: str, base: Any, settings: Any) -> Any:
    from runner.build.plan import Fidelity, Runtime

    return Runtime(name, version, version, "test", True), Fidelity(f"runtime {name}", version, version, "exact")


def test_a_node_package_at_two_versions_is_pinned_as_a_set(tmp_path: Path) -> None:
    plan = twin(tmp_path, ["node", "x.js"], runtimes={"node": "22.23.3"}, tools={"npm": "10.9.9"},
                packageManagers=[pm("npm", "node", "10.9.9", "package-lock.json")],
                resolved={"node": {"destr": ["2.0.5", "2.0.0"], "ms": ["2.1.3"]}})
    assert dict(plan.node_pins.items()) == {"destr": ("2.0.0", "2.0.5"), "ms": "2.1.3"}
    assert row(plan, "package node destr") == ("2.0.0, 2.0.5", "2.0.0, 2.0.5", "exact")
    assert "npm install --no-save" in next(f.why for f in plan.fidelity if f.fact == "package node destr")


def test_without_a_lockfile_the_newest_of_a_set_is_installed_and_the_others_named(tmp_path: Path) -> None:
    plan = twin(tmp_path, ["node", "x.js"], runtimes={"node": "22.23.3"}, tools={"npm": "10.9.9"},
                resolved={"node": {"destr": ["2.0.0", "2.0.5"]}})
    assert dict(plan.node_pins.items()) == {"destr": "2.0.5"}
    found = next(f for f in plan.fidelity if f.fact == "package node destr")
    assert (found.status, found.replayed) == ("approximated", "2.0.5") and "2.0.0 not installed" in found.why


def test_pnpm_and_yarn_drift_is_pinned_with_their_own_means(tmp_path: Path) -> None:
    for manager, how in (("pnpm", "pnpm add"), ("yarn", "resolutions")):
        plan = twin(tmp_path, ["node", "x.js"], runtimes={"node": "22.23.3"}, tools={"npm": "10.9.9"},
                    packageManagers=[pm(manager, "node", None, f"{manager}.lock")],
                    resolved={"node": {"ms": ["2.0.0", "2.1.2"]}})
        assert how in next(f.why for f in plan.fidelity if f.fact == "package node ms")


def test_node_packages_without_node_and_pythons_packaging_tools_are_named_not_applied(tmp_path: Path) -> None:
    plan = twin(tmp_path, ["python3", "x.py"], runtimes={"python": "3.11.2", "node": "99.1.0"},  # no source offers it
                resolved={"node": {"ms": ["2.1.3"]}, "python": {"six": "1.16.0", "pip": "24.3.1", "Setuptools": "75.0"}})
    assert plan.node_pins == {} and dict(plan.python_pins.items()) == {"six": "1.16.0"}
    assert row(plan, "package node ms") == ("2.1.3", "-", "not applied")
    assert row(plan, "package python pip") == ("24.3.1", "-", "not applied")
    assert row(plan, "package python setuptools") == ("75.0", "-", "not applied")
    assert row(plan, "package python six") == ("1.16.0", "1.16.0", "exact")


def test_no_pin_keeps_the_pins_for_the_drift_report_but_says_not_applied(tmp_path: Path) -> None:
    path = tmp_path / "capsule.json"
    twin(tmp_path, ["node", "x.js"], runtimes={"node": "22.23.3"}, tools={"npm": "10.9.9"},
         packageManagers=[pm("npm", "node", "10.9.9", "package-lock.json")], resolved={"node": {"ms": ["2.1.2"]}})
    plan = make_plan(read_capsule(path), SETTINGS, PlanOptions(pin=False))
    assert dict(plan.node_pins.items()) == {"ms": "2.1.2"}  # compared in the build: the drift is listed
    assert row(plan, "package node ms") == ("2.1.2", "the lockfile's", "not applied")


def test_two_spellings_of_one_python_distribution_are_one_pin_and_one_row_that_says_so(tmp_path: Path) -> None:
    plan = twin(tmp_path, ["python3", "x.py"], runtimes={"python": "3.11.2"},
                resolved={"python": {"PyYAML": "6.0.2", "pyyaml": "6.0.1"}})
    assert dict(plan.python_pins.items()) == {"pyyaml": "6.0.2"}
    rows = [f for f in plan.fidelity if f.fact == "package python pyyaml"]
    assert [r.status for r in rows] == ["exact", "not applied"] and "recorded twice" in rows[1].why


def test_what_the_build_could_not_pin_replaces_the_plans_row() -> None:
    from runner.build.pins import unpinned_rows, with_build_rows
    from runner.build.plan import Fidelity

    planned = (Fidelity("package node ms", "2.1.2", "2.1.2", "exact", "pinned"), Fidelity("env TZ", "UTC", "UTC", "exact"))
    found = unpinned_rows([{"name": "ms", "recorded": "2.1.2", "why": "the lockfile does not install it"},
                           {"name": "bad", "recorded": 3}])  # not a row the build writes: left out
    assert with_build_rows(planned, found) == (
        Fidelity("package node ms", "2.1.2", "the lockfile's", "not applied",
                 "found in the build: the lockfile does not install it"), planned[1])


def test_the_builds_unpinned_entries_are_rows_of_their_ecosystem() -> None:
    from runner.build.pins import unpinned_rows
    from runner.build.plan import Fidelity

    found = unpinned_rows([  # as py-deps.py writes them (an ecosystem each) beside npm-deps.js's (none: node)
        {"name": "demo", "recorded": "0.1.0", "why": "the lockfile does not install it", "ecosystem": "python"},
        {"name": "six", "recorded": "1.16.0", "installed": "1.15.0", "ecosystem": "python",
         "why": "the lockfile installs 1.15.0 from a git checkout, not from an index: pip would replace it"},
        {"name": "left-pad", "recorded": "1.3.0", "why": "the lockfile does not install it"},
        {"name": "x", "recorded": "1", "why": "w", "ecosystem": "cobol"}])  # no such helper: left out
    assert found == (
        Fidelity("package python demo", "0.1.0", "the lockfile's", "not applied",
                 "found in the build: the lockfile does not install it"),
        Fidelity("package python six", "1.16.0", "1.15.0", "not applied",
                 "found in the build: the lockfile installs 1.15.0 from a git checkout, not from an index: "
                 "pip would replace it"),
        Fidelity("package node left-pad", "1.3.0", "the lockfile's", "not applied",
                 "found in the build: the lockfile does not install it"))


def test_every_recorded_python_package_is_applied_or_named_once_the_build_has_spoken(tmp_path: Path) -> None:
    """A uv project's recorded packages: the plan pins them all; the build's unpinned entries replace
    the rows of those it could not pin, and only those (the second spelling's row stays)."""
    from runner.build.pins import unpinned_rows, with_build_rows

    plan = twin(tmp_path, ["python3", "x.py"], runtimes={"python": "3.11.2"}, tools={"uv": "0.9.9"},
                packageManagers=[pm("uv", "python", "0.9.9", "uv.lock")],
                resolved={"python": {"six": "1.15.0", "demo": "0.1.0", "PyYAML": "6.0.2", "pyyaml": "6.0.1"}})
    assert dict(plan.python_pins.items()) == {"demo": "0.1.0", "pyyaml": "6.0.2", "six": "1.15.0"}
    found = unpinned_rows([{"name": "demo", "recorded": "0.1.0", "why": "the lockfile does not install it",
                            "ecosystem": "python"},
                           {"name": "pyyaml", "recorded": "6.0.2", "why": "the lockfile does not install it",
                            "ecosystem": "python"}])
    rows = [(f.fact, f.replayed, f.status, f.why) for f in with_build_rows(plan.fidelity, found)
            if f.fact.startswith("package python ")]
    assert rows == [  # in the capsule's order of names
        ("package python pyyaml", "the lockfile's", "not applied", "found in the build: the lockfile does not install it"),
        ("package python demo", "the lockfile's", "not applied", "found in the build: the lockfile does not install it"),
        ("package python pyyaml", "-", "not applied",
         "the same distribution as PyYAML 6.0.2, recorded twice: that entry is used"),
        ("package python six", "1.15.0", "exact",
         "kept when the uv lockfile installs it, else pinned with pip over it (checked in the build)")]
