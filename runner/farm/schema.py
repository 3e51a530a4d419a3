"""The farm's tables and their versioned migrations.

Each migration is frozen DDL: a database made by an older replay is brought up to
date one version at a time, and a newer database than this replay knows is refused.
The DDL is plain SQL that SQLite and PostgreSQL both read; what each dialect says its
own way (the triggers that keep verdicts and finished attempts immutable) is chosen per
dialect: one schema, one migration path.
"""
from __future__ import annotations

import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import PathError
from .db import Conn

_V1 = (
    """CREATE TABLE nights (
        id VARCHAR PRIMARY KEY, started_at VARCHAR NOT NULL, finished_at VARCHAR, ref VARCHAR,
        sources TEXT NOT NULL, options TEXT NOT NULL, replay_version VARCHAR NOT NULL,
        images INTEGER NOT NULL DEFAULT 0, builds INTEGER NOT NULL DEFAULT 0)""",
    """CREATE TABLE night_capsules (
        night_id VARCHAR NOT NULL REFERENCES nights(id), capsule_id VARCHAR NOT NULL,
        position INTEGER NOT NULL, path VARCHAR NOT NULL, format VARCHAR NOT NULL, also_at TEXT NOT NULL,
        PRIMARY KEY (night_id, capsule_id))""",
    """CREATE TABLE results (
        night_id VARCHAR NOT NULL REFERENCES nights(id), capsule_id VARCHAR NOT NULL,
        path VARCHAR NOT NULL, format VARCHAR NOT NULL, repo VARCHAR, commit_id VARCHAR,
        verdict VARCHAR NOT NULL, signature VARCHAR, recorded_signature VARCHAR, exit_code INTEGER,
        key_lines TEXT NOT NULL, reason TEXT NOT NULL, rate_k INTEGER, rate_n INTEGER,
        rate_low REAL, rate_high REAL, ref VARCHAR, ref_verdict VARCHAR, image_digest VARCHAR,
        duration_s REAL NOT NULL, replay_version VARCHAR NOT NULL, finished_at VARCHAR NOT NULL,
        also_at TEXT NOT NULL, PRIMARY KEY (night_id, capsule_id))""",
    """CREATE TABLE attempts (
        id VARCHAR PRIMARY KEY, night_id VARCHAR NOT NULL REFERENCES nights(id),
        capsule_id VARCHAR NOT NULL, side VARCHAR NOT NULL, idx INTEGER NOT NULL,
        state VARCHAR NOT NULL, started_at VARCHAR NOT NULL, finished_at VARCHAR,
        exit_code INTEGER, signal VARCHAR, signature VARCHAR, classification VARCHAR,
        duration_s REAL, timed_out INTEGER NOT NULL DEFAULT 0, key_lines TEXT NOT NULL DEFAULT '[]',
        UNIQUE (night_id, capsule_id, side, idx))""",
)

# SQLite: the history's promises enforced by the database itself, not only by the store's
# API (a second tool writing the file, or a bug, cannot rewrite a verdict).
_V2_SQLITE = (
    "CREATE INDEX attempts_by_capsule ON attempts (night_id, capsule_id, side)",
    """CREATE TRIGGER results_no_update BEFORE UPDATE ON results
       BEGIN SELECT RAISE(ABORT, 'a verdict is never changed'); END""",
    """CREATE TRIGGER results_no_delete BEFORE DELETE ON results
       BEGIN SELECT RAISE(ABORT, 'a verdict is never deleted'); END""",
    """CREATE TRIGGER attempts_finish_once BEFORE UPDATE ON attempts WHEN OLD.state = 'finished'
       BEGIN SELECT RAISE(ABORT, 'a finished attempt is never changed'); END""",
    """CREATE TRIGGER attempts_no_delete BEFORE DELETE ON attempts
       BEGIN SELECT RAISE(ABORT, 'an attempt is never deleted'); END""",
    """CREATE TRIGGER nights_finish_once BEFORE UPDATE ON nights WHEN OLD.finished_at IS NOT NULL
       BEGIN SELECT RAISE(ABORT, 'a finished night is never changed'); END""",
)


def _run(statements: tuple[str, ...]) -> Callable[[Conn], None]:
    def apply(conn: Conn) -> None:
        for stmt in statements:
            conn.execute(stmt)

    return apply


# PostgreSQL: the same promises as the SQLite triggers, in PL/pgSQL.
_V2_POSTGRES = (
    _V2_SQLITE[0],
    """CREATE FUNCTION replay_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN RAISE EXCEPTION '%', TG_ARGV[0]; END $$""",
    """CREATE TRIGGER results_no_update BEFORE UPDATE ON results FOR EACH ROW
       EXECUTE FUNCTION replay_refuse('a verdict is never changed')""",
    """CREATE TRIGGER results_no_delete BEFORE DELETE ON results FOR EACH ROW
       EXECUTE FUNCTION replay_refuse('a verdict is never deleted')""",
    """CREATE TRIGGER attempts_finish_once BEFORE UPDATE ON attempts FOR EACH ROW WHEN (OLD.state = 'finished')
       EXECUTE FUNCTION replay_refuse('a finished attempt is never changed')""",
    """CREATE TRIGGER attempts_no_delete BEFORE DELETE ON attempts FOR EACH ROW
       EXECUTE FUNCTION replay_refuse('an attempt is never deleted')""",
    """CREATE TRIGGER nights_finish_once BEFORE UPDATE ON nights FOR EACH ROW WHEN (OLD.finished_at IS NOT NULL)
       EXECUTE FUNCTION replay_refuse('a finished night is never changed')""",
)


