"""The replay server, run in-process: each host on its own loopback address (127.0.0.x,
all of which are this machine's), on ephemeral ports."""
from __future__ import annotations

import base64
import http.client
import json
import os
import socket
import ssl
import struct
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import server as srv
from runner.httpreplay.ca import ReplayCA

BINARY = bytes(range(256)) * 3
HOSTS = [  # what hostplan.calls_document writes
    {"name": "api.example.com", "token": "h0", "address": "127.0.0.2", "listen": [443], "silent": []},
    {"name": "flaky.example.com", "token": "h1", "address": "127.0.0.3", "listen": [443], "silent": []},
    {"name": "plain.example.com", "token": "h2", "address": "127.0.0.4", "listen": [80], "silent": []},
    {"name": "down.example.com", "token": "h3", "address": "127.0.0.5", "listen": [], "silent": []},
    {"name": "slow.example.com", "token": "h4", "address": "127.0.0.6", "listen": [], "silent": [443]},
    {"name": "later.example.com", "token": "h5", "address": "127.0.0.7", "listen": [443], "silent": []},
]
ADDRESS = {h["name"]: h["address"] for h in HOSTS}


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def _call(seq: int, method: str, url: str, status: int = 200, body: bytes | None = b"",
          headers: list[list[str]] | None = None, req_body: bytes | None = None,
          error: str | None = None, reason: str = "OK") -> dict[str, Any]:
    return {"seq": seq, "method": method, "url": url, "body": _b64(req_body),
            "response": None if error else {"status": status, "reason": reason, "body": _b64(body),
                                             "headers": headers if headers is not None else
                                             [["Content-Length", str(len(body or b""))]]},
            "error": {"kind": error, "message": "recorded"} if error else None}


CALLS = [
    _call(1, "GET", "https://api.example.com/v1/greeting", body=b'{"message": "hello"}', headers=[
        ["Content-Type", "application/json"], ["Content-Length", "20"], ["Date", "Tue, 13 Oct 2026 08:00:00 GMT"]]),
    _call(2, "GET", "https://api.example.com/blob", body=BINARY,
          headers=[["Content-Type", "application/octet-stream"], ["Content-Length", str(len(BINARY))]]),
    _call(3, "POST", "https://api.example.com/items", req_body=b'{"name": "a"}', status=201, body=b"made a",
          reason="Created"),
    _call(4, "POST", "https://api.example.com/items", req_body=b'{"name": "b"}', status=201, body=b"made b",
          reason="Created"),
    _call(5, "GET", "https://api.example.com/counter", body=b"one"),
    _call(6, "GET", "https://api.example.com/counter", body=b"two"),
    _call(7, "GET", "https://api.example.com/reset", error="reset"),
    _call(8, "GET", "https://api.example.com/slow", error="timeout"),
    _call(9, "GET", "https://flaky.example.com/", error="connect-refused"),
    _call(10, "GET", "https://flaky.example.com/", error="tls"),
    _call(11, "GET", "https://flaky.example.com/", error="connect-timeout"),
    _call(12, "GET", "https://flaky.example.com/", body=b"finally"),
    _call(13, "GET", "http://plain.example.com/stream", body=b"no length here",
          headers=[["Content-Type", "text/plain"]]),
    _call(14, "GET", "https://later.example.com/", error="dns"),
    _call(15, "GET", "https://later.example.com/", body=b"resolved"),
]


@dataclass
class Running:
    server: srv.ReplayServer
    ports: dict[tuple[str, int], int]
    ca_pem: bytes
    events: Path
    tmp: Path

    def client_ctx(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cadata=self.ca_pem.decode())
        return ctx

    def address(self, host: str) -> tuple[str, int]:
        return ADDRESS[host], self.ports[(host, 443)]

    def https(self, host: str = "api.example.com", timeout: float = 5) -> http.client.HTTPSConnection:
        address = self.address(host)
        ctx = self.client_ctx()

        class Conn(http.client.HTTPSConnection):
            def connect(self) -> None:  # the recorded name, reached at its 127.0.0.x:<ephemeral>
                raw = socket.create_connection(address, timeout)
                self.sock = ctx.wrap_socket(raw, server_hostname=host)

        return Conn(host, 443, timeout=timeout, context=ctx)

    def http(self, host: str = "plain.example.com", timeout: float = 5) -> http.client.HTTPConnection:
        address = (ADDRESS[host], self.ports[(host, 80)])

        class Conn(http.client.HTTPConnection):
            def connect(self) -> None:
                self.sock = socket.create_connection(address, timeout)

        return Conn(host, 80, timeout=timeout)

    def event_list(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.events.read_text().splitlines()]


