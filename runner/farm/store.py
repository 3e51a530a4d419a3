"""The farm's history behind a small store interface: SQLAlchemy Core over SQLite (the
default, one file) or PostgreSQL (`--db postgresql://...`: a history shared by machines
and CI runners that come and go). One schema and one migration path for both.

One row per night, per collected capsule, per capsule result, per attempt. A verdict
is written once and never changed or deleted; an attempt row is written (started)
before the attempt runs, under an id made for it, and goes to finished once — so a
run killed at any moment resumes without losing a capsule or counting an attempt
twice. Reads return the model's frozen values.
"""
from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import Engine, RowMapping, and_, create_engine, event, insert, select, update
from sqlalchemy.exc import DatabaseError, IntegrityError, OperationalError

from ..errors import Exit, ReplayError
from . import schema as s
from .history import transitions
from .rows import attempt_of, attempt_row, night_of, result_of, result_row
from .model import AttemptRecord, CapsuleResult, History, Mark, Night


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
    def night(self, night_id: str) -> Night: ...
    def marks(self, night_id: str) -> list[Mark]: ...


_SERVER_URL = re.compile(r"^postgres(?:ql)?(?:\+psycopg)?://", re.IGNORECASE)


def is_server_url(target: Path | str) -> bool:
    return isinstance(target, str) and bool(_SERVER_URL.match(target))


def shown(url: str) -> str:
    """A database URL as it may be printed: never with its password."""
    return re.sub(r"(://[^/:@\s]*):[^/@\s]*@", r"\1:***@", url)


def connect_server(url: str) -> Engine:
    """PostgreSQL through psycopg 3; a connection the server dropped is replaced, not reported."""
    from ..extras import require

    require("postgres", "a postgresql:// history")
    return create_engine(_SERVER_URL.sub("postgresql+psycopg://", url), pool_pre_ping=True,
                         connect_args={"connect_timeout": 15})


def connect(path: Path) -> Engine:
    """An engine on the SQLite file: WAL (readers never block the writer), a generous busy wait."""
    engine = create_engine(f"sqlite:///{path}", connect_args={"check_same_thread": False, "timeout": 60})

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn: Any, _record: Any) -> None:
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a killed process loses nothing committed
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    return engine


