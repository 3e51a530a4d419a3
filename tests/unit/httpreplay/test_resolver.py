"""The replay's resolver: queries parsed, recorded names answered, every other name NXDOMAIN.

The wire format is checked by hand against RFC 1035 here; glibc's stub resolver
reads it through Docker's embedded resolver in tests/integration."""
from __future__ import annotations

import socket
import struct
from collections.abc import Iterator
from typing import Any

import pytest
import resolver as r

TABLE = {"api.example.com": "172.16.9.128"}


def query(name: str, qtype: int = 1, ident: int = 0x1234, flags: int = 0x0100, extra: bytes = b"") -> bytes:
    labels = b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0"
    return struct.pack("!HHHHHH", ident, flags, 1, 0, 0, 1 if extra else 0) + labels + struct.pack("!HH", qtype, 1) + extra


EDNS = b"\0" + struct.pack("!HHIH", 41, 1232, 0, 0)  # an OPT record, as glibc and Docker's resolver add


def test_parse_keeps_the_question_and_lowercases_the_name() -> None:
    q = r.parse_query(query("Api.Example.COM", 28, extra=EDNS))
    assert (q.id, q.name, q.qtype, q.type_name) == (0x1234, "api.example.com", 28, "AAAA")
    assert q.question == query("Api.Example.COM", 28)[12:]  # as sent: 0x20 letter case survives


@pytest.mark.parametrize("data, why", [
    (b"\x12\x34", "shorter than a header"),
    (struct.pack("!HHHHHH", 1, 0x8180, 1, 0, 0, 0) + b"\0\0\1\0\1", "a response"),
    (struct.pack("!HHHHHH", 1, 0x0100, 2, 0, 0, 0), "2 questions"),
    (struct.pack("!HHHHHH", 1, 0x0100, 1, 0, 0, 0) + b"\x05abc", "runs past"),
    (struct.pack("!HHHHHH", 1, 0x0100, 1, 0, 0, 0) + b"\xc0\x0c", "bad compression pointer"),
    (struct.pack("!HHHHHH", 1, 0x0100, 1, 0, 0, 0) + b"\x03abc\0\0", "cut short"),
])
def test_malformed_queries_are_refused_with_why(data: bytes, why: str) -> None:
    with pytest.raises(r.FormatError, match=why):
        r.parse_query(data)


def _header(reply: bytes) -> tuple[int, int, int, int]:
    ident, flags, qd, an, _, _ = struct.unpack_from("!HHHHHH", reply)
    return ident, flags, qd, an


def test_a_recorded_name_gets_its_address() -> None:
    reply, said = r.answer(r.parse_query(query("api.example.com")), TABLE)
    ident, flags, qd, an = _header(reply)
    assert said == "172.16.9.128" and (ident, qd, an) == (0x1234, 1, 1)
    assert flags & 0x8000 and flags & 0x0400 and flags & 0x0100 and flags & 0xF == r.NOERROR  # QR AA RD
    assert reply.endswith(struct.pack("!HHHIH", 0xC00C, 1, 1, 0, 4) + socket.inet_aton("172.16.9.128"))


def test_other_types_of_a_recorded_name_are_nodata_and_other_names_nxdomain() -> None:
    reply, said = r.answer(r.parse_query(query("api.example.com", 28)), TABLE)
    assert said == "nodata" and _header(reply)[3] == 0 and _header(reply)[1] & 0xF == r.NOERROR
    reply, said = r.answer(r.parse_query(query("elsewhere.example.org")), TABLE)
    assert said == "nxdomain" and _header(reply)[1] & 0xF == r.NXDOMAIN and _header(reply)[3] == 0
    reply, said = r.answer(r.parse_query(query("api.example.com", flags=0x2900)), TABLE)  # opcode 5, UPDATE
    assert said == "notimp" and _header(reply)[1] & 0xF == r.NOTIMP


@pytest.fixture()
def server() -> Iterator[tuple[r.DnsServer, list[dict[str, Any]]]]:
    events: list[dict[str, Any]] = []
    dns = r.DnsServer(TABLE, lambda event, **f: events.append({"event": event, **f}), bind="127.0.0.1", port=0)
    dns.start()
    yield dns, events
    dns.close()


def ask(port: int, data: bytes) -> bytes:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(5)
        s.sendto(data, ("127.0.0.1", port))
        return s.recv(4096)


def test_server_answers_over_udp_and_logs_every_question(server: tuple[r.DnsServer, list[dict[str, Any]]]) -> None:
    dns, events = server
    assert ask(dns.port, query("api.example.com", extra=EDNS)).endswith(socket.inet_aton("172.16.9.128"))
    assert _header(ask(dns.port, query("nope.example.org", 28)))[1] & 0xF == r.NXDOMAIN
    assert _header(ask(dns.port, b"\xab\xcd" + b"\x01\x00" + b"\0" * 8))[1] & 0xF == r.FORMERR
    assert events == [{"event": "dns", "name": "api.example.com", "type": "A", "answer": "172.16.9.128"},
                      {"event": "dns", "name": "nope.example.org", "type": "AAAA", "answer": "nxdomain"}]


def test_events_are_capped_per_attempt(server: tuple[r.DnsServer, list[dict[str, Any]]],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    dns, events = server
    monkeypatch.setattr(r, "MAX_EVENTS", 2)
    for i in range(4):
        dns.handle(query(f"n{i}.example"))
    assert [e["event"] for e in events] == ["dns", "dns", "note"]
    dns.new_attempt()
    dns.handle(query("again.example"))
    assert events[-1]["name"] == "again.example"
