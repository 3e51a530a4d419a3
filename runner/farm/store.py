"""The farm's history behind a small store interface: SQLite (the default, one file) or
PostgreSQL (`--db postgresql://...`: a history shared by machines and CI runners that come
and go), through their drivers (db.py). One schema, one migration path and one set of
statements for both.

One row per night, per collected capsule, per capsule result, per attempt. A verdict
is written once and never changed or deleted; an attempt row is written (started)
before the attempt runs, under an id made for it, and goes to finished once — so a
run killed at any moment resumes without losing a capsule or counting an attempt
twice. Reads return the model's frozen values.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..errors import Exit, ReplayError
from ..secretrules import mask_url
from . import schema as s
from .db import Conn, Database, DbError, IntegrityFailed, Unavailable, insert_sql
from .db import postgresql as _postgresql
from .db import sqlite as _sqlite
from .history import transitions
from .rows import BadRow, attempt_of, attempt_row, check_marks, night_of, options_of, result_of, result_row, texts_of
from .records import AttemptRecord, CapsuleResult, History, MarkRow, Night


class StoreError(ReplayError):
    """The history database cannot be used (exit 2): names the file."""

    exit_code = Exit.BAD_INPUT
    kind = "history"

    def __init__(self, path: Path | str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = str(path)


class StoreUnavailable(StoreError):
    """The history's server does not answer (exit 3): the environment failed, not the input."""

    exit_code = Exit.ENVIRONMENT
    kind = "environment"


@dataclass(frozen=True)
class NightEntry:
    """A capsule collected for a night, recorded before any is replayed (resume needs the list)."""

    capsule_id: str
    path: str
    format: str
    also_at: tuple[str, ...] = ()


@dataclass(frozen=True)
class OpenNight:
    night: Night
    options: Mapping[str, Any]
    entries: tuple[NightEntry, ...]


class HistoryStore(Protocol):
    """What the farm needs from a history; SqlStore is the one implementation so far."""

    def create_night(self, night: Night, options: Mapping[str, Any], entries: Sequence[NightEntry]) -> None: ...
    def open_night(self) -> OpenNight | None: ...
    def finish_night(self, night_id: str, finished_at: str, images: int, builds: int) -> None: ...
    def judged(self, night_id: str) -> set[str]: ...
    def add_result(self, result: CapsuleResult) -> None: ...
    def start_attempt(self, record: AttemptRecord) -> None: ...
    def finish_attempt(self, record: AttemptRecord) -> None: ...
    def attempts(self, night_id: str, capsule_id: str, side: str) -> list[AttemptRecord]: ...
    def history(self, last: int | None = None) -> History: ...
    def capsule_results(self, capsule_id: str) -> list[CapsuleResult]: ...
    def nights(self, last: int | None = None) -> list[Night]: ...
    def night(self, night_id: str, attempts: bool = True) -> Night: ...
    def marks(self, night_id: str) -> list[MarkRow]: ...
    def paths(self, night_id: str) -> dict[str, tuple[str, bool]]: ...


_SERVER_URL = re.compile(r"^postgres(?:ql)?(?:\+psycopg)?://", re.IGNORECASE)


def is_server_url(target: Path | str) -> bool:
    return isinstance(target, str) and bool(_SERVER_URL.match(target))


def connect_server(url: str) -> Database:
    """PostgreSQL through psycopg 3; a connection the server dropped is replaced, not reported."""
    from ..extras import require

    require("postgres", "a postgresql:// history")
    return _postgresql(_SERVER_URL.sub("postgresql://", url))


def connect(path: Path, read_only: bool = False) -> Database:
    """The SQLite file (WAL: readers never block the writer; a generous busy wait); read-only
    for the commands that only read, which never change the file."""
    return _sqlite(path, read_only)


