"""`replay farm run --executor celery` against real `replay worker` processes (issue 13):
a real Redis (Debian's redis-server, started here on a loopback port), the real engine,
python one-liner capsules that share one image.

Workers lease each task for LEASE_S without a heartbeat (every HEARTBEAT_S), short here
so a vanished worker's task comes back quickly.
"""
from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


from tests.unit.farm.builders import write_instance
from tests.integration.helpers import ROOT, farm_json, own_image_repo
from tests.services import wait_until

pytestmark = pytest.mark.integration

HEARTBEAT_S, LEASE_S = 1.0, 4.0
SLEEPY = "import time; time.sleep({s}); print('slept {i}')"



@pytest.fixture(scope="module", autouse=True)
def own_images(engine: Any) -> Iterator[str]:
    """A fresh image repository for this module (builds are countable), removed after."""
    with own_image_repo(engine, "replay-test-workers") as repo:
        yield repo


class Worker:
    """A `replay worker` process in a session of its own (its pool processes with it)."""

    def __init__(self, broker: str, log: Path, name: str) -> None:
        self.log, self.name = log, name
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "runner", "worker", "--broker", broker, "--concurrency", "1",
             "--heartbeat", str(HEARTBEAT_S), "--lease", str(LEASE_S), "--name", f"{name}@test"],
            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=log.open("wb"), stderr=subprocess.STDOUT,
            start_new_session=True)
        wait_until(f"worker {name} ready", lambda: " ready." in self.text() or self.proc.poll() is not None, 120)
        assert self.proc.poll() is None, self.text()[-3000:]

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def received(self) -> Counter[str]:
        return Counter(re.findall(r"Task replay\.work\[([0-9a-f]+)\] received", self.text()))

    def succeeded(self) -> set[str]:
        return set(re.findall(r"Task replay\.work\[([0-9a-f]+)\] succeeded", self.text()))

    def ran(self) -> Counter[str]:
        """Tasks this worker ran, by replay's own line: written before the answer is visible
        (Celery's "succeeded" comes after it, so a reader of the answer may not see that one yet)."""
        return Counter(re.findall(r"replay: task ([0-9a-f]+): ran \d+ attempt", self.text()))

    def skipped(self) -> Counter[str]:
        return Counter(re.findall(r"replay: task ([0-9a-f]+): (?:its answer exists|held by)", self.text()))

    def stop(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                continue
            if sig == signal.SIGTERM:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)  # pool processes a killed main left behind
                except ProcessLookupError:
                    pass
                return


@pytest.fixture
def workers(redis_url: str, tmp_path: Path) -> Iterator[list[Worker]]:
    started: list[Worker] = []
    try:
        started += [Worker(redis_url, tmp_path / f"w{i}.log", f"w{i}-{uuid.uuid4().hex[:4]}") for i in (1, 2)]
        yield started
    finally:
        for w in started:
            w.stop()


def capsules(root: Path, n: int, sleep_s: float = 0.0) -> Path:
    for i in range(n):
        code = SLEEPY.format(s=sleep_s, i=i) if sleep_s else f"print('hello {i}')"
        write_instance(root / f"c{i}.json", ["python3", "-c", code], f"slept {i}\n" if sleep_s else f"hello {i}\n")
    return root


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def task_ids(db: Path) -> set[str]:
    return {aid.rsplit("-", 1)[0] for (aid,) in rows(db, "SELECT id FROM attempts")}


def assert_once_each(db: Path, n: int, attempts: int = 3) -> None:
    """n capsules, one verdict each, `attempts` finished attempts each, none left started."""
    assert rows(db, "SELECT count(*), count(DISTINCT capsule_id) FROM results") == [(n, n)]
    per = Counter(c for (c,) in rows(db, "SELECT capsule_id FROM attempts WHERE state = 'finished'"))
    assert sorted(per.values()) == [attempts] * n
    assert rows(db, "SELECT count(*) FROM attempts WHERE state = 'started'") == [(0,)]


def assert_nothing_left(engine: Any, db: Path) -> None:
    for task in task_ids(db):
        assert not engine.client.containers.list(all=True, filters={"label": f"replay=task-{task}"})
        assert not engine.client.networks.list(filters={"label": f"replay=task-{task}"})
    names = [c.name for c in engine.client.containers.list(all=True)]
    ids = {aid for (aid,) in rows(db, "SELECT id FROM attempts")}
    assert not [n for n in names if n.startswith("replay-attempt-") and n.removeprefix("replay-attempt-") in ids]


