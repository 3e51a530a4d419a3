"""The farm's history in PostgreSQL (`--db postgresql://...`, issue 13): a real server
(Debian's postgresql, started here on a loopback port as the postgres user, stopped
after), the same schema and migration path as SQLite, the same immutability."""
from __future__ import annotations

import contextlib
import dataclasses
import io
import json
from pathlib import Path
from typing import Any

import pytest

from runner.cli.main import main
from runner.farm import schema
from runner.farm.store import SqlStore, StoreError, connect_server

from tests.unit.farm.builders import write_instance
from tests.unit.farm.records import attempt, night, result
from tests.services import free_port

from tests.integration.helpers import farm_json, own_image_repo

pytestmark = pytest.mark.integration

def _sql(url: str, statement: str) -> list[tuple[Any, ...]]:
    db = connect_server(url)
    try:
        with db.begin() as conn:
            res = conn.execute(statement)
            return [tuple(r) for r in res.fetchall()] if res.description else []
    finally:
        db.dispose()


def test_a_new_server_history_is_at_the_latest_schema_and_opening_again_migrates_nothing(db: str) -> None:
    SqlStore(db).close()
    SqlStore(db).close()
    assert _sql(db, "SELECT version FROM schema_version ORDER BY version") == [(v.version,) for v in schema.MIGRATIONS]
    triggers = {r[0] for r in _sql(db, "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")}
    assert {"results_no_update", "results_no_delete", "attempts_finish_once", "nights_finish_once"} <= triggers


def test_an_older_server_history_is_migrated_keeping_its_rows(db: str) -> None:
    server_db = connect_server(db)
    with server_db.begin() as conn:
        assert schema.migrate(conn, upto=1) == [1]
        conn.execute("INSERT INTO nights (id, started_at, sources, options, replay_version) "
                     "VALUES ('n1', '2026-11-30T00:00:00Z', '[]', '{}', '0.0.9')")
    server_db.dispose()
    store = SqlStore(db)
    assert [n.id for n in store.history().nights] == ["n1"]
    assert _sql(db, "SELECT max(version) FROM schema_version") == [(schema.LATEST,)]
    store.close()


def test_verdicts_and_finished_attempts_are_immutable_in_the_server_too(db: str) -> None:
    store = SqlStore(db)
    store.create_night(night("n1", "2026-12-01T00:00:00Z", None), {}, [])
    store.add_result(result("n1", "c1", "reproduced"))
    with pytest.raises(StoreError, match="never changed"):
        store.add_result(result("n1", "c1", "flaky"))
    rec = attempt("n1", "c1", 1)
    store.start_attempt(rec)
    store.finish_attempt(dataclasses.replace(rec, state="finished", finished_at="2026-12-01T00:00:01Z", exit_code=1))
    store.close()
    for statement in ("UPDATE results SET verdict = 'fixed'", "DELETE FROM results",
                      "UPDATE attempts SET exit_code = 0", "DELETE FROM attempts"):
        with pytest.raises(Exception, match="never"):
            _sql(db, statement)
    assert _sql(db, "SELECT verdict FROM results") == [("reproduced",)]


def test_a_connection_the_server_dropped_is_replaced_not_reported(db: str) -> None:
    store = SqlStore(db)
    store.create_night(night("n1", "2026-12-01T00:00:00Z", None), {}, [])
    _sql(db, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
             "WHERE datname = current_database() AND pid <> pg_backend_pid()")  # the store's connection
    store.add_result(result("n1", "c1", "reproduced"))  # through a new connection
    assert [r.verdict for r in store.capsule_results("c1")] == ["reproduced"]
    store.close()


def test_a_server_history_from_a_newer_replay_is_refused_in_one_line(db: str) -> None:
    SqlStore(db).close()
    _sql(db, f"INSERT INTO schema_version (version, applied_at) VALUES ({schema.LATEST + 1}, 'later')")
    with pytest.raises(StoreError, match="newer than this replay") as err:
        SqlStore(db)
    assert "postgresql://127.0.0.1" in str(err.value)  # named, its user never shown (secretrules.mask_url)


def test_report_on_an_empty_server_database_is_one_error_and_creates_nothing(db: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()) as out:
        rc = main(["farm", "report", "--db", db, "--json"])
    doc = json.loads(out.getvalue())
    assert rc == 2 and "not a farm history" in doc["error"]["message"]  # and left as it was
    assert "`replay farm run` makes one" in doc["error"]["message"]
    assert _sql(db, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'") == [(0,)]


def test_two_farm_nights_recorded_in_postgres_read_back_by_report_and_history(
        db: str, tmp_path: Path, engine: Any) -> None:
    caps = tmp_path / "caps"
    hello = write_instance(caps / "hello.json", ["python3", "-c", "print('hello')"], "hello\n")
    write_instance(caps / "wrong.json", ["python3", "-c", "print('hello')"], "goodbye\n")
    with own_image_repo(engine, "replay-test-farm-pg"):
        runs = [farm_json("run", caps, "--db", db, "--jobs", "2") for _ in range(2)]
        assert [rc for rc, _ in runs] == [0, 0]
        rc, report = farm_json("report", "--db", db)
        assert rc == 0 and len(report["nights"]) == 2 and all(n["finished_at"] for n in report["nights"])
        got = {Path(r["path"]).name: r["strip"] for r in report["rows"]}  # each row's verdict night by night
        assert got == {"hello.json": ["reproduced", "reproduced"], "wrong.json": ["not-reproduced", "not-reproduced"]}
        rc, history = farm_json("history", hello, "--db", db)
        assert rc == 0 and len(history["nights"]) == 2
        assert _sql(db, "SELECT count(*) FROM attempts WHERE state = 'finished'") == [(12,)]


def test_a_server_that_does_not_answer_is_an_environment_failure_without_its_password() -> None:
    with contextlib.redirect_stdout(io.StringIO()) as out:
        rc = main(["farm", "report", "--db", f"postgresql://farm:s3cret@127.0.0.1:{free_port()}/x", "--json"])
    doc = json.loads(out.getvalue())
    assert rc == 3 and doc["error"]["kind"] == "environment"
    assert "s3cret" not in out.getvalue() and "postgresql://127.0.0.1:" in doc["error"]["message"]