# Every read the store makes, by name: the methods run these, and `query_plans` shows SQLite's
# plan of each (scripts/bench checks that each uses an index).
_NIGHTS = "SELECT * FROM nights ORDER BY started_at DESC, id DESC"
READS: Mapping[str, str] = {
    "nights": _NIGHTS + " LIMIT :last",
    "night": "SELECT * FROM nights WHERE id = :night",
    "night results": "SELECT * FROM results WHERE night_id = :night",
    "night attempts": "SELECT * FROM attempts WHERE night_id = :night AND state = 'finished'",
    "marks": ("SELECT capsule_id, verdict, signature, ref, ref_verdict, rate_k, rate_n, signatures FROM results "
              "WHERE night_id = :night"),
    "paths": "SELECT capsule_id, path, commit_id IS NOT NULL FROM results WHERE night_id = :night",
    "judged": "SELECT capsule_id FROM results WHERE night_id = :night",
    "capsule attempts": ("SELECT * FROM attempts WHERE night_id = :night AND capsule_id = :capsule AND side = :side "
                         "ORDER BY idx"),
    "result attempts": ("SELECT * FROM attempts WHERE night_id = :night AND capsule_id = :capsule "
                        "AND state = 'finished' ORDER BY side, idx"),
    "capsule by id prefix": ("SELECT results.*, nights.started_at FROM results JOIN nights ON nights.id = results.night_id "
                             "WHERE results.capsule_id >= :low AND results.capsule_id < :high"),
    "capsule by path": ("SELECT results.*, nights.started_at FROM results JOIN nights ON nights.id = results.night_id "
                        "WHERE results.path = :path"),
    "capsule ids": ("SELECT DISTINCT capsule_id FROM results WHERE capsule_id >= :low AND capsule_id < :high "
                    "ORDER BY capsule_id LIMIT :limit"),
    "night capsules": "SELECT * FROM night_capsules WHERE night_id = :night ORDER BY position",
}
_EXAMPLE = {"last": 30, "night": "x", "capsule": "y", "side": "recorded", "low": "ab", "high": "ac",
            "path": "caps/x.json", "limit": 20}


