"""The engine going away under replay, for real: a second Docker engine of the test's own (its own
data root, socket and bridge; MACHINE-NOTES section 1), so the shared one is never touched.

- killed and started again during a build: replay waits for it, builds again, and the capsule
  reproduces;
- crashed (daemon, containerd and shims killed) during an attempt: the lost attempt runs again in a fresh
  container, the report says so, and nothing is left in the engine;
- its disk full during a build: one line saying so and how to free space (exit 3), nothing left.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.services import missing, wait_until

from tests.integration.helpers import ROOT, twin_capsule, write_json

pytestmark = pytest.mark.integration

BRIDGE, SUBNET, GATEWAY = "rplf0", "172.31.250.0/24", "172.31.250.1/24"
BASE = "replay-base/debian:bookworm"
TZ_CLOCK = ROOT / "examples" / "tz-clock"
# The second engine's containers reach the mirror and the registries through the host: NAT and
# forwarding rules of the test's own (the first engine's FORWARD policy is DROP), removed after.
RULES = (("filter", "DOCKER-USER", ["-i", BRIDGE, "!", "-o", BRIDGE, "-j", "ACCEPT"]),
         ("filter", "DOCKER-USER", ["-o", BRIDGE, "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT"]),
         ("nat", "POSTROUTING", ["-s", SUBNET, "!", "-o", BRIDGE, "-j", "MASQUERADE"]))
BOUND_S = 600  # a cold build on a fresh engine, on a loaded machine


def _sh(*cmd: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), capture_output=True, text=True, check=check, timeout=300)


@pytest.fixture(scope="module")
def network_and_base(engine: Any) -> Iterator[Path]:
    """The second engine's bridge and egress rules, and the base image saved from the first engine."""
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("dockerd", "ip", "iptables")):
        missing("the engine-restart tests need root, dockerd, ip and iptables (scripts/setup installs them)")
    if _sh("ip", "link", "show", BRIDGE, check=False).returncode == 0:  # an earlier run's, killed
        _sh("ip", "link", "delete", BRIDGE)
    _sh("ip", "link", "add", BRIDGE, "type", "bridge")
    _sh("ip", "addr", "add", GATEWAY, "dev", BRIDGE)
    _sh("ip", "link", "set", BRIDGE, "up")
    for table, chain, rule in RULES:
        _sh("iptables", "-t", table, "-I", chain, *rule)
    work = Path(tempfile.mkdtemp(prefix="rplf-", dir="/tmp"))  # short: containerd's socket path lives under it
    try:
        base = work / "base.tar"
        _sh("docker", "save", "-o", str(base), BASE)
        yield base
    finally:
        for table, chain, rule in RULES:
            _sh("iptables", "-t", table, "-D", chain, *rule, check=False)
        _sh("ip", "link", "delete", BRIDGE, check=False)
        shutil.rmtree(work, ignore_errors=True)


class SecondEngine:
    """A dockerd of the test's own; `crash` kills it (and what runs in it) and starts it again."""

    def __init__(self, base: Path, disk: str | None = None) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="rplf-", dir="/tmp"))
        self.data, self.exec_root = self.root / "data", self.root / "exec"
        self.data.mkdir()
        self.tmpfs = disk is not None
        if disk is not None:  # a disk of its own, to fill
            _sh("mount", "-t", "tmpfs", "-o", f"size={disk}", "tmpfs", str(self.data))
        self.sock = self.root / "docker.sock"
        self.env = {**os.environ, "DOCKER_HOST": f"unix://{self.sock}"}
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()
        self.docker("load", "-i", str(base))

    def start(self) -> None:
        for pid in (self.root / "dockerd.pid", self.exec_root / "containerd" / "containerd.pid"):
            pid.unlink(missing_ok=True)  # a killed daemon's: a new one refuses to start beside them
        with open(self.root / "dockerd.log", "ab") as log:
            self.proc = subprocess.Popen(
                ["dockerd", "--data-root", str(self.data), "--exec-root", str(self.exec_root),
                 "--pidfile", str(self.root / "dockerd.pid"), "-H", f"unix://{self.sock}", f"--bridge={BRIDGE}",
                 "--iptables=false", "--ip-masq=false", "--shutdown-timeout", "2"],
                stdout=log, stderr=log)
        wait_until("the second engine to answer", lambda: self.docker("info", check=False).returncode == 0, 120,
                   self.log)

    def docker(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["docker", *args], env=self.env, capture_output=True, text=True, check=check,
                              timeout=300)

    def crash(self) -> None:
        """The whole engine dies: dockerd, its containerd and the shims (so its containers too)."""
        assert self.proc is not None
        containerd = self._containerd()
        self.proc.kill()
        self.proc.wait(timeout=60)
        for pid in containerd:
            os.kill(pid, signal.SIGKILL)
        _sh("pkill", "-9", "-f", f"containerd-shim.*{self.exec_root}", check=False)
        wait_until("the second engine's containerd to end", lambda: not self._containerd(), 60, self.log)
        self.start()

    def _containerd(self) -> list[int]:
        """The second engine's own containerd (not its shims, not the first engine's)."""
        out = []
        for proc in Path("/proc").iterdir():
            try:
                argv = (proc / "cmdline").read_bytes().split(b"\0")
                state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if argv[0].endswith(b"containerd") and str(self.exec_root).encode() in b" ".join(argv) and state != "Z":
                out.append(int(proc.name))
        return out

    def runs(self, command: str) -> bool:
        """Whether a process named `command` runs below this engine's dockerd (a build step's)."""
        assert self.proc is not None
        parents: dict[int, int] = {}
        named: list[int] = []
        for proc in Path("/proc").iterdir():
            try:
                stat = (proc / "stat").read_text()
            except OSError:
                continue
            if not proc.name.isdigit():
                continue
            comm, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
            parents[int(proc.name)] = int(rest[1])
            if comm == command:
                named.append(int(proc.name))
        for pid in named:
            while pid > 1:
                pid = parents.get(pid, 1)
                if pid == self.proc.pid:
                    return True
        return False

    def leftovers(self) -> list[str]:
        return self.docker("ps", "-aq", "--filter", "label=replay").stdout.split()

    def log(self) -> str:
        return (self.root / "dockerd.log").read_text(errors="replace")[-2000:]

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=120)
        for pid in self._containerd():
            os.kill(pid, signal.SIGKILL)
        _sh("pkill", "-9", "-f", f"containerd-shim.*{self.exec_root}", check=False)
        mounts = [ln.split()[1] for ln in Path("/proc/mounts").read_text().splitlines()
                  if ln.split()[1].startswith(str(self.root))]
        for mount in sorted(mounts, key=len, reverse=True):
            _sh("umount", "-l", mount, check=False)
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def second(network_and_base: Path) -> Iterator[Callable[..., SecondEngine]]:
    made: list[SecondEngine] = []

    def make(disk: str | None = None) -> SecondEngine:
        made.append(SecondEngine(network_and_base, disk))
        return made[-1]

    yield make
    for eng in made:
        eng.close()


