"""`replay verify` runs the checks of the capsule's own content that replay runs before
building: a value replay refuses (exit 2) makes the capsule INVALID (exit 1), never valid."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from runner.cli.main import main
from tests.examples import BUNDLE, TZ_CAPSULE, json_variant

Change = Callable[[dict[str, Any]], None]


def _set(*path: str, value: Any) -> Change:
    def change(data: dict[str, Any]) -> None:
        node = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return change


def _node_package(value: str, as_name: bool) -> Change:
    def change(data: dict[str, Any]) -> None:
        node = data.setdefault("resolved", {}).setdefault("node", {})
        if as_name:
            node[value] = ["1.0.0"]
        else:
            node["is-number"] = [value]
    return change


CASES: dict[str, Change] = {
    "runtime version with a newline": _set("runtimes", "node", value="22.23.3\nRUN curl evil"),
    "package name that is a command": _node_package("$(touch /pwned)", as_name=True),
    "package version with a quote": _node_package("1.0.0'; rm -rf /", as_name=False),
    "lockfile path climbing out": lambda d: d["packageManagers"][0].update(lockfile="../../etc/passwd"),
    "cwd with a newline": _set("command", "cwd", value="src\nRUN id"),
    "commit that is an option": _set("repo", "commit", value="--upload-pack=touch /pwned"),
    "env name with a space": lambda d: d["env"].update({"A B": {"state": "set", "value": "1"}}),
    "empty argv": _set("command", "argv", value=[]),
}


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPLAY_CACHE", str(tmp_path / "cache"))


@pytest.mark.parametrize("case", sorted(CASES))
def test_what_replay_refuses_verify_calls_invalid(case: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    capsule = json_variant(TZ_CAPSULE, tmp_path, CASES[case])
    # replay's planner refuses it (past the verification some of these fail too: render refuses those, exit 1)
    assert main(["render", str(capsule), "--repo", str(BUNDLE), "--allow-unverified"]) == 2
    capsys.readouterr()
    assert main(["verify", str(capsule)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("INVALID") and "replay refuses it before building" in out
    assert "\nRUN" not in out  # the value is escaped on its one line


def test_the_untouched_example_stays_valid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(TZ_CAPSULE)]) == 0
    assert "values replay builds with" in capsys.readouterr().out