class SqlStore:
    def __init__(self, target: Path | str, create: bool = True) -> None:
        server = is_server_url(target)
        # what errors name: the file, or the server's URL without its password
        self.path: Path | str = shown(str(target)) if server else Path(target)
        try:
            if server:
                self.engine = connect_server(str(target))
            else:
                assert isinstance(self.path, Path)
                if not self.path.exists() and not create:
                    raise StoreError(self.path, "no farm history here (run `replay farm run` first, or pass --db)")
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.engine = connect(self.path)
            with self.engine.begin() as conn:
                s.lock_for_migration(conn)  # two coordinators starting at once migrate one after the other
                found = s.current_version(conn)
                if found > s.LATEST:
                    raise StoreError(self.path, f"history schema version {found} is newer than this replay "
                                                f"understands ({s.LATEST}); upgrade replay")
                if found == 0 and not create:
                    raise StoreError(self.path, "no farm history here (run `replay farm run` first, or pass --db)")
                s.migrate(conn)
        except OperationalError as exc:
            if server:
                raise StoreUnavailable(self.path, f"the history's server does not answer ({_why(exc)})") from None
            raise StoreError(self.path, f"not a usable farm history ({_why(exc)})") from None
        except (DatabaseError, OSError) as exc:
            raise StoreError(self.path, f"not a usable farm history ({_why(exc)})") from None
        self._write = threading.Lock()  # one writer at a time inside this process; busy_timeout across

    def _tx(self, fn: Any, *args: Any) -> Any:
        with self._write:
            try:
                with self.engine.begin() as conn:
                    return fn(conn, *args)
            except OperationalError as exc:
                raise StoreError(self.path, f"cannot write the history ({_why(exc)})") from None

    # -- nights -----------------------------------------------------------------
    def create_night(self, night: Night, options: Mapping[str, Any], entries: Sequence[NightEntry]) -> None:
        def do(conn: Any) -> None:
            conn.execute(insert(s.nights).values(
                id=night.id, started_at=night.started_at, ref=night.ref, sources=json.dumps(list(night.sources)),
                options=json.dumps(dict(options)), replay_version=options.get("replay_version", ""),
                images=0, builds=0))
            if entries:
                conn.execute(insert(s.night_capsules), [
                    {"night_id": night.id, "capsule_id": e.capsule_id, "position": i, "path": e.path,
                     "format": e.format, "also_at": json.dumps(list(e.also_at))} for i, e in enumerate(entries)])

        self._tx(do)

    def open_night(self) -> OpenNight | None:
        """The latest night that never finished (the one `--resume` continues)."""
        with self.engine.connect() as conn:
            row = conn.execute(select(s.nights).order_by(s.nights.c.started_at.desc(), s.nights.c.id.desc())
                               .limit(1)).mappings().first()
            if row is None or row["finished_at"] is not None:
                return None
            entries = conn.execute(select(s.night_capsules).where(s.night_capsules.c.night_id == row["id"])
                                   .order_by(s.night_capsules.c.position)).mappings().all()
        return OpenNight(night_of(row), json.loads(row["options"]), tuple(
            NightEntry(e["capsule_id"], e["path"], e["format"], tuple(json.loads(e["also_at"]))) for e in entries))

    def finish_night(self, night_id: str, finished_at: str, images: int, builds: int) -> None:
        def do(conn: Any) -> None:
            res = conn.execute(update(s.nights).where(s.nights.c.id == night_id, s.nights.c.finished_at.is_(None))
                               .values(finished_at=finished_at, images=images, builds=s.nights.c.builds + builds))
            if res.rowcount != 1:
                raise StoreError(self.path, f"night {night_id} is unknown or already finished")

        self._tx(do)

    # -- results and attempts -----------------------------------------------------
    def judged(self, night_id: str) -> set[str]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(s.results.c.capsule_id).where(s.results.c.night_id == night_id))
            return {str(r[0]) for r in rows}

    def add_result(self, result: CapsuleResult) -> None:
        """Once per capsule per night: a second verdict is refused, never merged."""
        try:
            self._tx(lambda conn: conn.execute(insert(s.results).values(**result_row(result))))
        except IntegrityError:
            raise StoreError(self.path, f"capsule {result.capsule_id} already has a verdict for night "
                                        f"{result.night_id}; verdicts are never changed") from None

    def start_attempt(self, record: AttemptRecord) -> None:
        try:
            self._tx(lambda conn: conn.execute(insert(s.attempts).values(**attempt_row(record), state="started")))
        except IntegrityError:
            raise StoreError(self.path, f"attempt {record.id} (#{record.index}) is already recorded") from None

    def finish_attempt(self, record: AttemptRecord) -> None:
        row = {k: v for k, v in attempt_row(record).items()
               if k not in ("id", "night_id", "capsule_id", "side", "idx", "started_at")}

        def do(conn: Any) -> None:
            res = conn.execute(update(s.attempts).where(s.attempts.c.id == record.id, s.attempts.c.state == "started")
                               .values(**row, state="finished"))
            if res.rowcount != 1:
                raise StoreError(self.path, f"attempt {record.id} was not started or is already finished")

        self._tx(do)

    def attempts(self, night_id: str, capsule_id: str, side: str) -> list[AttemptRecord]:
        """Every attempt of one side of one capsule in a night, started ones included, by index."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(s.attempts).where(
                s.attempts.c.night_id == night_id, s.attempts.c.capsule_id == capsule_id, s.attempts.c.side == side)
                .order_by(s.attempts.c.idx)).mappings().all()
        return [attempt_of(r) for r in rows]

    def add_results(self, results: Sequence[CapsuleResult]) -> None:
        """Many verdicts with their finished attempts in one transaction (an import of nights
        judged elsewhere, the bench's history); the same rules as add_result."""
        def do(conn: Any) -> None:
            if results:
                conn.execute(insert(s.results), [result_row(r) for r in results])
            rows = [{**attempt_row(a), "state": a.state} for r in results for a in r.attempts]
            if rows:
                conn.execute(insert(s.attempts), rows)

        try:
            self._tx(do)
        except IntegrityError:
            raise StoreError(self.path, "a verdict or an attempt of these is already recorded; "
                                        "verdicts are never changed") from None

    # -- reading the history --------------------------------------------------------
    def nights(self, last: int | None = None) -> list[Night]:
        """The last `last` nights (all by default), oldest first, without their results."""
        with self.engine.connect() as conn:
            q = select(s.nights).order_by(s.nights.c.started_at.desc(), s.nights.c.id.desc())
            rows = conn.execute(q.limit(last) if last else q).mappings().all()
        return [night_of(r) for r in reversed(rows)]

    def night(self, night_id: str) -> Night:
        """One night with its results and their finished attempts (two queries)."""
        with self.engine.connect() as conn:
            row = conn.execute(select(s.nights).where(s.nights.c.id == night_id)).mappings().first()
            if row is None:
                raise StoreError(self.path, f"no night {night_id} in this history")
            return self._night_with_results(conn, row)

    def marks(self, night_id: str) -> list[Mark]:
        """A night's results, light (what the attention view reads for every night)."""
        r = s.results.c
        q = select(r.capsule_id, r.path, r.verdict, r.signature, r.ref, r.ref_verdict, r.rate_k, r.rate_n,
                   r.commit_id.is_not(None)).where(r.night_id == night_id)
        with self.engine.connect() as conn:
            rows = conn.execute(q).cursor.fetchall()  # the driver's rows at once: 300,000 of them in a report
        return [Mark(*row) for row in rows]

    def history(self, last: int | None = None) -> History:
        """The last `last` nights (all by default), oldest first, with the transitions between
        the last two finished nights."""
        nights = [self.night(n.id) for n in self.nights(last)]
        finished = [n for n in nights if n.finished_at is not None]
        moved = transitions(finished[-2], finished[-1]) if len(finished) >= 2 else (
            transitions(None, finished[-1]) if finished else ())
        return History(tuple(nights), tuple(moved))

    def capsule_results(self, capsule_id: str) -> list[CapsuleResult]:
        """One capsule's verdicts across nights, oldest first; `capsule_id` may be a prefix
        (read as a range of the index, never a scan)."""
        c = s.results.c.capsule_id
        cond = and_(c >= capsule_id, c < _after_prefix(capsule_id)) if capsule_id else c == capsule_id
        return self._results_where(cond)

    def results_at_path(self, path: str) -> list[CapsuleResult]:
        """Every verdict recorded for a capsule collected at `path` (as the history spells it),
        whatever its content was then, oldest first."""
        return self._results_where(s.results.c.path == path)

    def capsule_ids(self, prefix: str, limit: int = 20) -> list[str]:
        """The distinct capsule ids starting with `prefix`, at most `limit`."""
        c = s.results.c.capsule_id
        q = select(c).where(c >= prefix, c < _after_prefix(prefix)).distinct().order_by(c).limit(limit)
        with self.engine.connect() as conn:
            return [str(r[0]) for r in conn.execute(q)]

    def _results_where(self, cond: Any) -> list[CapsuleResult]:
        with self.engine.connect() as conn:
            q = (select(s.results, s.nights.c.started_at).join(s.nights, s.nights.c.id == s.results.c.night_id)
                 .where(cond))
            rows = sorted(conn.execute(q).mappings().all(), key=lambda r: (r["started_at"], r["night_id"]))
            return [self._result(conn, r) for r in rows]

    def _night_with_results(self, conn: Any, row: RowMapping) -> Night:
        a = s.attempts.c
        by_capsule: dict[str, list[AttemptRecord]] = {}
        q = select(s.attempts).where(a.night_id == row["id"], a.state == "finished")
        for att in conn.execute(q).mappings():
            by_capsule.setdefault(att["capsule_id"], []).append(attempt_of(att))
        for atts in by_capsule.values():
            atts.sort(key=lambda x: (x.side, x.index))
        results = conn.execute(select(s.results).where(s.results.c.night_id == row["id"])).mappings().all()
        return night_of(row, tuple(sorted((result_of(r, by_capsule.get(r["capsule_id"], ())) for r in results),
                                        key=lambda x: x.path)))

    def _result(self, conn: Any, row: RowMapping) -> CapsuleResult:
        q = select(s.attempts).where(s.attempts.c.night_id == row["night_id"],
                                     s.attempts.c.capsule_id == row["capsule_id"],
                                     s.attempts.c.state == "finished").order_by(s.attempts.c.side, s.attempts.c.idx)
        atts = tuple(attempt_of(a) for a in conn.execute(q).mappings().all())
        return result_of(row, atts)

    def query_plans(self) -> dict[str, str]:
        """SQLite's plan of each read the store makes (scripts/bench checks each uses an index)."""
        if self.engine.dialect.name != "sqlite":
            return {}
        r, a, n = s.results.c, s.attempts.c, s.nights.c
        reads = {
            "nights": select(s.nights).order_by(n.started_at.desc(), n.id.desc()).limit(30),
            "night": select(s.nights).where(n.id == "x"),
            "night results": select(s.results).where(r.night_id == "x"),
            "night attempts": select(s.attempts).where(a.night_id == "x", a.state == "finished"),
            "marks": select(r.capsule_id, r.verdict).where(r.night_id == "x"),
            "judged": select(r.capsule_id).where(r.night_id == "x"),
            "capsule attempts": select(s.attempts).where(a.night_id == "x", a.capsule_id == "y", a.side == "recorded"),
            "capsule by id prefix": select(s.results).where(r.capsule_id >= "ab", r.capsule_id < "ac"),
            "capsule by path": select(s.results).where(r.path == "caps/x.json"),
            "night capsules": select(s.night_capsules).where(s.night_capsules.c.night_id == "x"),
        }
        out = {}
        with self.engine.connect() as conn:
            for name, q in reads.items():
                sql = str(q.compile(self.engine, compile_kwargs={"literal_binds": True}))
                out[name] = " | ".join(str(row[-1]) for row in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql))
        return out

    def close(self) -> None:
        self.engine.dispose()


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
