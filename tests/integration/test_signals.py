"""Ctrl-C and SIGTERM at every stage of a replay: exit within seconds, leave nothing behind.

The replay runs under recorded HTTP traffic (a sidecar, an internal network, iptables
rules), so there is something to clean up at every stage. The signal is sent when the
stage's progress line appears (an event, not a sleep). Each capsule's command is new (its
image is named by it), so the image is built and the build is a stage too."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from runner.engine import OWNER_LABEL

from tests.services import wait_until

from tests.integration.helpers import ROOT, twin_capsule, write_json

pytestmark = pytest.mark.integration
GREETING = ROOT / "tests" / "fixtures" / "examples" / "codeinstances" / "fetch-greeting.json"
STAGES = ["verify capsule", "plan", "resolve base bookworm", "fetch runtimes", "build image",
          "start the HTTP replay", "attempt 1/1", "stop the HTTP replay"]
EXIT_WITHIN_S = 15.0  # the brief's bound on a loaded machine


def owned_by(engine: Any, pid: int) -> list[str]:
    flt = {"label": f"{OWNER_LABEL}={socket.gethostname()}:{pid}"}
    return ([f"container {c.name}" for c in engine.client.containers.list(all=True, filters=flt)]
            + [f"network {n.name}" for n in engine.client.networks.list(filters=flt)])


def rules_for_bridges_gone() -> list[str]:
    out = subprocess.run(["iptables", "-S", "INPUT"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if " -i rpl" in line
            and not os.path.exists(f"/sys/class/net/{line.split(' -i ')[1].split()[0]}")]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("stage", STAGES)
def test_a_signal_at_any_stage_ends_the_replay_cleanly(engine: Any, tmp_path: Path, stage: str,
                                                       signum: int) -> None:
    # a command of its own (the image is named by it, so it is built); the stop comes after the attempt
    script = "true" if stage.startswith("stop") else "sleep 120"
    capsule = write_json(tmp_path / "capsule.json", twin_capsule(["sh", "-c", f"{script} # {uuid.uuid4().hex}"], "", 0))
    before = rules_for_bridges_gone()
    proc = subprocess.Popen([sys.executable, "-m", "runner", str(capsule), "-n", "1", "--http", str(GREETING)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen: list[str] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # progress lines, one per step start and end
            seen.append(line)
            if line.startswith(f"replay: {stage}") and line.rstrip().endswith("…"):
                break
        else:
            pytest.fail(f"the replay ended before {stage!r}: {''.join(seen)[-2000:]}")
        if stage.startswith("attempt"):
            wait_until("the attempt's container", lambda: any(c.startswith("container") for c in owned_by(engine, proc.pid)), 120)
        proc.send_signal(signum)
        start = time.monotonic()
        rest = proc.communicate(timeout=120)[1]
        took = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, "".join(seen)[-1000:] + rest[-1000:]
    assert took < EXIT_WITHIN_S, f"exited {took:.1f} s after the signal"
    assert "Traceback" not in rest
    assert owned_by(engine, proc.pid) == []
    assert rules_for_bridges_gone() == before
