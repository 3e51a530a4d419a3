"""After it reproduces, with real containers: a real inspector client lists the Node target
(--debugger), a real DAP client completes `initialize` against debugpy, and the fix loop
(--workdir --watch) runs again after an edit. Each runs replay as a user does, in a process of
its own (ended with Ctrl-C's SIGINT), and waits on the lines it prints."""
from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from runner.engine import OWNER_LABEL

from tests.integration.helpers import (ROOT, TZ_CLOCK, clone_tz_clock, git, git_repo, replay, repo_fact, twin_capsule,
                                      write_json)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CAPSULE = TZ_CLOCK / "capsule.json"
BUNDLE = TZ_CLOCK / "repo.bundle"
BUILD_S = 900.0  # a cold image build on a loaded machine


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def default_sigint() -> None:
    """A child of a suite run in the background inherits SIGINT ignored (MACHINE-NOTES): Ctrl-C's again."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Replay:
    """`replay ARGS` in a process of its own; its stdout lines as they come."""

    def __init__(self, *args: str | Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "runner", *map(str, args)], cwd=ROOT, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=default_sigint)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def wait_for(self, pattern: str, timeout: float) -> str:
        end = time.monotonic() + timeout
        while (left := end - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                break
            self.seen.append(line)
            if re.search(pattern, line):
                return line
        err = self.proc.stderr.read() if self.proc.poll() is not None and self.proc.stderr else ""
        raise AssertionError(f"no line matching {pattern!r}; stdout: {self.seen[-20:]}; stderr: {err[-2000:]}")

    def interrupt(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout=120)


@contextmanager
def replay_process(*args: str | Path) -> Iterator[Replay]:
    r = Replay(*args)
    try:
        yield r
    finally:
        r.interrupt()


def test_a_real_inspector_client_lists_the_node_target(engine: object) -> None:
    port = free_port()
    with replay_process(CAPSULE, "--repo", BUNDLE, "--debugger", "--debugger-port", str(port)) as r:
        r.wait_for(rf"waits for a Node inspector client on 127\.0\.0\.1:{port}", BUILD_S)
        r.wait_for(r'"type": "node"', 10)

        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as resp:  # at once, once
            found = list(json.loads(resp.read()))
        assert any(t["url"].endswith("/work/repo/test/dates.test.js") for t in found), found
        assert all(t["webSocketDebuggerUrl"].startswith(f"ws://127.0.0.1:{port}/") for t in found)


def _dap(sock: socket.socket, seq: int, command: str, arguments: dict[str, Any]) -> None:
    body = json.dumps({"seq": seq, "type": "request", "command": command, "arguments": arguments}).encode()
    sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)


def _dap_messages(sock: socket.socket) -> Iterator[dict[str, Any]]:
    buf = b""
    while True:
        while b"\r\n\r\n" not in buf:
            chunk = sock.recv(65536)
            if not chunk:
                return
            buf += chunk
        head, buf = buf.split(b"\r\n\r\n", 1)
        length = int(re.search(rb"Content-Length: (\d+)", head).group(1))  # type: ignore[union-attr]
        while len(buf) < length:
            chunk = sock.recv(65536)
            if not chunk:
                return
            buf += chunk
        yield json.loads(buf[:length])
        buf = buf[length:]


def test_a_real_dap_client_completes_initialize_against_debugpy(engine: object, tmp_path: Path) -> None:
    data = twin_capsule(["python3", "-c", "import sys; print('boom'); sys.exit(3)"], "boom\n", 3, python="3.11.2")
    capsule = write_json(tmp_path / "capsule.json", data)
    port = free_port()
    with replay_process(capsule, "--debugger", "--debugger-port", str(port)) as r:
        r.wait_for(rf"waits for a debug adapter \(DAP\) client on 127\.0\.0\.1:{port}", BUILD_S)
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:  # at once, once
            _dap(sock, 1, "initialize", {"clientID": "replay-test", "adapterID": "debugpy", "linesStartAt1": True,
                                         "columnsStartAt1": True, "pathFormat": "path"})
            answer = next(m for m in _dap_messages(sock) if m.get("type") == "response")
        assert answer["command"] == "initialize" and answer["success"] is True, answer
        assert "supportsConfigurationDoneRequest" in answer["body"], answer


def _delve_call(sock: socket.socket, method: str, params: dict[str, Any], n: int) -> dict[str, Any]:
    """One call of Delve's JSON-RPC (API v2), as `dlv connect` speaks it."""
    sock.sendall(json.dumps({"method": f"RPCServer.{method}", "params": [params], "id": n}).encode())
    buf = b""
    while True:
        chunk = sock.recv(65536)
        assert chunk, f"Delve closed the connection during {method}"
        buf += chunk
        try:
            return dict(json.loads(buf))
        except ValueError:
            continue