class SqlStore:
    def __init__(self, target: Path | str, create: bool = True) -> None:
        server = self._server = is_server_url(target)
        # what errors name: the file, or the server's URL without its password
        self.path: Path | str = mask_url(str(target)) if server else Path(target)
        try:
            if server:
                self.db = connect_server(str(target))
            else:
                assert isinstance(self.path, Path)
                if not create:
                    if problem := s.not_a_file(self.path):
                        raise StoreError(self.path, problem)
                    self.db = connect(self.path, read_only=True)
                    self._check_readable()
                    return
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.db = connect(self.path)
            if not create:  # a server's history, read: never migrated by a command that only reads
                self._check_readable()
                return
            with self.db.begin() as conn:
                s.lock_for_migration(conn)  # two coordinators starting at once migrate one after the other
                found = s.current_version(conn)
                if found > s.LATEST:
                    raise StoreError(self.path, f"history schema version {found} is newer than this replay "
                                                f"understands ({s.LATEST}); upgrade replay")
                s.migrate(conn)
        except Unavailable as exc:
            if server:
                raise StoreUnavailable(self.path, f"the history's server does not answer ({_why(exc)})") from None
            raise StoreError(self.path, f"not a usable farm history ({_why(exc)})") from None
        except (DbError, OSError) as exc:
            raise StoreError(self.path, f"not a usable farm history ({_why(exc)})") from None

    def _check_readable(self) -> None:
        """A history at this replay's schema, checked by reading only (the caller maps the driver's errors)."""
        with self.db.connect() as conn:
            problem = s.unreadable(s.current_version(conn))
        if problem:
            raise StoreError(self.path, problem)

    def _tx(self, fn: Any, *args: Any) -> Any:
        """A write; a key or trigger that refuses it is the caller's to name (IntegrityFailed)."""
        try:
            with self.db.begin() as conn:
                return fn(conn, *args)
        except IntegrityFailed:
            raise
        except (DbError, UnicodeEncodeError) as exc:
            raise self._refused(exc, "write") from None

    @contextmanager
    def _reading(self) -> Iterator[Conn]:
        """A read; rows that break the history's invariants (rows.BadRow) are one line, exit 2."""
        try:
            with self.db.connect() as conn:
                yield conn
        except (DbError, UnicodeEncodeError) as exc:
            raise self._refused(exc, "read") from None
        except BadRow as exc:
            raise StoreError(self.path, f"{exc}; not as replay writes a history (edited by hand?)") from None

    def _refused(self, exc: BaseException, doing: str) -> StoreError:
        """A database's refusal as one line naming the history: a server gone away is the
        environment (exit 3), anything else the history's (exit 2). A value the driver cannot
        encode (a lone surrogate of a path that is not UTF-8) is refused the same way."""
        if self._server and isinstance(exc, Unavailable):
            return StoreUnavailable(self.path, f"the history's server does not answer ({_why(exc)})")
        return StoreError(self.path, f"cannot {doing} the history ({_why(exc)})")

    # -- nights -----------------------------------------------------------------
    def create_night(self, night: Night, options: Mapping[str, Any], entries: Sequence[NightEntry]) -> None:
        row = {"id": night.id, "started_at": night.started_at, "ref": night.ref,
               "sources": json.dumps(list(night.sources)), "options": json.dumps(dict(options)),
               "replay_version": options.get("replay_version", ""), "images": 0, "builds": 0}
        capsules = [{"night_id": night.id, "capsule_id": e.capsule_id, "position": i, "path": e.path,
                     "format": e.format, "also_at": json.dumps(list(e.also_at))} for i, e in enumerate(entries)]

        def do(conn: Conn) -> None:
            conn.execute(insert_sql("nights", list(row)), row)
            if capsules:
                conn.executemany(insert_sql("night_capsules", list(capsules[0])), capsules)

        self._tx(do)

    def open_night(self) -> OpenNight | None:
        """The latest night that never finished (the one `--resume` continues)."""
        with self._reading() as conn:
            row = conn.first(READS["nights"], {"last": 1})
            if row is None or row["finished_at"] is not None:
                return None
            entries = conn.rows(READS["night capsules"], {"night": row["id"]})
            night, options, also = night_of(row), options_of(row), [texts_of(e, "also_at") for e in entries]
        return OpenNight(night, options, tuple(NightEntry(e["capsule_id"], e["path"], e["format"], a)
                                               for e, a in zip(entries, also)))

    def finish_night(self, night_id: str, finished_at: str, images: int, builds: int) -> None:
        def do(conn: Conn) -> None:
            res = conn.execute("UPDATE nights SET finished_at = :finished, images = :images, builds = builds + :builds "
                               "WHERE id = :id AND finished_at IS NULL",
                               {"finished": finished_at, "images": images, "builds": builds, "id": night_id})
            if res.rowcount != 1:
                raise StoreError(self.path, f"night {night_id} is unknown or already finished")

        self._tx(do)

    # -- results and attempts -----------------------------------------------------
    def judged(self, night_id: str) -> set[str]:
        with self._reading() as conn:
            return {str(r[0]) for r in conn.tuples(READS["judged"], {"night": night_id})}

    def add_result(self, result: CapsuleResult) -> None:
        """Once per capsule per night: a second verdict is refused, never merged."""
        row = result_row(result)
        try:
            self._tx(lambda conn: conn.execute(insert_sql("results", list(row)), row))
        except IntegrityFailed:
            raise StoreError(self.path, f"capsule {result.capsule_id} already has a verdict for night "
                                        f"{result.night_id}; verdicts are never changed") from None

    def start_attempt(self, record: AttemptRecord) -> None:
        row = {**attempt_row(record), "state": "started"}
        try:
            self._tx(lambda conn: conn.execute(insert_sql("attempts", list(row)), row))
        except IntegrityFailed:
            raise StoreError(self.path, f"attempt {record.id} (#{record.index}) is already recorded") from None

    def finish_attempt(self, record: AttemptRecord) -> None:
        row = {k: v for k, v in attempt_row(record).items()
               if k not in ("id", "night_id", "capsule_id", "side", "idx", "started_at")}
        sets = ", ".join(f"{k} = :{k}" for k in row)

        def do(conn: Conn) -> None:
            res = conn.execute(f"UPDATE attempts SET {sets}, state = 'finished' WHERE id = :id AND state = 'started'",
                               {**row, "id": record.id})
            if res.rowcount != 1:
                raise StoreError(self.path, f"attempt {record.id} was not started or is already finished")

        self._tx(do)

    def attempts(self, night_id: str, capsule_id: str, side: str) -> list[AttemptRecord]:
        """Every attempt of one side of one capsule in a night, started ones included, by index."""
        with self._reading() as conn:
            rows = conn.rows(READS["capsule attempts"], {"night": night_id, "capsule": capsule_id, "side": side})
            return [attempt_of(r) for r in rows]

    def add_results(self, results: Sequence[CapsuleResult]) -> None:
        """Many verdicts with their finished attempts in one transaction (an import of nights
        judged elsewhere, the bench's history); the same rules as add_result."""
        rows = [result_row(r) for r in results]
        atts = [{**attempt_row(a), "state": a.state} for r in results for a in r.attempts]

        def do(conn: Conn) -> None:
            if rows:
                conn.executemany(insert_sql("results", list(rows[0])), rows)
            if atts:
                conn.executemany(insert_sql("attempts", list(atts[0])), atts)

        try:
            self._tx(do)
        except IntegrityFailed:
            raise StoreError(self.path, "a verdict or an attempt of these is already recorded; "
                                        "verdicts are never changed") from None

    # -- reading the history --------------------------------------------------------
    def nights(self, last: int | None = None) -> list[Night]:
        """The last `last` nights (all by default), oldest first, without their results."""
        with self._reading() as conn:
            rows = conn.rows(READS["nights"], {"last": last}) if last else conn.rows(_NIGHTS)
            return [night_of(r) for r in reversed(rows)]

    def night(self, night_id: str, attempts: bool = True) -> Night:
        """One night with its results and (unless `attempts` is false) their finished attempts."""
        with self._reading() as conn:
            row = conn.first(READS["night"], {"night": night_id})
            if row is None:
                raise StoreError(self.path, f"no night {night_id} in this history")
            by_capsule: dict[str, list[AttemptRecord]] = {}
            for att in conn.rows(READS["night attempts"], {"night": night_id}) if attempts else ():
                by_capsule.setdefault(att["capsule_id"], []).append(attempt_of(att))
            results = conn.rows(READS["night results"], {"night": night_id})
            for atts in by_capsule.values():
                atts.sort(key=lambda x: (x.side, x.index))
            return night_of(row, tuple(sorted((result_of(r, by_capsule.get(r["capsule_id"], ())) for r in results),
                                            key=lambda x: x.path)))

    def marks(self, night_id: str) -> list[MarkRow]:
        """A night's results, light: what the attention view reads for every night (a covering
        index answers it without reading the results' rows)."""
        with self._reading() as conn:
            marks: list[MarkRow] = conn.tuples(READS["marks"], {"night": night_id})  # type: ignore[assignment]
            check_marks(night_id, marks)
            return marks

    def paths(self, night_id: str) -> dict[str, tuple[str, bool]]:
        """Each capsule of a night: the path it was collected at, and whether it records a commit."""
        with self._reading() as conn:
            return {r[0]: (r[1], bool(r[2])) for r in conn.tuples(READS["paths"], {"night": night_id})}

    def history(self, last: int | None = None) -> History:
        """The last `last` nights (all by default), oldest first, with what the last finished
        night changed (history.transitions)."""
        nights = [self.night(n.id) for n in self.nights(last)]
        return History(tuple(nights), transitions([n for n in nights if n.finished_at is not None]))

    def capsule_results(self, capsule_id: str) -> list[CapsuleResult]:
        """One capsule's verdicts across nights, oldest first; `capsule_id` may be a prefix
        (read as a range of the index, never a scan)."""
        if not capsule_id:
            return []
        return self._results("capsule by id prefix", low=capsule_id, high=_after_prefix(capsule_id))

    def results_at_path(self, path: str) -> list[CapsuleResult]:
        """Every verdict recorded for a capsule collected at `path` (as the history spells it),
        whatever its content was then, oldest first."""
        return self._results("capsule by path", path=path)

    def capsule_ids(self, prefix: str, limit: int = 20) -> list[str]:
        """The distinct capsule ids starting with `prefix`, at most `limit`."""
        with self._reading() as conn:
            found = conn.tuples(READS["capsule ids"], {"low": prefix, "high": _after_prefix(prefix), "limit": limit})
        return [str(r[0]) for r in found]

    def _results(self, name: str, **params: Any) -> list[CapsuleResult]:
        with self._reading() as conn:
            rows = sorted(conn.rows(READS[name], params), key=lambda r: (r["started_at"], r["night_id"]))
            return [result_of(r, [attempt_of(a) for a in conn.rows(
                READS["result attempts"], {"night": r["night_id"], "capsule": r["capsule_id"]})]) for r in rows]

    def query_plans(self) -> dict[str, str]:
        """SQLite's plan of each read the store makes (scripts/bench checks each uses an index)."""
        if self.db.dialect != "sqlite":
            return {}
        with self._reading() as conn:
            return {name: " | ".join(str(row[-1]) for row in conn.tuples("EXPLAIN QUERY PLAN " + sql, {
                        k: v for k, v in _EXAMPLE.items() if f":{k}" in sql}))
                    for name, sql in READS.items()}

    def close(self) -> None:
        self.db.dispose()


def _why(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    return str(orig or exc).splitlines()[0][:200]


def _after_prefix(prefix: str) -> str:
    """The least string above every string starting with `prefix` (the end of an index range)."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1) if prefix else "\uffff"


def default_db_path() -> Path:
    """Under the user's data directory, per platform conventions (~/.local/share/replay on Linux)."""
    from platformdirs import user_data_path

    return user_data_path("replay", appauthor=False) / "farm.sqlite"
