"""The image usage ledger (runner/machine/ledger.py): last uses and leases, whole under concurrent writers."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from runner.machine import ledger

ROOT = Path(__file__).resolve().parents[2]


def test_the_last_use_only_moves_forward_and_a_live_process_holds_its_images(tmp_path: Path) -> None:
    ledger.record(tmp_path, "r/img:a", "sha256:a", now=200.0)
    ledger.record(tmp_path, "r/img:a", "sha256:a", now=100.0)
    got = ledger.usage(tmp_path)
    assert got.last_used == {"sha256:a": 200.0}
    assert got.held == {"sha256:a": f"{socket.gethostname()}:{os.getpid()}"}
    ledger.forget(tmp_path, "sha256:a")
    assert ledger.usage(tmp_path).last_used == {} and ledger.usage(tmp_path).held == {}


def test_a_gone_processs_lease_holds_nothing_and_is_dropped(tmp_path: Path) -> None:
    code = "import sys; from pathlib import Path; from runner.machine import ledger; ledger.record(Path(sys.argv[1]), 't', 'sha256:b')"
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    got = ledger.usage(tmp_path)
    assert "sha256:b" in got.last_used and got.held == {}
    assert not ledger.alive(f"{socket.gethostname()}:notapid") and ledger.alive("another-host:1")


def test_concurrent_replays_each_record_every_use(tmp_path: Path) -> None:
    code = ("import sys; from pathlib import Path; from runner.machine import ledger\n"
            "for i in range(40): ledger.record(Path(sys.argv[1]), 't', f'sha256:{sys.argv[2]}-{i}')")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path), str(n)],
                              env={**os.environ, "PYTHONPATH": str(ROOT)}) for n in range(4)]
    assert [p.wait(120) for p in procs] == [0] * 4
    assert len(ledger.usage(tmp_path).last_used) == 160


def test_a_tool_cache_volumes_last_use_is_its_latest(tmp_path: Path) -> None:
    assert ledger.volumes_used(tmp_path) == {}
    ledger.record_volume(tmp_path, "replay-gocache-go1.22.10", 200.0)
    ledger.record_volume(tmp_path, "replay-gocache-go1.22.10", 100.0)  # an older report does not move it back
    assert ledger.volumes_used(tmp_path) == {"replay-gocache-go1.22.10": 200.0}