BOOM_TEST = 'package boom\n\nimport "testing"\n\nfunc TestBoom(t *testing.T) {\n\tt.Fatalf("error: boom")\n}\n'


def test_a_real_delve_client_gets_its_answer_at_once_and_the_run_ends_with_the_tests_verdict(
        engine: object, tmp_path: Path) -> None:
    """The Go of test_toolchains (its image layers are shared); Delve from the suite whose package supports
    it; a failing test under Delve ends `failed`, not `pass` (Delve itself exits 0)."""
    repo = tmp_path / "repo"
    commit = git_repo(repo, {"go.mod": "module example.com/boom\n\ngo 1.22\n", "boom_test.go": BOOM_TEST})
    output = "--- FAIL: TestBoom (0.00s)\n    boom_test.go:6: error: boom\nFAIL\nFAIL\texample.com/boom\t0.002s\nFAIL\n"
    data = twin_capsule(["go", "test", "./..."], output, 1, repo=repo_fact(str(repo), commit))
    data["runtimes"] = {"go": "1.22.10"}
    capsule = write_json(tmp_path / "capsule.json", data)
    port = free_port()
    with replay_process(capsule, "--repo", repo, "--debugger", "--debugger-port", str(port)) as r:
        r.wait_for(rf"dlv connect 127\.0\.0\.1:{port}", BUILD_S)
        with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:  # at once, once
            found = _delve_call(sock, "GetVersion", {}, 1)["result"]
            assert found["APIVersion"] == 2 and "go1.22.10" in found["TargetGoVersion"], found
            assert found["DelveVersion"].startswith("Version: 1.24"), found  # trixie's: it supports Go 1.22
            state = _delve_call(sock, "Command", {"name": "continue"}, 2)["result"]["State"]
            assert state["exited"] and state["exitStatus"] == 1, state
            sock.sendall(json.dumps({"method": "RPCServer.Detach", "params": [{"Kill": True}], "id": 3}).encode())
        line = r.wait_for(r"^the command ended: ", 300)
        assert "the tests failed: exit 1 as go test gives it; Delve itself exited 0" in line, line
        assert r.proc.wait(120) == 0, line  # it ended as recorded: failing


def test_the_watch_loop_runs_again_after_an_edit(engine: object, tmp_path: Path) -> None:
    checkout = clone_tz_clock(tmp_path / "tz-clock")
    with replay_process(CAPSULE, "--repo", BUNDLE, "--workdir", checkout, "--attempts", "1", "--watch") as r:
        r.wait_for(r"^run 1: fails as recorded \(exit 1", BUILD_S)
        test = checkout / "test" / "dates.test.js"
        test.write_text("const test = require('node:test');\ntest('fixed', () => {});\n")
        line = r.wait_for(r"^run 2: ", 120)
        assert line.startswith("run 2: passes (the recorded failure is gone) (exit 0"), line
        saved_s = float(re.search(r"([\d.]+) s after the save", line).group(1))  # type: ignore[union-attr]
        took_s = float(re.search(r"exit 0, ([\d.]+) s", line).group(1))  # type: ignore[union-attr]
        assert saved_s <= took_s + 2.0 + 3.0, line  # the bench row holds the 2 s target; a loaded CI gets slack
        assert r.interrupt() == 1  # Ctrl-C ends the watch with the last run's answer: it passed, not as recorded


def test_a_workdir_run_shows_its_diff_and_the_diff_then_checks_the_fix(
        engine: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    checkout = clone_tz_clock(tmp_path / "tz-clock")
    commit = git(checkout, "rev-parse", "HEAD").strip()
    test = checkout / "test" / "dates.test.js"
    test.write_text("const test = require('node:test');\ntest('fixed', () => {});\n")
    rc, report = replay(capsys, CAPSULE, "--repo", BUNDLE, "--workdir", checkout, "-n", "1")
    assert (rc, report["verdict"]) == (1, "not-reproduced"), report["attempts"]
    assert f"changed from the recorded commit {commit[:12]}: 1 file changed" in " ".join(report["notes"])
    rc, report = replay(capsys, CAPSULE, "--repo", BUNDLE, "--patch", git(checkout, "diff"))
    assert (rc, report["verdict"], report["baseline"]["verdict"]) == (0, "fixed", "reproduced"), report


# -- the debugger's containment (issue 39): no published port, the debuggee reaches nothing ----------

def _owned_by(engine: Any, pid: int) -> list[str]:
    flt = {"label": f"{OWNER_LABEL}={socket.gethostname()}:{pid}"}
    return ([f"container {c.name}" for c in engine.client.containers.list(all=True, filters=flt)]
            + [f"network {n.name}" for n in engine.client.networks.list(filters=flt)])


def _host_addresses() -> list[str]:
    """Every IPv4 address of this host's interfaces (its LAN address, docker0, every bridge's gateway)."""
    out = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True, check=True).stdout
    return [line.split()[3].split("/")[0] for line in out.splitlines() if " lo " not in line]


