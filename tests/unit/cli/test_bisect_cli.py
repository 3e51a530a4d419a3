"""`replay bisect BAD --good GOOD`: tables, --json, exit codes (on a fake replayer)."""
from __future__ import annotations

from typing import Any

import pytest

from runner.cli.main import main
from tests.unit.bisect.world import FakeReplayer, Rule, capsule, fails_when, node_of, tz_rule, use
from tests.envelope import result_of


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")


def bisect_json(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict[str, Any]]:
    code = main(["bisect", "bad.json", "--good", "good.json", "--json", *extra])
    return code, result_of(capsys.readouterr().out)


def test_found_exits_0_with_json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    fake = FakeReplayer(tz_rule())
    options = use(monkeypatch, fake)
    code, data = bisect_json(capsys, "--timeout", "42", "--jobs", "2")
    assert code == 0
    assert data["status"] == "found" and data["minimal"] == ["env:TZ"]
    assert (data["bad"], data["good"]) == ("bad.json", "good.json")
    assert [t["role"] for t in data["trials"][:2]] == ["good end", "bad end"]
    assert data["trials"][0]["verdict"] == "not-reproduced" and data["trials"][1]["verdict"] == "reproduced"
    assert options[0].timeout == 42.0
    assert fake.closed


def test_tables(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    use(monkeypatch, FakeReplayer(tz_rule()))
    assert main(["bisect", "bad.json", "--good", "good.json"]) == 0
    out = capsys.readouterr().out
    assert "candidates" in out and "America/New_York" in out
    assert "none (good end)" in out and "all 4 (bad end)" in out
    assert "not varied" in out and "source:commit" in out
    assert "different commits" in out
    assert out.rstrip().endswith("minimal set: env:TZ (confidence 0.95, asked 0.95)")


def test_also_failing_table(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def rule(p: Any, n: int) -> tuple[int, str]:
        if node_of(p).startswith("20."):
            return 1, "exit1:0aee0834ac9c4d2d"
        return (2, "exit2:1111111111111111") if p.node_pins["lodash"] == "4.17.20" else (0, "exit0:x")

    use(monkeypatch, FakeReplayer(rule))
    assert main(["bisect", "bad.json", "--good", "good.json"]) == 0
    out = capsys.readouterr().out
    assert "also failing, but not the recorded way" in out and "exit2:1111111111111111" in out


@pytest.mark.parametrize(("rule", "status"), [
    (fails_when(lambda p: True), "baseline fails"), (fails_when(lambda p: False), "not-reproduced"),
])
def test_negative_answers_exit_1(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                 rule: Rule, status: str) -> None:
    use(monkeypatch, FakeReplayer(rule))
    code, data = bisect_json(capsys)
    assert (code, data["status"], data["minimal"]) == (1, status, [])
    assert main(["bisect", "bad.json", "--good", "good.json"]) == 1
    assert status in capsys.readouterr().out


def test_wrong_way_round_exits_2_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    use(monkeypatch, FakeReplayer(tz_rule(), bad=capsule("bad.json", False)))
    assert main(["bisect", "bad.json", "--good", "good.json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip().splitlines() == [
        "replay: error: bad.json: the bad capsule recorded a pass; BAD must be a run that failed"]


def test_unbuildable_end_exits_3(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    fake = FakeReplayer(tz_rule(), broken=lambda p: node_of(p).startswith("20."))
    use(monkeypatch, fake)
    assert main(["bisect", "bad.json", "--good", "good.json"]) == 3
    assert "no such release" in capsys.readouterr().err
    assert fake.closed


@pytest.mark.parametrize("args", [
    ["bisect", "bad.json"],  # --good is required
    ["bisect", "bad.json", "--good", "good.json", "--commits", "--sweep", "runtime:node"],  # one or the other
    ["bisect", "bad.json", "--good", "good.json", "--sweep"],
    ["bisect", "bad.json", "--good", "good.json", "--attempts", "0"],
    ["bisect", "bad.json", "--good", "good.json", "--jobs", "0"],
])
def test_usage_errors_exit_2(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    use(monkeypatch, FakeReplayer(tz_rule()))
    assert main(args) == 2


def test_junit_names_the_minimal_set(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                     tmp_path: Any) -> None:
    from tests.support.reports import valid

    use(monkeypatch, FakeReplayer(tz_rule()))
    out = tmp_path / "bisect.xml"
    assert main(["bisect", "bad.json", "--good", "good.json", "--junit", str(out)]) == 0
    capsys.readouterr()
    [case] = valid(out.read_text(encoding="utf-8")).findall(".//testcase")
    failure = case.find("failure")
    assert case.get("name") == "bad.json" and failure is not None and "env:TZ" in (failure.text or "")
