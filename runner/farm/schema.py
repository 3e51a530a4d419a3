"""The farm's tables and their versioned migrations.

Each migration is frozen DDL: a database made by an older replay is brought up to
date one version at a time, and a newer database than this replay knows is refused.
The DDL is plain SQL that SQLite and PostgreSQL both read; what each dialect says its
own way (the triggers that keep verdicts and finished attempts immutable) is chosen per
dialect: one schema, one migration path.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Column, Connection, Float, Integer, MetaData, String, Table, Text, text

METADATA = MetaData()

# The tables as the queries see them (the migrations below create them).
nights = Table(
    "nights", METADATA,
    Column("id", String, primary_key=True), Column("started_at", String), Column("finished_at", String),
    Column("ref", String), Column("sources", Text), Column("options", Text), Column("replay_version", String),
    Column("images", Integer), Column("builds", Integer),
)
night_capsules = Table(
    "night_capsules", METADATA,
    Column("night_id", String, primary_key=True), Column("capsule_id", String, primary_key=True),
    Column("position", Integer), Column("path", String), Column("format", String), Column("also_at", Text),
)
results = Table(
    "results", METADATA,
    Column("night_id", String, primary_key=True), Column("capsule_id", String, primary_key=True),
    Column("path", String), Column("format", String), Column("repo", String), Column("commit_id", String),
    Column("verdict", String), Column("signature", String), Column("recorded_signature", String),
    Column("exit_code", Integer), Column("key_lines", Text), Column("reason", Text),
    Column("rate_k", Integer), Column("rate_n", Integer), Column("rate_low", Float), Column("rate_high", Float),
    Column("ref", String), Column("ref_verdict", String), Column("image_digest", String),
    Column("duration_s", Float), Column("replay_version", String), Column("finished_at", String),
    Column("also_at", Text),
)
attempts = Table(
    "attempts", METADATA,
    Column("id", String, primary_key=True), Column("night_id", String), Column("capsule_id", String),
    Column("side", String), Column("idx", Integer), Column("state", String), Column("started_at", String),
    Column("finished_at", String), Column("exit_code", Integer), Column("signal", String),
    Column("signature", String), Column("classification", String), Column("duration_s", Float),
    Column("timed_out", Integer), Column("key_lines", Text),
)

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


def _run(statements: tuple[str, ...]) -> Callable[[Connection], None]:
    def apply(conn: Connection) -> None:
        for stmt in statements:
            conn.execute(text(stmt))

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


def _v2(conn: Connection) -> None:
    if conn.dialect.name == "sqlite":
        _run(_V2_SQLITE)(conn)
    elif conn.dialect.name == "postgresql":
        _run(_V2_POSTGRES)(conn)
    else:  # another server database: the index, and its own triggers when that dialect is added
        conn.execute(text(_V2_SQLITE[0]))


# Every query the store makes has an index (scripts/bench checks the query plans): a night's
# results and a capsule's attempts by their keys already; nights by start, one capsule's
# results by its id (or an id prefix) and by the path it was collected at.
_V3 = (
    "CREATE INDEX nights_by_start ON nights (started_at, id)",
    "CREATE INDEX results_by_capsule ON results (capsule_id)",
    "CREATE INDEX results_by_path ON results (path)",
)


@dataclass(frozen=True)
class Migration:
    version: int
    what: str
    apply: Callable[[Connection], None]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "nights, their capsules, results and attempts", _run(_V1)),
    Migration(2, "verdicts and finished attempts immutable; attempts indexed", _v2),
    Migration(3, "nights by start, results by capsule and by path indexed", _run(_V3)),
)
LATEST = MIGRATIONS[-1].version


def lock_for_migration(conn: Connection) -> None:
    """On a server, one migrating transaction at a time (held until the caller's transaction ends);
    SQLite's own write lock does the same for a file."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(7270110)"))  # a fixed key: replay's history


def current_version(conn: Connection) -> int:
    """0 for a new database."""
    has = conn.execute(text("SELECT count(*) FROM sqlite_master WHERE name = 'schema_version'")
                       if conn.dialect.name == "sqlite" else
                       text("SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_version' "
                            "AND table_schema = current_schema()"))
    if not has.scalar():
        return 0
    return int(conn.execute(text("SELECT max(version) FROM schema_version")).scalar() or 0)


def migrate(conn: Connection, upto: int = LATEST) -> list[int]:
    """Apply the missing migrations in order (in the caller's transaction); the versions applied."""
    found = current_version(conn)
    if found == 0:
        conn.execute(text("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at VARCHAR NOT NULL)"))
    applied = []
    for m in MIGRATIONS:
        if found < m.version <= upto:
            m.apply(conn)
            conn.execute(text("INSERT INTO schema_version (version, applied_at) VALUES (:v, CURRENT_TIMESTAMP)"),
                         {"v": m.version})
            applied.append(m.version)
    return applied