def _debuggee(engine: Any, pid: int) -> Any:
    flt = {"label": f"{OWNER_LABEL}={socket.gethostname()}:{pid}"}
    found = [c for c in engine.client.containers.list(filters=flt) if c.name.startswith("replay-debuggee-")]
    assert len(found) == 1, found
    return found[0]


def _listener() -> tuple[socket.socket, int]:
    """A host service on every address (0.0.0.0), answering any connection."""
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", 0))
    server.listen(16)
    return server, int(server.getsockname()[1])


PROBE = ("use IO::Socket::INET; for my $a (@ARGV[1..$#ARGV]) { my $s = IO::Socket::INET->new(PeerAddr => $a, "
         "PeerPort => $ARGV[0], Timeout => 3); print \"$a answered\\n\" if $s }")


def test_from_inside_the_debuggee_no_host_address_answers(engine: Any) -> None:
    server, service = _listener()
    port = free_port()
    try:
        with replay_process(CAPSULE, "--repo", BUNDLE, "--debugger", "--debugger-port", str(port)) as r:
            r.wait_for(rf"waits for a Node inspector client on 127\.0\.0\.1:{port}", BUILD_S)
            debuggee = _debuggee(engine, r.proc.pid)
            addresses = _host_addresses()
            assert addresses, "the host has no IPv4 address to try"
            code, out = debuggee.exec_run(["perl", "-e", PROBE, str(service), *addresses])
            assert (code, out.decode()) == (0, ""), f"from the debuggee: {out.decode()} (tried {addresses})"
    finally:
        server.close()


SYNPROBE = Path(__file__).with_name("synprobe.py")


@contextmanager
def lan_neighbour() -> Iterator[Any]:
    """A network namespace standing in for a machine on the LAN: a veth pair on addresses made here
    (traffic only to this machine). Yields answers(address, port): whether a SYN from the neighbour
    got a SYN-ACK (127.0.0.1 included: the neighbour routes it to this host, as an attacker would)."""
    tag = os.urandom(3).hex()
    ns, host_end, ns_end = f"rpl-lan-{tag}", f"rplh{tag}", f"rpln{tag}"
    third = int(tag[:2], 16)
    host_ip, ns_ip = f"10.252.{third}.1", f"10.252.{third}.2"
    steps = [["ip", "netns", "add", ns], ["ip", "link", "add", host_end, "type", "veth", "peer", "name", ns_end],
             ["ip", "link", "set", ns_end, "netns", ns], ["ip", "addr", "add", f"{host_ip}/30", "dev", host_end],
             ["ip", "link", "set", host_end, "up"],
             ["ip", "-n", ns, "addr", "add", f"{ns_ip}/30", "dev", ns_end], ["ip", "-n", ns, "link", "set", ns_end, "up"],
             ["ip", "-n", ns, "route", "add", "default", "via", host_ip],
             ["ip", "netns", "exec", ns, "sysctl", "-qw", f"net.ipv4.conf.{ns_end}.route_localnet=1"],
             ["ip", "-n", ns, "route", "add", "127.0.0.1/32", "via", host_ip, "dev", ns_end]]

    def answers(address: str, port: int) -> bool:
        return subprocess.run(["ip", "netns", "exec", ns, sys.executable, str(SYNPROBE), address, str(port), ns_end,
                               ns_ip], capture_output=True, timeout=60).returncode == 0
    try:
        for step in steps:
            subprocess.run(step, check=True, capture_output=True, timeout=30)
        answers.host = host_ip  # type: ignore[attr-defined]
        yield answers
    finally:
        subprocess.run(["ip", "link", "del", host_end], capture_output=True, timeout=30)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)


