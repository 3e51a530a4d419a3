"""The history's database through its DB-API driver: the standard library's sqlite3 for a
file (the default), psycopg 3 for `postgresql://` (a history shared by machines and CI
runners that come and go).

The store's SQL is written once, with `:name` parameters, in the subset both databases
read; a statement is handed to psycopg in its own `%(name)s` style. One connection per
store, used by one thread at a time; a transaction is a `with` block that commits when
it ends and rolls back when it raises. The drivers' errors become three typed ones here,
so that the store names the file or the server in one line whatever the driver.

No ORM or query builder: the store's few statements are plain SQL (a query builder cost
a third of a second of start-up per command, more than `replay farm history` may take).
"""
from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

Dialect = Literal["sqlite", "postgresql"]
Params = Mapping[str, Any]


class DbError(Exception):
    """The database refused a statement or could not be used; `orig` is the driver's error."""

    def __init__(self, orig: BaseException) -> None:
        super().__init__(str(orig))
        self.orig = orig


class IntegrityFailed(DbError):
    """A key or a trigger refused the change (a second verdict, a changed finished attempt)."""


class Unavailable(DbError):
    """The database could not be reached or used at all (a lost server, a locked file)."""


class Conn:
    """One transaction's statements."""

    def __init__(self, raw: Any, dialect: Dialect) -> None:
        self._raw = raw
        self.dialect = dialect

    def execute(self, sql: str, params: Params | None = None) -> Any:
        """The driver's cursor, after running `sql` (`:name` parameters)."""
        cur = self._raw.cursor()
        if params is None:
            cur.execute(sql)
        else:
            cur.execute(_in_dialect(sql, self.dialect), params)
        return cur

    def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        if rows:
            self._raw.cursor().executemany(_in_dialect(sql, self.dialect), rows)

    def tuples(self, sql: str, params: Params | None = None) -> list[tuple[Any, ...]]:
        return list(self.execute(sql, params).fetchall())

    def rows(self, sql: str, params: Params | None = None) -> list[dict[str, Any]]:
        """Each row as a mapping of its column names."""
        cur = self.execute(sql, params)
        names = _names(cur)
        return [dict(zip(names, r)) for r in cur.fetchall()]

    def first(self, sql: str, params: Params | None = None) -> dict[str, Any] | None:
        cur = self.execute(sql, params)
        row = cur.fetchone()
        return None if row is None else dict(zip(_names(cur), row))

    def scalar(self, sql: str, params: Params | None = None) -> Any:
        row = self.execute(sql, params).fetchone()
        return None if row is None else row[0]


def _names(cursor: Any) -> list[str]:
    return [d[0] for d in cursor.description]


