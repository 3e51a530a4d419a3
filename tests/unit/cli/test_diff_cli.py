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


def side(tmp_path: Path, name: str, change: Callable[[dict[str, Any]], None]) -> Path:
    """Another variant, in a directory of its own."""
    (tmp_path / name).mkdir()
    return json_variant(TWIN, tmp_path / name, change)


def diff_json(a: Path, b: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["diff", str(a), str(b), "--json"])
    return code, result_of(capsys.readouterr().out)


def keys(data: dict[str, Any]) -> list[str]:
    return [f["key"] for f in data["differences"]]


def by_group(data: dict[str, Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in data["differences"]:
        out.setdefault(f["group"], []).append(f["key"])
    return out


def test_identical_capsules_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = diff_json(TWIN, TWIN, capsys)
    assert code == 0
    assert data["differ"] is False and data["differences"] == [] and data["not_comparable"] == []
    assert data["a"]["path"] == data["b"]["path"] == str(TWIN) and data["next"]["argv"] is None
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
    assert by_group(data) == expected
    assert all(f["could_change_outcome"] for f in data["differences"])


def test_tz_change_shows_both_values_in_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = variant(tmp_path, set_tz)
    assert main(["diff", str(TWIN), str(b)]) == 1
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "env:TZ" in x)
    assert "America/New_York" in line and "Europe/Berlin" in line
    assert "2 difference(s) that could change the outcome" in out


def test_recorded_outcome_changes_are_not_differences(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def outcome(d: dict[str, Any]) -> None:
        d["createdAt"] = "2027-01-01T00:00:00.000Z"
        d["command"]["durationMs"] = 12345
        d["command"]["failure"]["signature"] = "exit1:ffffffffffffffff"

    code, data = diff_json(TWIN, variant(tmp_path, outcome), capsys)
    assert code == 0 and data["differences"] == []


def test_twin_against_codeinstances_lists_not_comparable(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = diff_json(TWIN, CI, capsys)
    assert keys(data) == ["command:argv"]  # the commands differ; nothing else is comparable
    assert code == 1
    lone = {n["key"]: n for n in data["not_comparable"]}
    assert {"platform:distro", "runtime:node", "env:TZ", "locale:timeZone", "http:calls", "pin:node"} <= set(lone)
    assert lone["http:calls"]["recorded_in"] == "b"
    assert lone["platform:distro"] == {"key": "platform:distro", "group": "platform", "recorded_in": "a",
                                       "value": "garuda", "shown": "garuda",
                                       "note": "codeinstances does not record it"}  # fmt: skip
    assert lone["pin:node"]["value"] == 3 and lone["pin:node"]["shown"] == "3 packages"
    assert not set(lone) & set(keys(data))


def test_novafabric_pair(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = diff_json(MINIMAL, NOVA, capsys)
    assert code == 1
    found = keys(data)
    assert {"runtime:python", "locale:timeZone", "locale:lang", "pin:python:six", "input:poem.txt"} <= set(found)
    assert main(["diff", str(TWIN), str(NOVA), "--all"]) == 1
    out = capsys.readouterr().out
    assert "not comparable (not counted)" in out and "platform:distro" in out
    assert main(["diff", str(TWIN), str(NOVA)]) == 1
    out = capsys.readouterr().out
    assert "platform:distro" not in out and "fact(s) not comparable" in out  # counted, listed with --all


def test_unreadable_capsule_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(TWIN), str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def passing(d: dict[str, Any]) -> None:
    """B: the same run in Berlin, where it passed."""
    set_tz(d)
    d["command"].update(exitCode=0, outcome="pass", failure=None)


def test_tz_only_diff_is_short_and_names_the_bisect(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    b = variant(tmp_path, passing)
    assert main(["diff", str(TWIN), str(b)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) <= 15, "\n".join(lines)
    assert lines[0].startswith("A: ") and "recorded fail exit 1, exit1:0aee0834ac9c4d2d" in lines[0]
    assert lines[1].startswith("B: ") and "recorded pass" in lines[1]
    assert lines[-1] == f"next: replay bisect {TWIN} --good {b}"  # the failing one is A, from the outcomes
    swapped_code = main(["diff", str(b), str(TWIN)])
    assert swapped_code == 1 and capsys.readouterr().out.splitlines()[-1] == f"next: replay bisect {TWIN} --good {b}"
    code, data = diff_json(TWIN, b, capsys)
    assert data["a"]["outcome"]["failed"] is True and data["b"]["outcome"] == {
        "failed": False, "exit_code": 0, "signal": None, "signature": None}
    assert data["next"]["argv"] == ["replay", "bisect", str(TWIN), "--good", str(b)]


def many_pins(d: dict[str, Any]) -> None:
    d["resolved"]["node"] = {f"pkg-{i}": ["2.0.0"] for i in range(40)}


def test_dependency_changes_are_one_counted_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = side(tmp_path, "a", lambda d: d["resolved"].update(node={f"pkg-{i}": ["1.0.0"] for i in range(40)}))
    b = variant(tmp_path, many_pins)
    assert main(["diff", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "pin:node:* 40 package(s) differ (40 another version)" in out and "pkg-7" not in out
    assert main(["diff", str(a), str(b), "--all"]) == 1
    assert "pin:node:pkg-7" in capsys.readouterr().out
    _, data = diff_json(a, b, capsys)
    assert len([k for k in keys(data) if k.startswith("pin:node:")]) == 40  # JSON lists every key


def test_equal_by_name_variables_are_counted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def unrecorded(d: dict[str, Any]) -> None:
        for i in range(30):
            d["env"][f"SECRET_{i}"] = {"state": "set"}

    a = side(tmp_path, "a", unrecorded)
    b = variant(tmp_path, lambda d: (unrecorded(d), set_tz(d)))
    assert main(["diff", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "SECRET_1" not in out and "31 fact(s) equal by name only, values not recorded: env 31" in out
    assert len(out.splitlines()) <= 15
    _, data = diff_json(a, b, capsys)
    assert len(data["equal_without_values"]) == 31


def test_plain_when_piped_and_no_split_identifier_when_narrow(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    b = variant(tmp_path, lambda d: d["repo"].update(commit="f" * 40))
    assert main(["diff", str(TWIN), str(b), "--all"]) == 1
    out = capsys.readouterr().out
    assert all(line == line.rstrip() for line in out.splitlines())
    assert not set(out) & set("─│┃━┏┡└┗╇")
    assert all(len(line) <= 60 for line in out.splitlines() if "/" not in line), out  # paths may run long
    assert "ffffffffffff" in out and "f" * 13 not in out  # a commit in its short form, whole
