"""The servers integration tests start themselves (a PostgreSQL for a shared history, a Redis broker for
the workers), each for the module that asks for it, stopped after; missing in CI is a failure."""
from __future__ import annotations

import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.services import free_port, missing, wait_until

# whichever PostgreSQL Debian's package installed (scripts/setup looks for the same)
PG_BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"))), Path("/usr/lib/postgresql/15/bin"))



def _as_postgres(cmd: str) -> None:
    subprocess.run(["su", "postgres", "-c", cmd], check=True, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """A PostgreSQL server of this module's own; the URL of its `postgres` database."""
    if not (PG_BIN / "initdb").exists():
        missing("the PostgreSQL history's tests need Debian's postgresql (apt-get install postgresql)")
    root = Path(tempfile.mkdtemp(prefix="replay-pg-"))
    shutil.chown(root, "postgres")
    port = free_port()
    data = root / "db"
    _as_postgres(f"{PG_BIN}/initdb -D {data} -A trust -U postgres")
    _as_postgres(f"{PG_BIN}/pg_ctl -D {data} -w -t 60 -o '-p {port} -k {root} -c listen_addresses=127.0.0.1 "
                 f"-c fsync=off' -l {root}/log start")  # -w: returns once the server accepts connections
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        _as_postgres(f"{PG_BIN}/pg_ctl -D {data} -m fast -w stop")
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def db(server: str) -> Iterator[str]:
    """A fresh database on the server for one test."""
    import psycopg  # the postgres extra: imported only by the tests that ask for a server

    name = f"farm_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server, autocommit=True) as admin:  # CREATE DATABASE runs outside a transaction
        admin.execute(f'CREATE DATABASE "{name}"')
    yield server.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = shutil.which("redis-server")
    if server is None:
        missing("the workers' tests need Debian's redis-server (apt-get install redis-server)")
    port = free_port()
    log = tmp_path_factory.mktemp("redis") / "redis.log"
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--logfile", str(log)])
    import redis

    client = redis.Redis(port=port)
    wait_until("redis answering", lambda: _pings(client), 30)
    yield f"redis://127.0.0.1:{port}/0"
    proc.terminate()
    proc.wait(30)


def _pings(client: Any) -> bool:
    try:
        return bool(client.ping())
    except Exception:
        return False
