"""`replay diff A B`: exit 1 when a fact that could change the outcome differs."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from runner.cli.main import main
from tests.examples import CI, MINIMAL, NOVA, TWIN, json_variant
from tests.envelope import result_of




def variant(tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of the twin example with one change."""
    return json_variant(TWIN, tmp_path, change)


def diff_json(a: Path, b: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["diff", str(a), str(b), "--json"])
    return code, result_of(capsys.readouterr().out)


def keys(data: dict[str, Any]) -> list[str]:
    return [f["key"] for facts in data["groups"].values() for f in facts]


def test_identical_capsules_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = diff_json(TWIN, TWIN, capsys)
    assert code == 0
    assert data["differ"] is False and data["groups"] == {} and data["not_comparable"] == []
    assert main(["diff", str(TWIN), str(TWIN)]) == 0
    assert "no difference that could change the outcome" in capsys.readouterr().out


def set_tz(d: dict[str, Any]) -> None:
    d["env"]["TZ"]["value"] = "Europe/Berlin"
    d["locale"]["timeZone"] = "Europe/Berlin"


def set_node(d: dict[str, Any]) -> None:
    d["runtimes"]["node"] = "20.18.0"


def set_dep(d: dict[str, Any]) -> None:
    d["resolved"]["node"]["@babel/compat-data"] = ["7.27.1"]


def set_diff(d: dict[str, Any]) -> None:
    d["repo"]["diff"] = "diff --git a/a.js b/a.js\n--- a/a.js\n+++ b/a.js\n@@ -1 +1 @@\n-1\n+2\n"
    d["repo"]["dirty"] = True


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (set_tz, {"env": ["env:TZ"], "locale": ["locale:timeZone"]}),
        (set_node, {"runtimes": ["runtime:node"]}),
        (set_dep, {"resolved packages": ["pin:node:@babel/compat-data"]}),
        (set_diff, {"repo": ["source:diff", "source:dirty"]}),
    ],
    ids=["tz", "node", "dep", "diff"],
)
def test_a_changed_fact_exits_1_with_its_key(
    change: Callable[[dict[str, Any]], None], expected: dict[str, list[str]], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    b = variant(tmp_path, change)
    code, data = diff_json(TWIN, b, capsys)
    assert code == 1 and data["differ"] is True
    assert {g: [f["key"] for f in fs] for g, fs in data["groups"].items()} == expected
    assert all(f["could_change_outcome"] for fs in data["groups"].values() for f in fs)


def test_tz_change_shows_both_values_in_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = variant(tmp_path, set_tz)
    assert main(["diff", str(TWIN), str(b)]) == 1
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "env:TZ" in x)
    assert "America/New_York" in line and "Europe/Berlin" in line and "yes" in line
    assert "2 difference(s) that could change the outcome" in out


def test_recorded_outcome_changes_are_not_differences(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def outcome(d: dict[str, Any]) -> None:
        d["createdAt"] = "2027-01-01T00:00:00.000Z"
        d["command"]["durationMs"] = 12345
        d["command"]["failure"]["signature"] = "exit1:ffffffffffffffff"

    code, data = diff_json(TWIN, variant(tmp_path, outcome), capsys)
    assert code == 0 and data["groups"] == {}


def test_twin_against_codeinstances_lists_not_comparable(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = diff_json(TWIN, CI, capsys)
    assert keys(data) == ["command:argv"]  # the commands differ; nothing else is comparable
    assert code == 1
    lone = {n["key"]: n for n in data["not_comparable"]}
    assert {"platform:distro", "runtime:node", "env:TZ", "locale:timeZone", "http:calls", "pin:node"} <= set(lone)
    assert lone["http:calls"]["recorded_in"] == "b"
    assert lone["platform:distro"] == {"key": "platform:distro", "recorded_in": "a", "value": "garuda",
                                       "note": "codeinstances does not record it", "group": "platform"}  # fmt: skip
    assert not set(lone) & set(keys(data))


def test_novafabric_pair(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = diff_json(MINIMAL, NOVA, capsys)
    assert code == 1
    found = keys(data)
    assert {"runtime:python", "locale:timeZone", "locale:lang", "pin:python:six", "input:poem.txt"} <= set(found)
    assert main(["diff", str(TWIN), str(NOVA)]) == 1
    out = capsys.readouterr().out
    assert "not comparable (not counted)" in out and "platform:distro" in out


def test_unreadable_capsule_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(TWIN), str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