# -- spread over two workers -----------------------------------------------------------------

@pytest.fixture
def busy_cores() -> Iterator[int]:
    """Both cores (all of them) kept busy by a second workload for the test's length: two
    busy loops a core, as a loaded farm host has them beside the night."""
    n = 2 * (os.cpu_count() or 2)
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield n
    finally:
        for p in loops:
            p.kill()
        for p in loops:
            p.wait(30)


def test_capsules_spread_over_two_workers_land_in_the_history_once_each(
        busy_cores: int, workers: list[Worker], redis_url: str, tmp_path: Path, engine: Any) -> None:
    db = tmp_path / "farm.sqlite"
    rc, result = farm_json("run", capsules(tmp_path / "caps", 6), "--db", db, "--executor", "celery",
                           "--broker", redis_url, "--jobs", "2")
    assert rc == 0
    assert sorted(r["verdict"] for r in result["results"]) == ["reproduced"] * 6
    assert result["night"]["images"] == 1
    assert_once_each(db, 6)
    ran = [w.ran() for w in workers]
    assert all(ran), "both workers took tasks"
    everywhere = ran[0] + ran[1]
    assert set(everywhere) == task_ids(db) and set(everywhere.values()) == {1}  # each task ran once, on one
    delivered = sum((w.received() for w in workers), Counter())
    skipped = sum((w.skipped() for w in workers), Counter())
    assert delivered == everywhere + skipped, (delivered, everywhere, skipped)  # any other delivery said so
    assert not skipped, "no worker died, so no task was sent twice"
    assert_nothing_left(engine, db)


def test_a_local_run_of_the_same_capsules_records_the_same(tmp_path: Path, redis_url: str,
                                                           workers: list[Worker]) -> None:
    """The history cannot tell the executors apart: same verdicts, same attempt shapes."""
    caps = capsules(tmp_path / "caps", 2)
    _, remote = farm_json("run", caps, "--db", tmp_path / "remote.sqlite", "--executor", "celery",
                          "--broker", redis_url)
    _, local = farm_json("run", caps, "--db", tmp_path / "local.sqlite")
    shape = lambda res: sorted((Path(r["path"]).name, r["verdict"], r["signature"], r["image_digest"],  # noqa: E731
                                [(a["side"], a["index"], a["state"], a["exit_code"], a["classification"])
                                 for a in r["attempts"]]) for r in res["results"])
    assert shape(remote) == shape(local)


# -- a worker killed during a task --------------------------------------------------------------

def _holder(workers: list[Worker], db: Path) -> Worker | None:
    """The worker running a task of this night right now (received, not yet succeeded)."""
    if not db.exists():
        return None
    try:
        tasks = task_ids(db)
    except sqlite3.OperationalError:
        return None
    for w in workers:
        if any(t in tasks for t in set(w.received()) - w.succeeded()):
            return w
    return None


def test_sigkill_of_a_worker_mid_task_the_other_runs_it_within_the_lease(
        workers: list[Worker], redis_url: str, tmp_path: Path, engine: Any) -> None:
    db = tmp_path / "farm.sqlite"
    out = tmp_path / "farm.json"
    farm = subprocess.Popen([sys.executable, "-m", "runner", "farm", "run", str(capsules(tmp_path / "caps", 3, 3.0)),
                             "--db", str(db), "--executor", "celery", "--broker", redis_url, "--jobs", "2",
                             "--json"], env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=out.open("wb"), stderr=subprocess.PIPE)
    try:
        victim = wait_until("a worker holding a task", lambda: _holder(workers, db), 300)
        held = {t for t in set(victim.received()) - victim.succeeded()}
        wait_until("its attempt's container running",
                 lambda: any(engine.client.containers.list(filters={"label": f"replay=task-{t}"}) for t in held), 120)
        os.kill(victim.proc.pid, signal.SIGKILL)  # the whole worker: its main process, heartbeat and all
        killed_at = time.monotonic()
        other = next(w for w in workers if w is not victim)
        wait_until("the other worker taking the task", lambda: held & set(other.received()), LEASE_S + 30)
        taken_after = time.monotonic() - killed_at
        farm.wait(300)
    finally:
        if farm.poll() is None:
            farm.kill()
    doc = json.loads(out.read_text())
    assert farm.returncode == 0, (doc, farm.stderr.read().decode()[-2000:] if farm.stderr else "")
    assert sorted(r["verdict"] for r in doc["result"]["results"]) == ["reproduced"] * 3
    assert taken_after <= LEASE_S + 2 * HEARTBEAT_S + 10  # the lease, not Redis's visibility timeout
    assert held <= set(other.ran())
    assert_once_each(db, 3)
    victim.stop()  # and the pool process it left: nothing of the killed delivery may survive it
    assert_nothing_left(engine, db)