@pytest.fixture()
def running(tmp_path: Path) -> Iterator[Running]:
    ca = ReplayCA("test")
    certs = tmp_path / "certs"
    certs.mkdir()
    for host in HOSTS:
        issued = ca.issue(host["name"])
        (certs / f"{host['token']}.crt").write_bytes(issued.cert_pem)
        (certs / f"{host['token']}.key").write_bytes(issued.key_pem)
    events = tmp_path / "events.jsonl"
    doc = {"version": 2, "hosts": HOSTS, "calls": CALLS}
    server = srv.ReplayServer(doc, str(certs), srv.EventLog(str(events)), port_map={443: 0, 80: 0})
    ports = server.start()
    yield Running(server, ports, ca.cert_pem, events, tmp_path)
    server.shutdown()


def _get(conn: http.client.HTTPConnection, path: str, method: str = "GET", body: bytes | None = None) -> tuple[int, str, list[tuple[str, str]], bytes]:
    conn.request(method, path, body=body)
    resp = conn.getresponse()
    return resp.status, resp.reason, resp.getheaders(), resp.read()


def test_serves_recorded_response_byte_for_byte_with_recorded_headers_only(running: Running) -> None:
    status, reason, headers, body = _get(running.https(), "/v1/greeting")
    assert (status, reason, body) == (200, "OK", b'{"message": "hello"}')
    assert headers == [("Content-Type", "application/json"), ("Content-Length", "20"),
                       ("Date", "Tue, 13 Oct 2026 08:00:00 GMT")]  # no Server, no refreshed Date


def test_raw_response_bytes_are_exactly_the_recording(running: Running) -> None:
    raw = socket.create_connection(running.address("api.example.com"), 5)
    tls = running.client_ctx().wrap_socket(raw, server_hostname="api.example.com")
    tls.sendall(b"GET /v1/greeting HTTP/1.1\r\nHost: api.example.com\r\nConnection: close\r\n\r\n")
    data = b""
    while chunk := tls.recv(65536):
        data += chunk
    assert data == (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 20\r\n"
                    b"Date: Tue, 13 Oct 2026 08:00:00 GMT\r\n\r\n{\"message\": \"hello\"}")


def test_binary_body(running: Running) -> None:
    assert _get(running.https(), "/blob")[3] == BINARY


def test_post_body_picks_the_matching_call(running: Running) -> None:
    conn = running.https()
    assert _get(conn, "/items", "POST", b'{"name": "b"}')[1:4:2] == ("Created", b"made b")
    assert _get(conn, "/items", "POST", b'{"name": "a"}')[3] == b"made a"
    assert [e["seq"] for e in running.event_list() if e["event"] == "served"] == [4, 3]


def test_identical_requests_in_recorded_order_then_unmatched(running: Running) -> None:
    conn = running.https()
    assert [_get(conn, "/counter")[3] for _ in range(2)] == [b"one", b"two"]
    status, _, _, body = _get(conn, "/counter")
    assert status == 599
    unmatched = [e for e in running.event_list() if e["event"] == "unmatched"]
    assert unmatched[0]["differences"][0]["part"] == "order"
    assert b"already served" in body


def test_unmatched_gets_an_error_response_and_is_reported_with_nearest(running: Running) -> None:
    status, reason, _, body = _get(running.https(), "/v1/greetings?lang=fr")
    assert (status, reason) == (599, "Not In Recording")
    assert b"Nearest recorded call: #1" in body and b"never forwards" in body
    event = [e for e in running.event_list() if e["event"] == "unmatched"][0]
    assert event["nearest"] == 1
    assert event["url"] == "https://api.example.com/v1/greetings?lang=fr"
    assert [d["part"] for d in event["differences"]] == ["path", "query"]


def test_reset_is_a_tcp_reset(running: Running) -> None:
    with pytest.raises(ConnectionResetError):
        _get(running.https(), "/reset")
    running.server.new_attempt()
    # under TLS Python reports the RST as an end of stream (RemoteDisconnected): check the TCP level itself
    raw = socket.create_connection(running.address("api.example.com"), 5)
    tls = running.client_ctx().wrap_socket(raw, server_hostname="api.example.com")
    tls.sendall(b"GET /reset HTTP/1.1\r\nHost: api.example.com\r\n\r\n")
    plain = socket.socket(fileno=os.dup(tls.fileno()))
    plain.settimeout(5)  # the fd is non-blocking (the TLS socket has a timeout): wait, as the client does
    with pytest.raises(ConnectionResetError):  # a FIN would read b"" here
        while plain.recv(65536):
            pass
    plain.close()
    tls.close()


def test_timeout_is_no_answer(running: Running) -> None:
    with pytest.raises(TimeoutError):
        _get(running.https(timeout=1), "/slow")


def test_connection_failures_replay_in_order_then_success(running: Running) -> None:
    with pytest.raises(ConnectionResetError):  # connect-refused on a port that also answers: a reset
        _get(running.https("flaky.example.com"), "/")
    with pytest.raises(ssl.SSLError, match="HANDSHAKE_FAILURE"):
        _get(running.https("flaky.example.com"), "/")
    with pytest.raises(TimeoutError):
        _get(running.https("flaky.example.com", timeout=1), "/")
    assert _get(running.https("flaky.example.com"), "/")[3] == b"finally"
    outcomes = {e["seq"]: e["outcome"] for e in running.event_list() if e["event"] == "served"}
    assert outcomes == {9: "error connect-refused: reset", 10: "error tls: tls handshake failure",
                        11: "error connect-timeout: no answer", 12: "response 200"}


