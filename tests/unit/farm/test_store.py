"""The farm's history store on a real SQLite file: migrations, immutability, resume bookkeeping."""
from __future__ import annotations

import dataclasses
import re
from dataclasses import replace
import sqlite3
from pathlib import Path

import pytest

from runner.farm import schema
from runner.farm.records import Rate
from runner.farm.store import NightEntry, SqlStore, StoreError, connect

from tests.unit.farm.records import attempt, night, result

ENTRIES = [NightEntry("c1", "caps/a.json", "twin"), NightEntry("c2", "caps/b", "novafabric", ("copy/b",))]


@pytest.fixture
def store(tmp_path: Path) -> SqlStore:
    return SqlStore(tmp_path / "farm.sqlite")


def _sql(path: Path, statement: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(statement).fetchall()


def test_a_new_history_is_at_the_latest_schema_in_wal_mode(store: SqlStore) -> None:
    assert _sql(store.path, "SELECT version FROM schema_version ORDER BY version") == [(v.version,) for v in schema.MIGRATIONS] == [(1,), (2,), (3,), (4,), (5,)]
    assert _sql(store.path, "PRAGMA journal_mode") == [("wal",)]


def test_an_older_history_is_migrated_keeping_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with connect(path).begin() as conn:
        assert schema.migrate(conn, upto=1) == [1]
        conn.execute("INSERT INTO nights (id, started_at, sources, options, replay_version) "
                     "VALUES ('n1', '2026-11-30T00:00:00Z', '[]', '{}', '0.0.9')")
    store = SqlStore(path)
    assert _sql(path, "SELECT max(version) FROM schema_version") == [(schema.LATEST,)]
    assert [n.id for n in store.history().nights] == ["n1"]
    store.add_result(result("n1", "c1"))
    with pytest.raises(sqlite3.DatabaseError, match="never changed"):  # version 2's trigger is in place
        _sql(path, "UPDATE results SET verdict = 'fixed'")


def test_a_version_4_history_gains_signature_sets_and_what_was_not_applied(tmp_path: Path) -> None:
    """Results written before version 5 read back with their one signature as the set, no
    fidelity notes and the 95 % their rates were stated at; new results keep all three."""
    path = tmp_path / "v4.sqlite"
    with connect(path).begin() as conn:
        assert schema.migrate(conn, upto=4) == [1, 2, 3, 4]
        conn.execute("INSERT INTO nights (id, started_at, sources, options, replay_version) "
                     "VALUES ('n1', '2026-11-30T00:00:00Z', '[]', '{}', '0.0.9')")
        conn.execute("INSERT INTO results (night_id, capsule_id, path, format, verdict, signature, key_lines, reason, "
                     "rate_k, rate_n, rate_low, rate_high, duration_s, replay_version, finished_at, also_at) VALUES "
                     "('n1', 'old', 'caps/old.json', 'twin', 'flaky', 'exit1:aaaa', '[]', '', 2, 5, 0.1176, 0.7693, "
                     "1.0, '0.0.9', '2026-11-30T01:00:00Z', '[]')")
    store = SqlStore(path)
    [old] = store.night("n1").results
    assert (old.signatures, old.not_applied, old.rate) == (("exit1:aaaa",), (), Rate(2, 5, 0.1176, 0.7693, 0.95))
    assert store.marks("n1") == [("old", "flaky", "exit1:aaaa", None, None, 2, 5, None)]
    store.add_result(result("n1", "new", "flaky", signature="exit0:bbbb", signatures=("exit0:bbbb", "exit1:aaaa"),
                            rate=Rate.of(2, 5, 0.99), not_applied=("env API_KEY: not applied (value not recorded)",)))
    new = next(r for r in store.night("n1").results if r.capsule_id == "new")
    assert (new.signatures, new.rate, new.not_applied) == (("exit0:bbbb", "exit1:aaaa"), Rate.of(2, 5, 0.99),
                                                           ("env API_KEY: not applied (value not recorded)",))


def test_a_history_from_a_newer_replay_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    SqlStore(path).close()
    _sql(path, "INSERT INTO schema_version VALUES (99, 'later')")
    with pytest.raises(StoreError, match="version 99 is newer than this replay understands"):
        SqlStore(path)


def test_a_file_that_is_not_a_database_is_one_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not sqlite at all " * 100)
    with pytest.raises(StoreError) as info:
        SqlStore(path)
    assert str(path) in info.value.line() and info.value.exit_code == 2


def test_reading_a_missing_history_does_not_create_one(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no farm history here"):
        SqlStore(tmp_path / "none.sqlite", create=False)
    assert not (tmp_path / "none.sqlite").exists()


def test_a_verdict_is_written_once_and_never_changed_or_deleted(store: SqlStore) -> None:
    store.create_night(night("n1", "2026-12-01T00:00:00Z", None), {"attempts": 3}, ENTRIES)
    store.add_result(result("n1", "c1", "reproduced"))
    with pytest.raises(StoreError, match="already has a verdict"):
        store.add_result(result("n1", "c1", "flaky"))
    for statement in ("UPDATE results SET verdict = 'fixed'", "DELETE FROM results"):
        with pytest.raises(sqlite3.DatabaseError, match="never"):
            _sql(store.path, statement)
    assert [r.verdict for r in store.history().nights[0].results] == ["reproduced"]


def test_an_attempt_goes_from_started_to_finished_once(store: SqlStore) -> None:
    store.create_night(night("n1", "2026-12-01T00:00:00Z", None), {}, ENTRIES)
    started = attempt("n1", "c1", 1)
    store.start_attempt(started)
    with pytest.raises(StoreError, match="already recorded"):
        store.start_attempt(started)
    done = dataclasses.replace(started, state="finished", finished_at="t", classification="recorded", exit_code=1)
    store.finish_attempt(done)
    with pytest.raises(StoreError, match="already finished"):
        store.finish_attempt(dataclasses.replace(done, exit_code=0))
    with pytest.raises(sqlite3.DatabaseError, match="never changed"):
        _sql(store.path, "UPDATE attempts SET exit_code = 0")
    with pytest.raises(sqlite3.DatabaseError, match="never deleted"):
        _sql(store.path, "DELETE FROM attempts")
    [back] = store.attempts("n1", "c1", "recorded")
    assert (back.state, back.exit_code, back.classification) == ("finished", 1, "recorded")


def test_the_unfinished_night_is_what_resume_continues(store: SqlStore) -> None:
    assert store.open_night() is None
    store.create_night(night("n1", "2026-12-01T00:00:00Z", None, ref="abc1234", sources=("caps",)),
                       {"attempts": 5}, ENTRIES)
    store.start_attempt(attempt("n1", "c1", 1))  # killed before it finished
    store.add_result(result("n1", "c2", "broken", reason="does not verify"))
    opened = store.open_night()
    assert opened is not None
    assert (opened.night.id, opened.night.ref, opened.options["attempts"]) == ("n1", "abc1234", 5)
    assert list(opened.entries) == ENTRIES
    assert store.judged("n1") == {"c2"}
    assert [a.state for a in store.attempts("n1", "c1", "recorded")] == ["started"]
    store.finish_night("n1", "2026-12-01T01:00:00Z", images=2, builds=1)
    assert store.open_night() is None
    with pytest.raises(StoreError, match="already finished"):
        store.finish_night("n1", "later", 0, 0)
    assert (store.history().nights[0].images, store.history().nights[0].builds) == (2, 1)


def test_results_read_back_with_their_finished_attempts_only(store: SqlStore) -> None:
    store.create_night(night("n1", "2026-12-01T00:00:00Z", None), {}, ENTRIES)
    store.start_attempt(attempt("n1", "c1", 1))  # abandoned: never counts
    for i, kind in ((2, "recorded"), (3, "pass")):
        rec = attempt("n1", "c1", i)
        store.start_attempt(rec)
        store.finish_attempt(dataclasses.replace(rec, state="finished", classification=kind, key_lines=("E x",)))
    store.add_result(result("n1", "c1", "flaky", rate=Rate(1, 2, 0.09, 0.91), key_lines=("E x",),
                            also_at=("other/a.json",)))
    [r] = store.history().nights[0].results
    assert [(a.index, a.classification) for a in r.attempts] == [(2, "recorded"), (3, "pass")]
    assert (r.rate, r.key_lines, r.also_at) == (Rate(1, 2, 0.09, 0.91), ("E x",), ("other/a.json",))


def test_history_limits_nights_and_names_transitions_of_the_last_two_finished(store: SqlStore) -> None:
    for nid, day, verdict in (("n1", "01", "not-reproduced"), ("n2", "02", "not-reproduced"), ("n3", "03", "reproduced")):
        store.create_night(night(nid, f"2026-12-{day}T00:00:00Z", None), {}, ENTRIES[:1])
        store.add_result(result(nid, "c1", verdict))
        store.finish_night(nid, f"2026-12-{day}T01:00:00Z", 1, 0)
    store.create_night(night("n4", "2026-12-04T00:00:00Z", None), {}, ENTRIES[:1])  # running: not compared
    history = store.history(last=3)
    assert [n.id for n in history.nights] == ["n2", "n3", "n4"]
    assert [(t.kind, t.before, t.after) for t in history.transitions] == [  # its passes are in the window
        ("flaky", "not-reproduced", "flaky")]
    assert [r.night_id for r in store.capsule_results("c")] == ["n1", "n2", "n3"]
    assert store.capsule_results("zz") == []


def test_every_read_of_the_store_uses_an_index(tmp_path: Path) -> None:
    store = SqlStore(tmp_path / "farm.sqlite")
    plans = store.query_plans()
    assert len(plans) >= 8
    for name, plan in plans.items():
        assert "USING" in plan and ("INDEX" in plan or "PRIMARY KEY" in plan), (name, plan)
        assert not re.search(r"\bSCAN (results|attempts|nights|night_capsules)\b(?! USING)", plan), (name, plan)


def test_many_results_in_one_write_and_the_light_reads(tmp_path: Path) -> None:
    store = SqlStore(tmp_path / "farm.sqlite")
    store.create_night(night("n1", "2026-12-01T02:00:00Z", None), {"repo": "/r"}, [NightEntry("aa11", "a.json", "twin")])
    att = replace(attempt("n1", "aa11", 1, "recorded"), state="finished")
    store.add_results([result("n1", "aa11", "flaky", path="a.json", commit="c" * 40, rate=Rate(1, 2, 0.1, 0.9),
                              attempts=(att,)), result("n1", "ab22", "broken", path="b.json")])
    store.finish_night("n1", "2026-12-01T03:00:00Z", 0, 0)
    assert [m[:3] for m in sorted(store.marks("n1"))] == [("aa11", "flaky", None), ("ab22", "broken", None)]
    assert store.paths("n1") == {"aa11": ("a.json", True), "ab22": ("b.json", False)}
    one = store.night("n1")
    assert one.options == {"repo": "/r"} and [len(r.attempts) for r in one.results] == [1, 0]
    assert store.capsule_ids("a") == ["aa11", "ab22"] and store.capsule_ids("aa") == ["aa11"]
    assert [r.capsule_id for r in store.results_at_path("b.json")] == ["ab22"]
    assert [r.capsule_id for r in store.capsule_results("ab")] == ["ab22"]
    with pytest.raises(StoreError, match="never changed"):
        store.add_results([result("n1", "aa11", "reproduced", path="a.json")])


def test_a_read_the_database_refuses_is_one_error_naming_the_history(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from runner.farm import db

    store = SqlStore(tmp_path / "farm.sqlite")
    store.create_night(night("n1", "2026-12-01T02:00:00Z", None), {}, [])

    def refused(self: db.Conn, sql: str, params: object = None) -> None:
        raise sqlite3.OperationalError("database is locked")  # fault injection: another process holds it

    monkeypatch.setattr(db.Conn, "tuples", refused)
    with pytest.raises(StoreError) as info:
        store.marks("n1")
    assert info.value.line() == f"{store.path}: cannot read the history (database is locked)"
    assert info.value.exit_code == 2


def test_a_write_the_database_refuses_is_one_error_and_the_store_goes_on(tmp_path: Path) -> None:
    store = SqlStore(tmp_path / "farm.sqlite")
    store.create_night(night("n1", "2026-12-01T02:00:00Z", None), {}, [])
    with pytest.raises(StoreError) as info:  # a path that is not UTF-8 (os.walk's surrogate escapes)
        store.add_result(result("n1", "c1", path="caps/caf\udce9.json"))
    assert info.value.line().startswith(f"{store.path}: cannot write the history (") and info.value.exit_code == 2
    store.add_result(result("n1", "c1", path="caps/cafe.json"))
    assert [r.path for r in store.capsule_results("c1")] == ["caps/cafe.json"]


# --- a command that only reads opens the history read-only -----------------------------------------


def _bytes_and_siblings(path: Path) -> tuple[bytes, list[str]]:
    return path.read_bytes(), sorted(p.name for p in path.parent.iterdir())


def test_reading_an_empty_file_leaves_it_empty(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    with pytest.raises(StoreError, match="not a farm history") as info:
        SqlStore(path, create=False)
    assert info.value.exit_code == 2 and str(path) in info.value.line()
    assert _bytes_and_siblings(path) == (b"", ["empty.db"])


def test_reading_another_applications_database_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "app.sqlite"
    _sql(path, "CREATE TABLE notes (body TEXT)")
    before = _bytes_and_siblings(path)
    with pytest.raises(StoreError, match="not a farm history"):
        SqlStore(path, create=False)
    assert _bytes_and_siblings(path) == before
    assert _sql(path, "PRAGMA journal_mode") == [("delete",)]


def test_reading_a_history_reads_it_without_writing(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    SqlStore(path).close()
    before = path.read_bytes()
    reader = SqlStore(path, create=False)
    assert reader.history().nights == ()
    reader.close()
    assert path.read_bytes() == before  # (a WAL file's reader keeps SQLite's -shm beside it, as any reader does)


def test_reading_an_older_history_names_the_upgrade_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with connect(path).begin() as conn:
        schema.migrate(conn, upto=1)
    before = _sql(path, "SELECT max(version) FROM schema_version")
    with pytest.raises(StoreError, match="older than this replay's"):
        SqlStore(path, create=False)
    assert _sql(path, "SELECT max(version) FROM schema_version") == before


def test_reading_a_device_or_directory_is_one_line(tmp_path: Path) -> None:
    for path in (Path("/dev/zero"), tmp_path):
        with pytest.raises(StoreError, match="not a regular file"):
            SqlStore(path, create=False)