# -- the coordinator killed while tasks are out, then resumed ------------------------------------

def test_coordinator_killed_with_tasks_in_flight_resumes_by_collecting_them(
        workers: list[Worker], redis_url: str, tmp_path: Path, engine: Any) -> None:
    db = tmp_path / "farm.sqlite"
    caps = capsules(tmp_path / "caps", 4, 2.0)
    farm = subprocess.Popen([sys.executable, "-m", "runner", "farm", "run", str(caps), "--db", str(db),
                             "--executor", "celery", "--broker", redis_url, "--jobs", "2"],
                            env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until("a task in flight", lambda: _holder(workers, db), 300)
    finally:
        farm.send_signal(signal.SIGKILL)
        farm.wait(60)
    in_flight = {t for w in workers for t in set(w.received()) - w.succeeded()} & task_ids(db)
    assert in_flight and rows(db, "SELECT count(*) FROM results") != [(4,)]

    rc, result = farm_json("run", "--resume", "--db", db, "--broker", redis_url)
    assert rc == 0 and result["night"]["finished_at"]
    assert sorted(r["verdict"] for r in result["results"]) == ["reproduced"] * 4
    assert_once_each(db, 4)
    sent = sum((w.received() for w in workers), Counter())
    assert all(sent[t] == 1 for t in task_ids(db)), sent  # collected by id, never sent a second time
    assert in_flight <= set().union(*(set(w.ran()) for w in workers))
    assert_nothing_left(engine, db)


# -- deliveries that must not run ------------------------------------------------------------------

def test_a_delivery_whose_answer_exists_or_whose_holder_lives_is_skipped_with_a_line(
        workers: list[Worker], redis_url: str) -> None:
    """A late second delivery finds the answer and runs nothing; one of a task another live worker
    holds (its lease fresh) runs nothing either: the holder answers, or its lease lapses."""
    import redis

    from runner.workers.app import TASK_NAME, make_app
    from runner.workers.taskkeys import TaskKeys

    answered, held = uuid.uuid4().hex, uuid.uuid4().hex
    r = redis.Redis.from_url(redis_url)
    r.set(TaskKeys(answered).done, json.dumps({"schema": "replay.done/1", "attempts": []}), ex=600)
    r.set(TaskKeys(held).lease, "other-worker@elsewhere", ex=600)
    app = make_app(redis_url)
    for task_id in (answered, held):
        app.send_task(TASK_NAME, args=[{}], task_id=task_id)
    skipped = lambda: sum((w.skipped() for w in workers), Counter())  # noqa: E731
    wait_until("both deliveries skipped", lambda: {answered, held} <= set(skipped()), 120)
    logs = "".join(w.text() for w in workers)
    assert f"replay: task {answered}: its answer exists, this delivery skipped" in logs
    assert f"replay: task {held}: held by other-worker@elsewhere, which is alive" in logs
    assert not any(w.ran()[t] for w in workers for t in (answered, held))
    assert r.get(TaskKeys(held).lease) == b"other-worker@elsewhere"  # never taken from its holder
    r.delete(TaskKeys(answered).done, TaskKeys(held).lease)


# -- a source read from the coordinator's local mirror ------------------------------------------------

def test_workers_replay_sources_the_coordinator_read_from_its_local_mirrors(
        workers: list[Worker], redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The workers know no mirror rule, cannot reach the recorded remotes and have a cache of their
    own: the coordinator reads each source from its own local mirror and ships the tree with the work."""
    from runner.build.sources import mirrors
    from tests.integration.helpers import REMOTE_A, make_night

    caps, bundle, bare_dir = make_night(tmp_path)
    monkeypatch.setenv("REPLAY_CACHE", str(tmp_path / "coordinator-cache"))
    try:
        rc, result = farm_json("run", caps, "--db", tmp_path / "farm.sqlite", "--executor", "celery",
                               "--broker", redis_url, "--mirror", f"{REMOTE_A}={bundle}",
                               "--mirror", f"https://git-b.unreachable.invalid/={bare_dir}/")
    finally:
        mirrors.use(mirrors.Mirrors())
    assert rc == 0, result
    assert sorted(r["verdict"] for r in result["results"]) == ["reproduced", "reproduced"]
    assert sum((w.ran() for w in workers), Counter()).total() == 2
