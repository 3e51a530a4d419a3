"""Responses written by hand; SNI read from a real ClientHello."""
from __future__ import annotations

import socket
import ssl
import threading

import matcher as m
import wire


def test_render_adds_nothing_to_a_framed_response() -> None:
    resp = m.Response(404, "Not Found", (("Content-Length", "2"), ("X-A", "b")), b"no")
    data, close = wire.render_response(resp, head=False, client_close=False)
    assert data == b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\nX-A: b\r\n\r\nno"
    assert close is False


def test_render_closes_when_unframed_and_keeps_head_bodyless() -> None:
    resp = m.Response(200, "OK", (("Content-Type", "text/plain"),), b"abc")
    data, close = wire.render_response(resp, head=False, client_close=False)
    assert data.endswith(b"Content-Type: text/plain\r\nConnection: close\r\n\r\nabc") and close
    data, close = wire.render_response(resp, head=True, client_close=False)
    assert data == b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n" and not close


def test_render_neutralises_line_breaks_from_a_recording() -> None:
    resp = m.Response(200, "OK\r\nX-Evil: 1", (("A", "b\r\nc"),), None)
    data, _ = wire.render_response(resp, head=False, client_close=True)
    assert data == b"HTTP/1.1 200 OK  X-Evil: 1\r\nA: b  c\r\nConnection: close\r\n\r\n"


def test_parse_sni_from_a_real_client_hello() -> None:
    a, b = socket.socketpair()
    ctx = ssl.create_default_context()
    t = threading.Thread(target=lambda: _try_handshake(ctx, a))
    t.start()
    b.settimeout(5)
    hello = wire.peek_client_hello(b)
    assert wire.parse_sni(hello) == "api.example.com"
    b.close()
    t.join(5)


def _try_handshake(ctx: ssl.SSLContext, sock: socket.socket) -> None:
    try:
        ctx.wrap_socket(sock, server_hostname="api.example.com")
    except OSError:
        pass


def test_parse_sni_of_garbage_is_none() -> None:
    assert wire.parse_sni(b"\x16\x03\x01\x00") is None
    assert wire.parse_sni(b"GET / HTTP/1.1\r\n") is None