def _v2(conn: Conn) -> None:
    if conn.dialect == "sqlite":
        _run(_V2_SQLITE)(conn)
    elif conn.dialect == "postgresql":
        _run(_V2_POSTGRES)(conn)
    else:  # another server database: the index, and its own triggers when that dialect is added
        conn.execute(_V2_SQLITE[0])


# Every query the store makes has an index (scripts/bench checks the query plans): a night's
# results and a capsule's attempts by their keys already; nights by start, one capsule's
# results by its id (or an id prefix) and by the path it was collected at.
_V3 = (
    "CREATE INDEX nights_by_start ON nights (started_at, id)",
    "CREATE INDEX results_by_capsule ON results (capsule_id)",
    "CREATE INDEX results_by_path ON results (path)",
)


# The attention view reads every night's marks (300,000 of them for 10,000 capsules x 30
# nights): an index that holds them answers without reading the results' wide rows.
_V4 = ("CREATE INDEX results_marks ON results "
       "(night_id, capsule_id, verdict, signature, ref, ref_verdict, rate_k, rate_n)",)


# A flaky capsule's signatures kept as a set, what the plan did not replay exactly (why a capsule
# may never reproduce here), and the confidence its rate was stated at; the marks' index holds
# the signatures too.
_V5 = (
    "ALTER TABLE results ADD COLUMN signatures TEXT",
    "ALTER TABLE results ADD COLUMN not_applied TEXT",
    "ALTER TABLE results ADD COLUMN rate_confidence REAL",
    "DROP INDEX results_marks",
    "CREATE INDEX results_marks ON results "
    "(night_id, capsule_id, verdict, signature, ref, ref_verdict, rate_k, rate_n, signatures)",
)


@dataclass(frozen=True)
class Migration:
    version: int
    what: str
    apply: Callable[[Conn], None]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "nights, their capsules, results and attempts", _run(_V1)),
    Migration(2, "verdicts and finished attempts immutable; attempts indexed", _v2),
    Migration(3, "nights by start, results by capsule and by path indexed", _run(_V3)),
    Migration(4, "night marks indexed (covering)", _run(_V4)),
    Migration(5, "signature sets, what was not replayed exactly, the rate's confidence", _run(_V5)),
)
LATEST = MIGRATIONS[-1].version


def lock_for_migration(conn: Conn) -> None:
    """On a server, one migrating transaction at a time (held until the caller's transaction ends);
    SQLite's own write lock does the same for a file."""
    if conn.dialect == "postgresql":
        conn.execute("SELECT pg_advisory_xact_lock(7270110)")  # a fixed key: replay's history


def current_version(conn: Conn) -> int:
    """0 for a new database."""
    has = conn.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'schema_version'"
                      if conn.dialect == "sqlite" else
                      "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_version' "
                      "AND table_schema = current_schema()")
    if not has:
        return 0
    return int(conn.scalar("SELECT max(version) FROM schema_version") or 0)


def migrate(conn: Conn, upto: int = LATEST) -> list[int]:
    """Apply the missing migrations in order (in the caller's transaction); the versions applied."""
    found = current_version(conn)
    if found == 0:
        conn.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at VARCHAR NOT NULL)")
    applied = []
    for m in MIGRATIONS:
        if found < m.version <= upto:
            m.apply(conn)
            conn.execute("INSERT INTO schema_version (version, applied_at) VALUES (:v, CURRENT_TIMESTAMP)",
                         {"v": m.version})
            applied.append(m.version)
    return applied


# --- what a command that only reads checks, without writing ------------------------------------

NO_HISTORY = "no farm history here (run `replay farm run` first, or pass --db)"


def not_a_file(path: Path) -> str | None:
    """Why a SQLite history a read-only command would open is no file (None: it is one)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return NO_HISTORY
    except OSError as exc:
        return PathError.of(path, exc).problem
    return None if stat.S_ISREG(mode) else "not a farm history (not a regular file)"


def unreadable(found: int) -> str | None:
    """Why a history at schema version `found` cannot be read as it is (None: it can)."""
    if found == 0:
        return ("not a farm history (no schema_version table; `replay farm run` makes one, or pass --db); "
                "left as it was")
    if found > LATEST:
        return f"history schema version {found} is newer than this replay understands ({LATEST}); upgrade replay"
    if found < LATEST:
        return (f"history schema version {found} is older than this replay's ({LATEST}); the next `replay farm run` "
                "with it upgrades it (a command that only reads changes nothing)")
    return None
