"""--debugger's port in replay's own process: listening on 127.0.0.1 only, a client that connects
before the debugger listens waits and then gets its answer, the relay's ends close together, and
the listening sockets are read from /proc/net/tcp."""
from __future__ import annotations

import queue
import socket
import threading

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
        while not self.closed.is_set():
            try:
                return self.answers.get(timeout=0.05)
            except queue.Empty:
                continue
        return b""

    def close(self) -> None:
        self.closed.set()


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_client_that_connects_before_the_debugger_listens_waits_then_gets_its_answer() -> None:
    channels: list[EchoChannel] = []

    def connect() -> EchoChannel:
        channels.append(EchoChannel())
        return channels[-1]
    port = DebugPort(_port(), connect)
    try:
        with socket.create_connection(("127.0.0.1", port.port), timeout=10) as client:
            client.sendall(b"hello")
            client.settimeout(0.3)
            with pytest.raises(socket.timeout):  # nothing is relayed before ready(): no reset either
                client.recv(10)
            assert channels == []
            port.ready()
            client.settimeout(10)
            assert client.recv(10) == b"HELLO"
    finally:
        port.close()
    assert all(c.closed.is_set() for c in channels)


def test_the_port_is_on_loopback_only_and_a_taken_one_is_a_usage_error() -> None:
    port = DebugPort(_port(), EchoChannel)
    try:
        assert port._server.getsockname()[0] == "127.0.0.1"
        with pytest.raises(UsageError, match=f"--debugger-port {port.port}: 127.0.0.1:{port.port} cannot be"):
            DebugPort(port.port, EchoChannel)
    finally:
        port.close()


def test_close_ends_every_relay_and_the_listener() -> None:
    port = DebugPort(_port(), EchoChannel)
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
