"""The history's database layer (runner/farm/db.py): statements in each driver's style, a
transaction that never stays open, and the drivers' errors as three typed ones. The real
PostgreSQL server is tests/integration/test_farm_postgres.py's; here its driver's errors are
injected (fault injection: a connection that refuses as a server would)."""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest

from runner.farm import db
from runner.farm.db import Database, DbError, Unavailable


def test_statements_are_handed_to_psycopg_in_its_own_style() -> None:
    sql = "SELECT a::text, '50%' FROM t WHERE b = :b AND c_1 >= :c_1 AND at = '02:00:00'"
    assert db._in_dialect(sql, "sqlite") == sql
    assert db._in_dialect(sql, "postgresql") == (
        "SELECT a::text, '50%%' FROM t WHERE b = %(b)s AND c_1 >= %(c_1)s AND at = '02:00:00'")
    assert db.insert_sql("t", ["a", "b"]) == "INSERT INTO t (a, b) VALUES (:a, :b)"


class _CommitFails:
    """A real SQLite connection whose first commit fails (a full disk at the worst moment)."""

    def __init__(self, path: Path) -> None:
        self.raw = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.failed = False

    def commit(self) -> None:
        if not self.failed:
            self.failed = True
            raise sqlite3.OperationalError("database or disk is full")
        self.raw.commit()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def test_a_commit_that_fails_rolls_back_and_the_next_transaction_works(tmp_path: Path) -> None:
    conn = _CommitFails(tmp_path / "h.sqlite")
    conn.raw.execute("CREATE TABLE t (a INTEGER)")
    database = Database("sqlite", lambda: conn, sqlite3)
    with pytest.raises(Unavailable, match="disk is full"):
        with database.begin() as tx:
            tx.execute("INSERT INTO t (a) VALUES (:a)", {"a": 1})
    assert not conn.raw.in_transaction  # not left open, holding the file's write lock
    with database.begin() as tx:
        tx.execute("INSERT INTO t (a) VALUES (:a)", {"a": 2})
    with database.connect() as tx:
        assert tx.tuples("SELECT a FROM t") == [(2,)]


def test_a_transaction_inside_another_is_a_programming_error_said_at_once(tmp_path: Path) -> None:
    database = db.sqlite(tmp_path / "h.sqlite")
    with database.connect():
        with pytest.raises(RuntimeError, match="inside another"):
            with database.connect():
                pass
    with database.connect() as tx:  # the outer one ended cleanly
        assert tx.scalar("SELECT 1") == 1


class _Server:
    """A PostgreSQL connection as psycopg gives it, whose statements fail with `error`."""

    closed = False

    def __init__(self, error: Exception) -> None:
        self.error = error

    def execute(self, sql: str) -> None:  # the ping before a transaction
        pass

    def cursor(self) -> Any:
        raise self.error

    def commit(self) -> None:
        pass

    def rollback(self) -> None:
        pass

    def close(self) -> None:
        pass


@pytest.mark.parametrize("error, lost", [
    (psycopg.OperationalError("connection to server at 127.0.0.1 failed: Connection refused"), True),
    (psycopg.errors.AdminShutdown("terminating connection due to administrator command"), True),
    (psycopg.errors.DeadlockDetected("deadlock detected"), False),
    (psycopg.errors.DiskFull("could not extend file"), False),
])
def test_only_a_server_gone_away_is_unavailable(error: Exception, lost: bool) -> None:
    database = Database("postgresql", lambda: _Server(error), psycopg)
    with pytest.raises(DbError) as info:
        with database.begin() as tx:
            tx.execute("UPDATE t SET a = :a", {"a": 1})
    assert isinstance(info.value, Unavailable) == lost and info.value.orig is error
