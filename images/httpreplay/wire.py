"""HTTP/1.1 and TLS on the wire, as little as the replay server needs.

Standard library only, Python >= 3.9. Requests are parsed by hand and responses
written by hand, so nothing is added to or rewritten in a recorded response.
"""
from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from typing import BinaryIO, List, Optional, Tuple

from matcher import Response

MAX_LINE = 65536
MAX_HEADERS = 200
MAX_BODY = 256 * 1024 * 1024
TLS_RECORD_MAX = 16384 + 5


@dataclass(frozen=True)
class Incoming:
    method: str
    target: str
    version: str
    headers: Tuple[Tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> Optional[str]:
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)

    @property
    def host(self) -> Optional[str]:
        value = self.header("host")
        if not value:
            return None
        if value.startswith("["):  # [v6]:port
            return value[1:].split("]", 1)[0]
        return value.rsplit(":", 1)[0] if value.count(":") == 1 else value

    @property
    def wants_close(self) -> bool:
        conn = (self.header("connection") or "").lower()
        if self.version == "HTTP/1.0":
            return "keep-alive" not in conn
        return "close" in conn


class BadRequest(Exception):
    pass


def _line(rfile: BinaryIO) -> bytes:
    line = rfile.readline(MAX_LINE + 1)
    if len(line) > MAX_LINE:
        raise BadRequest("line too long")
    return line


def read_request(rfile: BinaryIO, conn: socket.socket) -> Optional[Incoming]:
    """One request from the connection, or None at its end."""
    line = _line(rfile)
    while line in (b"\r\n", b"\n"):  # tolerated between requests (RFC 9112 2.2)
        line = _line(rfile)
    if not line:
        return None
    parts = line.decode("latin-1").strip().split()
    if len(parts) != 3:
        raise BadRequest(f"bad request line {line[:80]!r}")
    method, target, version = parts
    headers = _headers(rfile)
    incoming = Incoming(method.upper(), _origin_form(target), version, headers, b"")
    if (incoming.header("expect") or "").lower() == "100-continue":
        conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
    return Incoming(incoming.method, incoming.target, version, headers, _body(rfile, incoming))


def _origin_form(target: str) -> str:
    """A proxy-style absolute target (http://host/path) reduced to /path."""
    if "://" in target:
        rest = target.split("://", 1)[1]
        return "/" + rest.split("/", 1)[1] if "/" in rest else "/"
    return target


def _headers(rfile: BinaryIO) -> Tuple[Tuple[str, str], ...]:
    headers: List[Tuple[str, str]] = []
    while True:
        line = _line(rfile)
        if line in (b"\r\n", b"\n", b""):
            return tuple(headers)
        if len(headers) >= MAX_HEADERS:
            raise BadRequest("too many headers")
        name, _, value = line.decode("latin-1").partition(":")
        headers.append((name.strip(), value.strip()))


def _body(rfile: BinaryIO, req: Incoming) -> bytes:
    if "chunked" in (req.header("transfer-encoding") or "").lower():
        return _chunked(rfile)
    length = int(req.header("content-length") or 0)
    if length < 0 or length > MAX_BODY:
        raise BadRequest(f"content-length {length}")
    return rfile.read(length)


def _chunked(rfile: BinaryIO) -> bytes:
    out = bytearray()
    while True:
        size = int(_line(rfile).split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            while _line(rfile) not in (b"\r\n", b"\n", b""):  # trailers
                pass
            return bytes(out)
        if len(out) + size > MAX_BODY:
            raise BadRequest("chunked body too large")
        out += rfile.read(size)
        _line(rfile)


def _clean(text: str) -> str:
    """A recorded string must not split the response (CR/LF from an untrusted file)."""
    return text.replace("\r", " ").replace("\n", " ")


def render_response(resp: Response, head: bool, client_close: bool) -> Tuple[bytes, bool]:
    """The recorded response as bytes, and whether the connection must close after it."""
    bodyless = head or resp.status < 200 or resp.status in (204, 304)
    body = b"" if bodyless else (resp.body or b"")
    framed = any(k.lower() == "content-length" for k, _ in resp.headers)
    close = client_close or (not framed and not bodyless)
    lines = [f"HTTP/1.1 {resp.status} {_clean(resp.reason)}"]
    lines += [f"{_clean(k)}: {_clean(v)}" for k, v in resp.headers]
    if close and not framed and not bodyless:
        lines.append("Connection: close")  # connection-scoped: the body ends when the connection does
    return b"".join(_encode(line) + b"\r\n" for line in lines) + b"\r\n" + body, close


def _encode(line: str) -> bytes:
    """Header bytes as recorded: latin-1 is how HTTP stacks decode them; UTF-8 when that cannot be."""
    try:
        return line.encode("latin-1")
    except UnicodeEncodeError:
        return line.encode("utf-8")


# -- TLS ------------------------------------------------------------------------
def peek_client_hello(conn: socket.socket, wait_s: float = 10.0) -> bytes:
    """The connection's first bytes, left unread: a whole TLS record when it is one."""
    deadline = time.monotonic() + wait_s
    data = b""
    while time.monotonic() < deadline:
        try:
            data = conn.recv(TLS_RECORD_MAX, socket.MSG_PEEK)
        except socket.timeout:
            return data
        if not data:
            return b""
        if data[:1] != b"\x16":
            return data
        if len(data) >= 5 and len(data) >= 5 + int.from_bytes(data[3:5], "big"):
            return data
        time.sleep(0.005)  # MSG_PEEK returns at once: wait for the rest of the record
    return data


def parse_sni(record: bytes) -> Optional[str]:
    """The server name a TLS ClientHello asks for, or None."""
    try:
        if record[0] != 0x16 or record[5] != 0x01:
            return None
        i = 5 + 4 + 2 + 32  # record header, handshake header, client_version, random
        i += 1 + record[i]  # session id
        i += 2 + int.from_bytes(record[i:i + 2], "big")  # cipher suites
        i += 1 + record[i]  # compression methods
        end = i + 2 + int.from_bytes(record[i:i + 2], "big")
        i += 2
        while i + 4 <= end:
            kind, size = int.from_bytes(record[i:i + 2], "big"), int.from_bytes(record[i + 2:i + 4], "big")
            if kind == 0:  # server_name: list length, name type, name length, name
                name_len = int.from_bytes(record[i + 7:i + 9], "big")
                return record[i + 9:i + 9 + name_len].decode("ascii").lower()
            i += 4 + size
    except (IndexError, UnicodeDecodeError):
        return None
    return None
