"""What a replayed command can reach, seen from inside its container: no engine socket, no
network, no new privileges, fewer capabilities, pids and memory limits, no host paths."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.helpers import replay, twin_capsule, write_json

pytestmark = pytest.mark.integration
# Linux's numbers of the capabilities an attempt keeps (replayer.KEPT_CAPS): CHOWN 0, DAC_OVERRIDE 1,
# FOWNER 3, FSETID 4, KILL 5, SETGID 6, SETUID 7, NET_BIND_SERVICE 10; NET_RAW (13) and the rest gone.
KEPT_BITS = [0, 1, 3, 4, 5, 6, 7, 10]

PROBE = r"""
import os, socket
print("socket", os.path.exists("/var/run/docker.sock") or os.path.exists("/run/docker.sock"))
for host in ("172.17.0.1", "8.8.8.8"):
    s = socket.socket(); s.settimeout(3)
    try:
        s.connect((host, 80)); print("reach", host, "yes")
    except OSError as e:
        print("reach", host, "no")
status = dict(l.split(":", 1) for l in open("/proc/self/status") if ":" in l)
print("nonewprivs", status["NoNewPrivs"].strip())
print("caps", [i for i in range(64) if int(status["CapEff"], 16) >> i & 1])
print("pids", open("/sys/fs/cgroup/pids/pids.max").read().strip())
print("memory", open("/sys/fs/cgroup/memory/memory.limit_in_bytes").read().strip())
mounts = [l.split()[4] for l in open("/proc/self/mountinfo")]
print("host paths", [m for m in mounts if m.startswith(("/root", "/home", "/work", "/var/run/docker"))])
"""


def test_an_attempt_is_contained(engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    capsule = write_json(tmp_path / "probe.json", twin_capsule(["python3", "-c", PROBE], "", 0, python="3.11.2"))
    junit = tmp_path / "replay.xml"
    rc, report = replay(capsys, capsule, "-n", "1", "--memory", "512m", "--junit", junit)
    assert rc == 0, report["attempts"][0]["output_tail"]
    lines = report["attempts"][0]["output_tail"].splitlines()
    assert lines == ["socket False", "reach 172.17.0.1 no", "reach 8.8.8.8 no", "nonewprivs 1", f"caps {KEPT_BITS}",
                     "pids 4096", f"memory {512 << 20}", "host paths []"]
    # `--junit FILE`: one testcase, a pass (the capsule recorded a pass and it came back)
    from tests.support.reports import valid

    [case] = valid(junit.read_text(encoding="utf-8")).findall(".//testcase")
    assert case.get("name") == str(capsule) and case.find("failure") is None and case.find("error") is None