class Replay:
    """`replay …` against the second engine, its stderr read as it comes (lines: an event to act on)."""

    def __init__(self, eng: SecondEngine, *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "runner", *args], cwd=ROOT, env=eng.env, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.err: list[str] = []
        self.seen = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stderr
        for line in self.proc.stderr:
            with self.seen:
                self.err.append(line)
                self.seen.notify_all()

    def wait_for_line(self, pattern: str, within: float = BOUND_S) -> None:
        with self.seen:
            if not self.seen.wait_for(lambda: any(re.search(pattern, ln) for ln in self.err) or
                                      self.proc.poll() is not None, timeout=within):
                pytest.fail(f"no line matching {pattern!r} within {within:.0f} s")
        assert self.proc.poll() is None, "".join(self.err)[-3000:]

    def finish(self) -> tuple[int, str, str]:
        assert self.proc.stdout
        out = self.proc.stdout.read()  # to its end (stderr is the reader's alone: communicate would read it too)
        self.proc.wait(timeout=BOUND_S)
        self.reader.join(timeout=60)
        return self.proc.returncode, out, "".join(self.err)


def test_a_build_goes_on_after_the_engine_crashed_and_restarted(second: Callable[..., SecondEngine]) -> None:
    eng = second()
    run = Replay(eng, str(TZ_CLOCK / "capsule.json"), "--repo", str(TZ_CLOCK / "repo.bundle"), "-n", "1", "-v")
    # the system packages step is running: apt-get below this engine (not a line of output, which
    # can trail the build)
    wait_until("apt-get in the build", lambda: eng.runs("apt-get") or run.proc.poll() is not None, BOUND_S, eng.log)
    eng.crash()  # a graceful stop may wait for the build to end: then nothing went away under it
    code, out, err = run.finish()
    assert code == 0, err[-3000:]
    assert "the engine connection dropped during the build: building again" in err, err[-3000:]
    assert "REPRODUCED" in out
    assert eng.leftovers() == []
    lost = re.findall(r"(/tmp/replay-build-[^/\s]+)/iid", err)  # the build the restart cut short
    assert all(not Path(d).exists() for d in lost)


def test_an_attempt_the_engine_crashed_under_runs_again(second: Callable[..., SecondEngine],
                                                        tmp_path: Path) -> None:
    eng = second()
    output = "started\nboom: the engine stayed\n"
    capsule = write_json(tmp_path / "slow.json", twin_capsule(
        ["sh", "-c", "echo started; sleep 5; echo 'boom: the engine stayed'; exit 1"], output, 1))
    run = Replay(eng, str(capsule), "-n", "1", "--json")
    # the attempt's container (its command), not the image probe's that runs just before it
    running = ("ps", "--no-trunc", "--filter", "label=replay", "--filter", "status=running", "--format", "{{.Command}}")
    wait_until("the attempt's container to run",
               lambda: "sleep 5" in eng.docker(*running).stdout or run.proc.poll() is not None, BOUND_S)
    eng.crash()
    code, out, err = run.finish()
    data = json.loads(out)
    assert (code, data["exit_code"]) == (0, 0), err[-3000:]
    report = data["result"]
    assert report["verdict"] == "reproduced"
    assert [a["reruns"] for a in report["attempts"]] == [1]
    assert any("the engine went away during attempt(s) 1" in n for n in report["notes"])
    assert eng.leftovers() == []  # the lost run's container went too


def test_a_full_disk_during_a_build_is_one_line(second: Callable[..., SecondEngine], tmp_path: Path) -> None:
    eng = second(disk="400m")
    free = shutil.disk_usage(eng.data).free
    subprocess.run(["fallocate", "-l", str(free - 256 * 1024), str(eng.data / "fill")], check=True)
    capsule = write_json(tmp_path / "c.json", twin_capsule(["sh", "-c", "echo hi; exit 1"], "hi\n", 1))
    builds_before = set(Path("/tmp").glob("replay-build-*"))
    run = Replay(eng, str(capsule), "-n", "1", "--json")
    code, out, err = run.finish()
    data = json.loads(out)
    assert (code, data["exit_code"]) == (3, 3), err[-3000:]
    line = data["error"]["message"]
    assert "disk is full" in line and "replay gc" in line and "\n" not in line
    assert len(err.strip().splitlines()) == 1  # --json: the one line on stderr, no traceback
    assert eng.leftovers() == []
    assert set(Path("/tmp").glob("replay-build-*")) <= builds_before  # the build's directory went with it