def test_a_host_refuses_on_the_port_another_host_answers_on(running: Running) -> None:
    _, port = running.address("api.example.com")  # listening, on api.example.com's address only
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((ADDRESS["down.example.com"], port), 5)
    assert ("down.example.com", 443) not in running.ports
    assert _get(running.https(), "/counter")[3] == b"one"


def test_a_silent_port_drops_the_syn_so_connecting_times_out(running: Running) -> None:
    started = time.monotonic()
    with pytest.raises(TimeoutError):  # not refused, not accepted: the connect itself times out
        socket.create_connection(running.address("slow.example.com"), 1.5)
    assert time.monotonic() - started >= 1.4
    assert ("slow.example.com", 443) in running.ports


def test_plain_http_without_length_closes_the_connection(running: Running) -> None:
    status, _, headers, body = _get(running.http(), "/stream")
    assert (status, body) == (200, b"no length here")
    assert headers == [("Content-Type", "text/plain"), ("Connection", "close")]


def test_new_attempt_serves_the_recording_again(running: Running) -> None:
    assert _get(running.https(), "/counter")[3] == b"one"
    running.server.new_attempt()
    assert _get(running.https(), "/counter")[3] == b"one"
    assert any(e["event"] == "attempt" for e in running.event_list())


def test_a_client_that_distrusts_the_ca_is_noted(running: Running) -> None:
    raw = socket.create_connection(running.address("api.example.com"), 5)
    with pytest.raises(ssl.SSLCertVerificationError):
        ssl.create_default_context().wrap_socket(raw, server_hostname="api.example.com")
    for _ in range(100):
        notes = [e["text"] for e in running.event_list() if e["event"] == "note"]
        if notes:
            break
        time.sleep(0.02)
    assert "does it trust the replay CA?" in notes[0]


def test_a_host_that_first_failed_to_resolve_fails_that_lookup_then_answers(running: Running) -> None:
    import resolver

    dns = resolver.DnsServer(running.server.addresses, running.server.events.write, bind="127.0.0.1", port=0,
                             failing=running.server.dns_failing)

    def lookup(qtype: int = 1) -> str:
        q = struct.pack("!HHHHHH", 9, 0x0100, 1, 0, 0, 0) + b"\x05later\x07example\x03com\0" + struct.pack("!HH", qtype, 1)
        reply = dns.handle(q)
        assert reply is not None
        return {0: socket.inet_ntoa(reply[-4:]) if struct.unpack_from("!H", reply, 6)[0] else "nodata",
                3: "nxdomain"}[reply[3] & 0xF]

    try:
        assert lookup(28) == "nxdomain"  # AAAA agrees with the failure, without using it up
        assert lookup() == "nxdomain"  # the A question of that lookup: the recorded dns failure, served
        assert (lookup(), lookup(28)) == ("127.0.0.7", "nodata")
        assert _get(running.https("later.example.com"), "/")[3] == b"resolved"
    finally:
        dns.close()
    outcomes = {e["seq"]: e["outcome"] for e in running.event_list() if e["event"] == "served"}
    assert outcomes == {14: "error dns: nxdomain", 15: "response 200"}


def test_a_cache_buster_is_served_and_an_ignored_parameter_matches(tmp_path: Path) -> None:
    plain = [h for h in HOSTS if h["name"] == "plain.example.com"]
    calls = [_call(1, "GET", "http://plain.example.com/feed?_ts=1&v=1690000000000", body=b"feed"),
             _call(2, "GET", "http://plain.example.com/item?id=4&sig=recorded", body=b"item")]
    issued = ReplayCA("test").issue("plain.example.com")
    (tmp_path / "h2.crt").write_bytes(issued.cert_pem)
    (tmp_path / "h2.key").write_bytes(issued.key_pem)
    events = tmp_path / "events.jsonl"
    server = srv.ReplayServer({"version": 2, "hosts": plain, "calls": calls, "rules": {"ignore": ["SIG"]}},
                              str(tmp_path), srv.EventLog(str(events)), port_map={80: 0})
    ports = server.start()
    try:
        conn = http.client.HTTPConnection(ADDRESS["plain.example.com"], ports[("plain.example.com", 80)], timeout=5)
        assert _get(conn, "/feed?_ts=99&v=1760000000000")[3] == b"feed"
        assert _get(conn, "/item?sig=mine&id=4")[3] == b"item"
        assert _get(conn, "/item?sig=mine&id=5")[0] == 599
    finally:
        server.shutdown()
    served = [json.loads(line) for line in events.read_text().splitlines() if '"served"' in line]
    assert served[0]["seq"] == 1 and served[0]["volatile"] == ["query v: 1760000000000 (recorded 1690000000000, unix time)"]
    assert served[1]["seq"] == 2 and "volatile" not in served[1]
