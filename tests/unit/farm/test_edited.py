"""A farm history edited by hand (or written by another tool) that breaks its own invariants is
one line naming the file and the row, exit 2, on every command that reads it: never an
internal error."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from runner.cli.main import main
from runner.farm.records import Rate
from runner.farm.store import NightEntry, SqlStore

from tests.envelope import envelope_of
from tests.unit.farm.records import night, result

ROW = "results row (night_id n2, capsule_id aaaa1111)"


def _history(path: Path, finish_last: bool = True) -> Path:
    store = SqlStore(path)
    for day, nid in enumerate(("n1", "n2"), 1):
        store.create_night(night(nid, f"2026-12-0{day}T02:00:00Z", None), {"attempts": 3},
                           [NightEntry("aaaa1111", "caps/a.json", "twin")])
        store.add_result(result(nid, "aaaa1111", "flaky", path="caps/a.json", rate=Rate.of(2, 5),
                                signatures=("exit1:x", "exit0:y")))
        if finish_last or nid == "n1":
            store.finish_night(nid, f"2026-12-0{day}T03:00:00Z", 1, 1)
    store.close()
    return path


def _edit(path: Path, sql: str) -> None:
    """What a hand edit does: the history's own triggers (verdicts never change) dropped first."""
    with sqlite3.connect(path) as conn:
        conn.executescript("DROP TRIGGER IF EXISTS results_no_update; DROP TRIGGER IF EXISTS nights_finish_once;"
                           + sql)
    conn.close()


@pytest.mark.parametrize("edit, problem", [
    ("UPDATE results SET rate_k = 7 WHERE night_id = 'n2'", "7 failures out of 5 runs"),
    ("UPDATE results SET rate_k = -1 WHERE night_id = 'n2'", "-1 failures out of 5 runs"),
    ("UPDATE results SET rate_n = NULL WHERE night_id = 'n2'", "two whole numbers, or neither set"),
    ("UPDATE results SET rate_k = 'two' WHERE night_id = 'n2'", "two whole numbers, or neither set"),
    ("UPDATE results SET signatures = '{not json' WHERE night_id = 'n2'", "signatures is not a JSON list of texts"),
    ("UPDATE results SET key_lines = '[1, 2]' WHERE night_id = 'n2'", "key_lines is not a JSON list of texts"),
    ("UPDATE results SET also_at = '3' WHERE night_id = 'n2'", "also_at is not a JSON list of texts"),
    ("UPDATE results SET rate_low = 'x' WHERE night_id = 'n2'", "rate bounds 'x'..0.7"),
])
@pytest.mark.parametrize("command", [["farm", "report"], ["farm", "report", "--json"], ["farm", "history", "aaaa"]])
def test_an_edited_history_is_one_line_naming_the_row_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: str, problem: str, command: list[str]) -> None:
    db = _history(tmp_path / "farm.sqlite")
    _edit(db, edit)
    rc = main([*command, "--db", str(db)])
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1, err
    assert str(db) in lines[0] and ROW in lines[0] and problem in lines[0], lines[0]
    assert "internal error" not in err and "Traceback" not in err
    if "--json" in command:
        doc = envelope_of(out)
        assert (doc["exit_code"], doc["result"], doc["error"]["kind"]) == (2, None, "history")


def test_a_resumed_night_whose_options_were_edited_is_one_line_exit_2(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    db = _history(tmp_path / "farm.sqlite", finish_last=False)
    _edit(db, "UPDATE nights SET options = '[\"not\", \"an object\"]' WHERE id = 'n2'")
    assert main(["farm", "run", "--resume", "--db", str(db)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "nights row (id n2): options is not a JSON object" in lines[0], lines


def test_an_unedited_history_reads_as_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = _history(tmp_path / "farm.sqlite")
    assert main(["farm", "report", "--json", "--db", str(db)]) == 0
    rows = envelope_of(capsys.readouterr().out)["result"]["rows"]
    assert [(r["verdict"], r["rate"]["failed"], r["rate"]["runs"]) for r in rows] == [("flaky", 4, 10)]
