"""The replayed program's resolver: recorded names answer with their replay address,
every other name gets NXDOMAIN, and every question is logged.

Standard library only, Python >= 3.9 (it runs in the sidecar beside server.py).
The replayed container's DNS server is this one (Docker's embedded resolver, which
answers in the container at 127.0.0.11, forwards every name it does not know here).

A subset of RFC 1035, as much as stub resolvers ask: one question per query; A is
answered from the table; any other type of a known name gets no records (NODATA,
so getaddrinfo settles for the A record); an unknown name is NXDOMAIN, authoritative,
so no resolver tries further. TTL 0: nothing caches an answer across attempts.
Every question becomes a `dns` event: the report names the hosts the program looked
up that the recording lacks, and counts the lookups of hosts recorded as NXDOMAIN.
"""
from __future__ import annotations

import socket
import struct
import threading
from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Tuple

TYPE_A, CLASS_IN = 1, 1
NOERROR, FORMERR, NXDOMAIN, NOTIMP = 0, 1, 3, 4
TYPE_NAMES = {1: "A", 2: "NS", 5: "CNAME", 6: "SOA", 12: "PTR", 15: "MX", 16: "TXT", 28: "AAAA", 33: "SRV",
              64: "SVCB", 65: "HTTPS", 255: "ANY"}
MAX_EVENTS = 10000  # per attempt: a program resolving names in a loop must not fill the disk
HEADER = struct.Struct("!HHHHHH")


class FormatError(ValueError):
    """Not a DNS query this server can read."""


@dataclass(frozen=True)
class Query:
    id: int
    flags: int
    name: str  # lowercased, no trailing dot
    qtype: int
    question: bytes  # the question section as sent (its letter case kept: some resolvers check it)

    @property
    def type_name(self) -> str:
        return TYPE_NAMES.get(self.qtype, str(self.qtype))


def _name(data: bytes, i: int) -> Tuple[str, int]:
    """The name at offset i (compression pointers followed, loops refused) and the offset after it."""
    labels: List[str] = []
    end: Optional[int] = None
    jumps = 0
    while True:
        if i >= len(data):
            raise FormatError("name runs past the message")
        size = data[i]
        if size & 0xC0 == 0xC0:  # a pointer: legal in a question, though stub resolvers do not send one
            if i + 1 >= len(data) or jumps > 16:
                raise FormatError("bad compression pointer")
            end = i + 2 if end is None else end
            i, jumps = ((size & 0x3F) << 8) | data[i + 1], jumps + 1
            continue
        if size & 0xC0:
            raise FormatError("unknown label type")
        if size == 0:
            name = ".".join(labels)
            if len(name) > 253:
                raise FormatError("name too long")
            return name, (i + 1 if end is None else end)
        labels.append(data[i + 1:i + 1 + size].decode("ascii", "replace").lower())
        i += 1 + size


def parse_query(data: bytes) -> Query:
    if len(data) < HEADER.size:
        raise FormatError("shorter than a header")
    ident, flags, qdcount, _, _, _ = HEADER.unpack_from(data)
    if flags & 0x8000:
        raise FormatError("a response, not a query")
    if qdcount != 1:
        raise FormatError(f"{qdcount} questions (one is supported)")
    name, i = _name(data, HEADER.size)
    if i + 4 > len(data):
        raise FormatError("question cut short")
    qtype, _ = struct.unpack_from("!HH", data, i)
    return Query(ident, flags, name.rstrip("."), qtype, data[HEADER.size:i + 4])


def _header(ident: int, query_flags: int, rcode: int, answers: int, questions: int = 1) -> bytes:
    # QR, opcode and RD as asked, AA (this server is the authority for every name it answers), RA.
    flags = 0x8000 | (query_flags & 0x7900) | 0x0400 | 0x0080 | rcode
    return HEADER.pack(ident, flags, questions, answers, 0, 0)


def answer(query: Query, table: Mapping[str, str], unresolvable: bool = False) -> Tuple[bytes, str]:
    """The response to a query, and what it said: an address, "nodata", "nxdomain" or "notimp".

    unresolvable: NXDOMAIN even for a name in the table (its lookup failed when recorded)."""
    if (query.flags >> 11) & 0xF:  # only standard queries (opcode 0)
        return _header(query.id, query.flags, NOTIMP, 0) + query.question, "notimp"
    address = None if unresolvable else table.get(query.name)
    if address is None:
        return _header(query.id, query.flags, NXDOMAIN, 0) + query.question, "nxdomain"
    if query.qtype != TYPE_A:
        return _header(query.id, query.flags, NOERROR, 0) + query.question, "nodata"
    record = struct.pack("!HHHIH", 0xC00C, TYPE_A, CLASS_IN, 0, 4) + socket.inet_aton(address)
    return _header(query.id, query.flags, NOERROR, 1) + query.question + record, address


def format_error(data: bytes) -> Optional[bytes]:
    """FORMERR for a message with at least an id; None for noise not worth an answer."""
    if len(data) < HEADER.size or data[2] & 0x80:
        return None
    ident, flags = struct.unpack_from("!HH", data)
    return _header(ident, flags, FORMERR, 0, questions=0)


class DnsServer:
    """UDP on one address; answers from `table`, reports each question through `log`.

    failing(name, qtype): True when this lookup of a recorded name must fail (the
    server's matcher says its next call is a recorded dns failure)."""

    def __init__(self, table: Mapping[str, str], log: Callable[..., None], bind: str = "0.0.0.0",
                 port: int = 53, failing: Callable[[str, int], bool] = lambda name, qtype: False) -> None:
        self.table: Dict[str, str] = {k.lower(): v for k, v in table.items()}
        self.log = log
        self.failing = failing
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((bind, port))
        self.port = self.sock.getsockname()[1]
        self._logged = 0
        self._lock = threading.Lock()

    def new_attempt(self) -> None:
        with self._lock:
            self._logged = 0

    def start(self) -> None:
        threading.Thread(target=self._loop, daemon=True).start()

    def close(self) -> None:
        self.sock.close()

    def _loop(self) -> None:
        while True:
            try:
                data, peer = self.sock.recvfrom(4096)
            except OSError:
                return  # closed
            reply = self.handle(data)
            if reply is not None:
                try:
                    self.sock.sendto(reply, peer)
                except OSError:
                    pass

    def handle(self, data: bytes) -> Optional[bytes]:
        try:
            query = parse_query(data)
        except FormatError:
            return format_error(data)
        failing = query.name in self.table and self.failing(query.name, query.qtype)
        reply, said = answer(query, self.table, unresolvable=failing)
        self._event(query, said)
        return reply

    def _event(self, query: Query, said: str) -> None:
        with self._lock:
            self._logged += 1
            count = self._logged
        if count <= MAX_EVENTS:
            self.log("dns", name=query.name, type=query.type_name, answer=said)
        elif count == MAX_EVENTS + 1:
            self.log("note", text=f"more than {MAX_EVENTS} DNS questions in this attempt: the rest are not listed")
