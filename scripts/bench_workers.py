"""Workers rows of scripts/bench.py (issue 13): the farm's Celery path on this machine.

Six CodeInstances capsules whose command is a single-threaded busy loop (two seconds
of CPU), one image, built (and known to each worker) before anything is timed. A Redis server (Debian's
redis-server) on a loopback port and `replay worker` processes (concurrency 1 each):
  two workers vs one   capsules per hour with two local workers against one
                       (target >= 1.7x on 2 cores)
  per-task overhead    the Celery path (one worker) against a local farm run of the same
                       capsules, both --jobs 1, per task (one task per capsule here)
                       (target <= 0.5 s)
Runs on its own too: `.venv/bin/python scripts/bench_workers.py`.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REPLAY = [sys.executable, "-m", "runner"]
COUNT = 6
BUSY = "import time\nt = time.process_time()\nwhile time.process_time() - t < 2.0: pass\nprint('done {i}')"

Row = Callable[[str, str, str, bool | None], None]


def capsules(folder: Path, count: int = COUNT, start: int = 0) -> Path:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.unit.farm.builders import write_instance

    for i in range(start, start + count):
        write_instance(folder / f"busy-{i}.json", ["python3", "-c", BUSY.format(i=i)], f"done {i}\n")
    return folder


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(check: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


@contextmanager
def redis_server(tmp: Path) -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--logfile", str(tmp / "redis.log")])
    try:
        ping = lambda: subprocess.run(["redis-cli", "-p", str(port), "ping"],  # noqa: E731
                                      capture_output=True, text=True).stdout.strip() == "PONG"
        if not _wait(ping, 30):
            raise RuntimeError("redis-server did not answer")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(30)


@contextmanager
def workers(n: int, broker: str, env: dict[str, str], tmp: Path) -> Iterator[None]:
    procs = []
    try:
        for i in range(n):
            log = tmp / f"worker-{n}-{i}.log"
            procs.append((subprocess.Popen([*REPLAY, "worker", "--broker", broker, "--concurrency", "1",
                                            "--name", f"bench{n}-{i}@%h"], env=env, stdout=log.open("wb"),
                                           stderr=subprocess.STDOUT, start_new_session=True), log))
        for proc, log in procs:
            if not _wait(lambda p=proc, f=log: " ready." in f.read_text(errors="replace") or p.poll() is not None,
                         120) or proc.poll() is not None:
                raise RuntimeError(f"worker did not start: {log.read_text(errors='replace')[-500:]}")
        yield
    finally:
        for proc, _ in procs:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(30)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(proc.pid, signal.SIGKILL)


def farm(folder: Path, db: Path, env: dict[str, str], *extra: str) -> tuple[float, dict[str, Any] | None]:
    start = time.monotonic()
    proc = subprocess.run([*REPLAY, "farm", "run", str(folder), "--db", str(db), "--json", *extra], env=env,
                          capture_output=True, text=True, timeout=3600)
    secs = time.monotonic() - start
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        print(f"bench: farm failed: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return secs, None
    ok = doc["exit_code"] == 0 and all(r["verdict"] == "reproduced" for r in doc["result"]["results"])
    return secs, doc if ok else None


def run(tmp: Path, env: dict[str, str], warm_s: float, row: Row) -> None:
    """`warm_s` is not needed here: both sides of each ratio are measured."""
    if shutil.which("redis-server") is None:
        row("workers: two vs one", "no redis-server (apt-get install redis-server)", ">= 1.7x", False)
        return
    env = {**env, "REPLAY_IMAGE_REPO": f"replay/benchworkers{int(time.time())}",
           "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])}
    folder = capsules(tmp / "workers-capsules")
    try:
        _measure(tmp, env, folder, row)
    finally:
        repo = env["REPLAY_IMAGE_REPO"]
        for ref in subprocess.run(["docker", "images", "-q", repo], capture_output=True, text=True).stdout.split():
            subprocess.run(["docker", "image", "rm", "-f", ref], capture_output=True)


def _measure(tmp: Path, env: dict[str, str], folder: Path, row: Row) -> None:
    # two other capsules of the same image warm the engine and each worker's image cache
    warm = capsules(tmp / "workers-warm", 2, COUNT)
    farm(warm, tmp / "w-warm.sqlite", env, "--jobs", "1")
    local_s, local = farm(folder, tmp / "w-local.sqlite", env, "--jobs", "1")
    with redis_server(tmp) as broker:
        celery = ("--executor", "celery", "--broker", broker)
        with workers(1, broker, env, tmp):
            farm(warm, tmp / "w-warm1.sqlite", env, *celery, "--jobs", "1")
            one_task_s, one_task = farm(folder, tmp / "w-c1.sqlite", env, *celery, "--jobs", "1")
            one_s, one = farm(folder, tmp / "w-one.sqlite", env, *celery, "--jobs", "2")
        with workers(2, broker, env, tmp):
            farm(warm, tmp / "w-warm2.sqlite", env, *celery, "--jobs", "2")
            two_s, two = farm(folder, tmp / "w-two.sqlite", env, *celery, "--jobs", "2")
    if one is None or two is None:
        row("workers: two local workers vs one", "failed (see stderr)", ">= 1.7x", False)
    else:
        ratio = one_s / two_s
        row("workers: two local workers vs one", f"{COUNT / two_s * 3600:.0f}/h vs {COUNT / one_s * 3600:.0f}/h"
            f" = {ratio:.2f}x", ">= 1.7x", ratio >= 1.7)
    if local is None or one_task is None:
        row("workers: Celery overhead per task", "failed (see stderr)", "<= 0.5 s", False)
    else:
        per = (one_task_s - local_s) / COUNT
        row("workers: Celery overhead per task", f"{one_task_s:.1f}s vs local {local_s:.1f}s: {per:+.2f} s/task",
            "<= 0.5 s", per <= 0.5)


if __name__ == "__main__":
    from benchrow import row

    with tempfile.TemporaryDirectory(prefix="replay-bench-workers-") as t:
        run(Path(t), dict(os.environ), float("nan"), row)