def test_from_a_lan_neighbour_the_debugger_port_does_not_answer(engine: Any) -> None:
    server, service = _listener()
    port = free_port()
    try:
        with lan_neighbour() as answers, \
                replay_process(CAPSULE, "--repo", BUNDLE, "--debugger", "--debugger-port", str(port)) as r:
            r.wait_for(rf"waits for a Node inspector client on 127\.0\.0\.1:{port}", BUILD_S)
            assert answers(answers.host, service), "the neighbour cannot reach this host at all: no test"
            for address in {"127.0.0.1", answers.host, *_host_addresses()}:
                assert not answers(address, port), f"the debugger port answered the LAN on {address}"
            with socket.create_connection(("127.0.0.1", port), timeout=30):  # and it does answer here
                pass
    finally:
        server.close()


def test_a_closed_terminal_sighup_during_the_debugger_leaves_nothing(engine: Any) -> None:
    port = free_port()
    r = Replay(CAPSULE, "--repo", BUNDLE, "--debugger", "--debugger-port", str(port))
    try:
        r.wait_for(rf"waits for a Node inspector client on 127\.0\.0\.1:{port}", BUILD_S)
        assert _owned_by(engine, r.proc.pid), "nothing to clean up: no test"
        # a client attached (its relay's threads wait in recv): the signal is the main thread's all the same
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30):
            with socket.create_connection(("127.0.0.1", port), timeout=30):
                r.proc.send_signal(signal.SIGHUP)
                assert r.proc.wait(timeout=60) == 130
    finally:
        if r.proc.poll() is None:
            r.proc.kill()
    assert _owned_by(engine, r.proc.pid) == []
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=5)


def test_after_a_sigkill_during_the_debugger_replay_gc_removes_what_it_left(engine: Any) -> None:
    port = free_port()
    r = Replay(CAPSULE, "--repo", BUNDLE, "--debugger", "--debugger-port", str(port))
    try:
        r.wait_for(rf"waits for a Node inspector client on 127\.0\.0\.1:{port}", BUILD_S)
        label = _debuggee(engine, r.proc.pid).labels["replay"]
        r.proc.kill()  # nothing of its own cleanup runs
        r.proc.wait(60)
    finally:
        if r.proc.poll() is None:
            r.proc.kill()
    assert _owned_by(engine, r.proc.pid), "the kill left nothing: no test"
    with pytest.raises(OSError):  # the port was this process's own: it went with it
        socket.create_connection(("127.0.0.1", port), timeout=5)
    gc = subprocess.run([sys.executable, "-m", "runner", "gc", "--label", label], cwd=ROOT, capture_output=True,
                        text=True, timeout=300)
    assert gc.returncode == 0, gc.stderr
    assert _owned_by(engine, r.proc.pid) == []


# -- --workdir's boundary (issue 39) ----------------------------------------------------------------

def _run_cli(*args: str | Path, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **({"HOME": str(home)} if home else {})}
    return subprocess.run([sys.executable, "-m", "runner", *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=900)


@pytest.mark.parametrize("what", ["socket", "fifo", "root", "home"])
def test_a_workdir_with_a_socket_a_fifo_or_that_is_root_or_home_is_refused_in_one_line(
        tmp_path: Path, what: str) -> None:
    checkout = clone_tz_clock(tmp_path / "tz-clock")
    server = None
    if what == "socket":  # a host process answering on it: the command must never reach it
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(checkout / "test" / "agent.sock"))
        server.listen(1)
    elif what == "fifo":
        os.mkfifo(checkout / "pipe")
    given = {"root": Path("/"), "home": checkout}.get(what, checkout)
    try:
        proc = _run_cli(CAPSULE, "--repo", BUNDLE, "--workdir", given, "-n", "1", home=checkout if what == "home" else None)
    finally:
        if server is not None:
            server.close()
    said = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(said) == 1, proc.stderr
    expected = {"socket": "test/agent.sock is a socket", "fifo": "pipe is a FIFO"}.get(what, "the home directory")
    assert expected in said[0], said


def test_a_workdir_needs_no_repo_and_its_diff_reaches_the_terminal_filtered(engine: object, tmp_path: Path) -> None:
    checkout = clone_tz_clock(tmp_path / "tz-clock")
    readme = checkout / "NOTES.md"
    readme.write_text("\x1b]0;owned\x07\x1b[2J\x1b]52;c;ZXZpbA==\x07hello\n")  # a title, a screen clear, a clipboard write
    git(checkout, "add", "NOTES.md")
    proc = _run_cli(CAPSULE, "--workdir", checkout, "-n", "1")  # no --repo: the checkout's own git
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "\\x1b]52;c;ZXZpbA==" in proc.stdout and "+\\x1b]0;owned" in proc.stdout
