"""A user installs the wheel, not the dev venv: every console entry point's real path, from
a clean venv with no dev tools — where a missing dependency shows (kombu's Redis transport
needs `packaging`, which only celery[redis] brings)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.helpers import ROOT
from tests.services import wait_until
from tests.unit.farm.builders import write_instance

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # minutes: `pytest -m "not slow"` for a quick run
BUNDLE = ROOT / "examples" / "tz-clock"


def _run(*cmd: str | Path, cwd: Path, timeout: float = 900, **kw: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env,
                          **kw)  # type: ignore[call-overload]


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """A fresh venv with the wheel alone (no extras, no dev tools): (its bin, the wheel)."""
    root = tmp_path_factory.mktemp("clean")
    built = _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", root, ROOT, cwd=root)
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = next(root.glob("replay_runner-*.whl"))
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True)
    bin_dir = root / "venv" / "bin"
    installed = _run(bin_dir / "pip", "install", "-q", wheel, cwd=root)
    assert installed.returncode == 0, installed.stderr[-2000:]
    listed = _run(bin_dir / "pip", "list", "--format=json", cwd=root).stdout
    names = {p["name"].lower() for p in json.loads(listed)}
    assert not names & {"pytest", "ruff", "mypy", "hypothesis", "celery", "psycopg"}, names  # clean: no extras
    yield bin_dir, wheel


def test_help_replay_and_the_runner_image_context_from_the_bare_wheel(venv: tuple[Path, Path], tmp_path: Path) -> None:
    bin_dir, _ = venv
    assert _run(bin_dir / "replay", "--help", cwd=tmp_path).returncode == 0
    done = _run(bin_dir / "replay", BUNDLE / "capsule.json", "--repo", BUNDLE / "repo.bundle", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["result"]["verdict"] == "reproduced"
    ctx = tmp_path / "ctx"
    made = _run(bin_dir / "replay", "ci", "image", "--context-only", ctx, cwd=ROOT)  # from inside a checkout
    assert made.returncode == 0, made.stderr
    assert (ctx / "Dockerfile").is_file() and (ctx / "runner" / "cli" / "main.py").is_file()


def test_a_missing_extra_is_one_line_naming_it(venv: tuple[Path, Path], tmp_path: Path, redis_url: str) -> None:  # noqa: F811
    bin_dir, _ = venv
    worker = _run(bin_dir / "replay", "worker", "--broker", redis_url, cwd=tmp_path, timeout=120)
    err = worker.stderr.strip().splitlines()
    assert worker.returncode == 3 and len(err) == 1, worker.stderr
    assert "replay-runner[workers]" in err[0] and "internal error" not in err[0]
    caps = tmp_path / "caps"
    write_instance(caps / "a.json", ["python3", "-c", "print('hi')"], "hi\n")
    night = _run(bin_dir / "replay", "farm", "run", caps, "--db", "postgresql://nobody@127.0.0.1:9/x", cwd=tmp_path)
    assert night.returncode == 3 and "replay-runner[postgres]" in night.stderr, night.stderr


@pytest.fixture(scope="module")
def with_extras(venv: tuple[Path, Path]) -> Path:
    bin_dir, wheel = venv
    added = _run(bin_dir / "pip", "install", "-q", f"{wheel}[workers,postgres]", cwd=wheel.parent)
    assert added.returncode == 0, added.stderr[-2000:]
    return bin_dir


def test_a_worker_from_the_wheel_serves_a_farm_task(with_extras: Path, tmp_path: Path, redis_url: str) -> None:  # noqa: F811
    log = tmp_path / "worker.log"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.Popen([str(with_extras / "replay"), "worker", "--broker", redis_url, "--concurrency", "1",
                             "--name", "clean@test"], cwd=tmp_path, env=env, stdout=log.open("wb"),
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_until("the clean worker ready", lambda: " ready." in log.read_text(errors="replace") or
                   proc.poll() is not None, 180)
        assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
        caps = tmp_path / "caps"
        write_instance(caps / "one.json", ["python3", "-c", "print('from the wheel')"], "from the wheel\n")
        night = _run(with_extras / "replay", "farm", "run", caps, "--db", tmp_path / "farm.sqlite", "--executor",
                     "celery", "--broker", redis_url, "--attempts", "1", "--json", cwd=tmp_path)
        assert night.returncode == 0, night.stderr[-3000:]
        assert "ran 1 attempt" in log.read_text(errors="replace")
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(60)


def test_a_postgres_history_from_the_wheel(with_extras: Path, tmp_path: Path, db: str) -> None:  # noqa: F811
    caps = tmp_path / "caps"
    write_instance(caps / "one.json", ["python3", "-c", "print('pg')"], "pg\n")
    night = _run(with_extras / "replay", "farm", "run", caps, "--db", db, "--attempts", "1", cwd=tmp_path)
    assert night.returncode == 0, night.stderr[-3000:]
    report = _run(with_extras / "replay", "farm", "report", "--db", db, "--json", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
