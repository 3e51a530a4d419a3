"""A byte stream to a program run in a container, through the engine's own API (an exec whose
stdin and stdout are the stream): `--debugger`'s one channel into the debuggee. No port is
published and the container needs no network, so nothing but this process reaches it (a part
of DockerEngine, docker.py)."""
from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Sequence
from typing import Any

from .sdk import retrying, sdk_call, typed_errors

_HEADER = struct.Struct(">BxxxL")  # the engine's multiplexed stream: kind (1 stdout, 2 stderr), 3 zero bytes, size
_STDOUT = 1


class ExecChannel:
    """One exec's stdin (send) and stdout (receive); its stderr is read and dropped."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._closed = threading.Event()

    def send(self, data: bytes) -> None:
        self._sock.sendall(data)

    def receive(self) -> bytes:
        """The next bytes the program wrote to its stdout; b"" once it ended (or the channel closed)."""
        while not self._closed.is_set():
            head = self._exactly(_HEADER.size)
            if len(head) < _HEADER.size:
                return b""
            kind, size = _HEADER.unpack(head)
            payload = self._exactly(size)
            if len(payload) < size:
                return b""
            if kind == _STDOUT and payload:
                return payload
        return b""

    def _exactly(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            try:
                chunk = self._sock.recv(n - len(buf))
            except OSError:
                return bytes(buf)
            if not chunk:
                break
            buf.extend(chunk)
        return bytes(buf)

    def close(self) -> None:
        """Ends the program's stdin and the stream (the engine ends the exec's streams with it)."""
        self._closed.set()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()


@typed_errors
class ExecChannels:
    client: Any  # the docker SDK's client (DockerEngine's)

    def channel(self, container_id: str, argv: Sequence[str]) -> ExecChannel:
        """Run argv in the (running) container with its stdin and stdout as a byte stream."""
        exec_id = retrying(sdk_call)(self.client.api.exec_create, container_id, list(argv), stdin=True, stdout=True,
                                     stderr=True, tty=False)["Id"]
        raw = sdk_call(self.client.api.exec_start, exec_id, socket=True)
        sock: socket.socket = getattr(raw, "_sock", raw)  # a unix socket comes wrapped in a SocketIO
        sock.settimeout(None)  # the SDK's request timeout: a debugger sits idle for minutes
        return ExecChannel(sock)