class Database:
    """A connection to the history, opened on first use and again after the server dropped it."""

    def __init__(self, dialect: Dialect, opener: Callable[[], Any], driver: Any) -> None:
        self.dialect = dialect
        self._open = opener
        self._driver = driver  # the DB-API module: its Error classes are what this maps
        self._raw: Any = None
        self._lock = threading.Lock()  # one transaction at a time in this process (SQLite's lock across)
        self._holder: int | None = None  # the thread in a transaction

    @contextmanager
    def begin(self) -> Iterator[Conn]:
        """A transaction that writes (SQLite takes its write lock at once: no upgrade deadlock)."""
        with self._transaction("BEGIN IMMEDIATE") as conn:
            yield conn

    @contextmanager
    def connect(self) -> Iterator[Conn]:
        """A transaction that reads: one snapshot for all its statements."""
        with self._transaction("BEGIN") as conn:
            yield conn

    @contextmanager
    def _transaction(self, sqlite_begin: str) -> Iterator[Conn]:
        """The one way a statement runs; never one inside another (on PostgreSQL the inner one
        would commit the outer's half-done work): that is a programming error, said at once."""
        if self._holder == threading.get_ident():
            raise RuntimeError("a history transaction inside another: the store's methods never nest them")
        with self._lock, self._mapped():
            self._holder = threading.get_ident()
            try:
                raw = self._checkout()
                if self.dialect == "sqlite":
                    raw.execute(sqlite_begin)
                try:
                    yield Conn(raw, self.dialect)
                    raw.commit()
                except BaseException:  # the body's error, or a commit that failed (a full disk): never left open
                    self._rollback(raw)
                    raise
            finally:
                self._holder = None

    def _checkout(self) -> Any:
        raw = self._raw
        if raw is not None and self.dialect == "postgresql":
            if raw.closed:  # psycopg closes a connection it found broken
                raw = None
            else:
                try:  # a connection the server dropped is replaced, not reported
                    raw.execute("SELECT 1")
                except self._driver.OperationalError:
                    self._close(raw)
                    raw = None
        if raw is None:
            raw = self._raw = self._open()
        return raw

    def _rollback(self, raw: Any) -> None:
        try:
            raw.rollback()
        except self._driver.Error:
            self._close(raw)

    def _close(self, raw: Any) -> None:
        try:
            raw.close()
        except self._driver.Error:
            pass
        if raw is self._raw:
            self._raw = None

    @contextmanager
    def _mapped(self) -> Iterator[None]:
        d = self._driver
        try:
            yield
        except d.IntegrityError as exc:
            raise IntegrityFailed(exc) from exc
        except d.OperationalError as exc:
            if self.dialect == "sqlite" or _connection_lost(exc):
                raise Unavailable(exc) from exc
            raise DbError(exc) from exc  # a server's deadlock, timeout or full disk: it answered
        except (d.InterfaceError, d.DatabaseError) as exc:  # a file that is not a database, a closed connection
            raise DbError(exc) from exc

    def dispose(self) -> None:
        with self._lock:
            if self._raw is not None:
                self._close(self._raw)


def _connection_lost(exc: BaseException) -> bool:
    """A server error that means the server cannot be reached or went away (no SQLSTATE: the
    connection itself failed; class 08: connection exception; 57P: the server shut down)."""
    state = getattr(exc, "sqlstate", None)
    return state is None or str(state).startswith(("08", "57P"))


@functools.lru_cache(maxsize=256)
def _in_dialect(sql: str, dialect: Dialect) -> str:
    """`:name` parameters as the driver reads them (the store's own SQL only: no `:` in its literals)."""
    if dialect == "sqlite":
        return sql
    return re.sub(r"(?<![:\w]):([A-Za-z_]\w*)", r"%(\1)s", sql.replace("%", "%%"))


def sqlite(path: Path, read_only: bool = False) -> Database:
    """The SQLite file: WAL (readers never block the writer), a generous busy wait, foreign keys.
    ``read_only``: opened with `mode=ro`, so nothing is written, not even the switch to WAL (a file
    that turns out not to be a history, another application's database, stays as it was)."""
    import sqlite3
    from urllib.parse import quote

    def opener() -> Any:
        if read_only:
            uri = "file:" + quote(str(path.absolute())) + "?mode=ro"
            raw = sqlite3.connect(uri, uri=True, timeout=60, isolation_level=None, check_same_thread=False)
            raw.execute("PRAGMA query_only=ON")
            return raw
        raw = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
        raw.execute("PRAGMA journal_mode=WAL")
        raw.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a killed process loses nothing committed
        raw.execute("PRAGMA foreign_keys=ON")
        return raw

    return Database("sqlite", opener, sqlite3)


def postgresql(url: str, connect_timeout_s: int = 15) -> Database:
    """PostgreSQL through psycopg 3 (the `postgres` extra); `url` as libpq reads it."""
    import psycopg

    return Database("postgresql", lambda: psycopg.connect(url, connect_timeout=connect_timeout_s), psycopg)


def insert_sql(table: str, columns: Sequence[str]) -> str:
    """`INSERT INTO table (a, b) VALUES (:a, :b)` for the store's own table and column names."""
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(':' + c for c in columns)})"


__all__ = ["Conn", "Database", "DbError", "Dialect", "IntegrityFailed", "Unavailable", "insert_sql",
           "postgresql", "sqlite"]
