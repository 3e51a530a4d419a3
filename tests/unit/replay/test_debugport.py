"""--debugger's port in replay's own process: listening on 127.0.0.1 only, a client that connects
before the debugger listens waits and then gets its answer, the relay's ends close together, and
the listening sockets are read from /proc/net/tcp."""
from __future__ import annotations

import queue
import socket
import threading
import time
from collections.abc import Callable

import pytest

from runner.errors import UsageError
from runner.replay.debugport import DebugPort, listens, relay_argv


class EchoChannel:
    """Stands in for the engine's exec stream: answers each send with it, upper-cased."""

    def __init__(self) -> None:
        self.answers: queue.Queue[bytes] = queue.Queue()
        self.closed = threading.Event()

    def send(self, data: bytes) -> None:
        self.answers.put(data.upper())

    def receive(self) -> bytes:
        return self.answers.get()  # b"" once closed: close() puts it

    def close(self) -> None:
        self.closed.set()
        self.answers.put(b"")


def _held_clients() -> set[threading.Thread]:
    """The port's threads holding an accepted client (waiting for ready(), or relaying it)."""
    return {t for t in threading.enumerate() if t.name == "debug-client"}


def _until(condition: Callable[[], bool], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "the condition never came"
        time.sleep(0.01)


def test_a_client_that_connects_before_the_debugger_listens_waits_then_gets_its_answer() -> None:
    channels: list[EchoChannel] = []

    def connect() -> EchoChannel:
        channels.append(EchoChannel())
        return channels[-1]
    port = DebugPort(0, connect)
    before = _held_clients()
    try:
        with socket.create_connection(("127.0.0.1", port.port), timeout=10) as client:
            client.sendall(b"hello")
            _until(lambda: bool(_held_clients() - before))  # accepted, and held until ready()
            client.setblocking(False)
            with pytest.raises(BlockingIOError):  # nothing is relayed before ready(): no reset, no close either
                client.recv(10)
            assert channels == []
            port.ready()
            client.settimeout(30)
            assert client.recv(10) == b"HELLO"
    finally:
        port.close()
    assert all(c.closed.is_set() for c in channels)


def test_the_port_is_on_loopback_only_and_a_taken_one_is_a_usage_error() -> None:
    port = DebugPort(0, EchoChannel)
    try:
        assert port._server.getsockname() == ("127.0.0.1", port.port) and port.port > 0  # 0: the system's choice
        with pytest.raises(UsageError, match=f"--debugger-port {port.port}: 127.0.0.1:{port.port} cannot be"):
            DebugPort(port.port, EchoChannel)
    finally:
        port.close()


def test_close_ends_every_relay_and_the_listener() -> None:
    port = DebugPort(0, EchoChannel)
    port.ready()
    client = socket.create_connection(("127.0.0.1", port.port), timeout=10)
    client.sendall(b"x")
    assert client.recv(1) == b"X"
    port.close()
    assert client.recv(1) == b""  # the relay's end closed
    client.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port.port), timeout=2)


PROC_NET_TCP = """  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:2406 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
   1: 0100007F:162E 0100007F:A0B2 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0 100 0 0 10 0
"""


def test_a_listening_socket_is_read_from_proc_net_tcp() -> None:
    assert listens(PROC_NET_TCP, 9222)  # 0x2406
    assert not listens(PROC_NET_TCP, 5678)  # 0x162E: connected, not listening
    assert not listens("", 9222)


def test_the_relay_is_perl_connecting_to_the_containers_loopback() -> None:
    argv = relay_argv(9229)
    assert argv[:2] == ("perl", "-e") and argv[-1] == "9229" and "PeerAddr => '127.0.0.1'" in argv[2]
