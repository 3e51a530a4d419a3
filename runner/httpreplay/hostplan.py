"""Which recorded hosts the replay network offers, and the calls file the server reads.

Pure functions over the recorded calls (no engine): unit-tested on their own.

A host gets an address of its own on the replay network (addressing.py), which the
replay's resolver answers for its name, when it is a DNS name the server can stand
in for. An IPv4 literal (10.1.2.3, a public address) is offered too: the sidecar holds
that very address on the replay network, whose subnet is chosen to contain it (the
session falls back to not serving it, and says so before the first attempt, when no
such subnet can be had here). Not offered: loopback (127.0.0.0/8, ::1, localhost: the
program's own container, which no other container can stand in for), IPv6 literals
(the replay network is IPv4), addresses no interface may hold (multicast, link-local,
0.0.0.0/8, 240.0.0.0/4), schemes other than http/https, URLs whose port is not a port,
and hosts the capsule's policy denies (the resolver answers NXDOMAIN for those). Each
is named before the first attempt (session.py) and listed as not served. A host whose
every call failed with `dns` gets no address either: the resolver answers NXDOMAIN,
exactly the recorded failure, and each lookup of it is seen (served.py).

On each port a host listens, unless every recorded call on that port failed to
connect the same way: all `connect-refused` leaves the port closed (the kernel
answers the SYN with a RST: ECONNREFUSED), all `connect-timeout` holds it silent (the
SYN is dropped: the client's connect times out). Both are exact, whatever the other
hosts do on that port, but happen where the server cannot see them, so the report
notes those calls instead of listing them as never requested.
"""
from __future__ import annotations

import base64
import ipaddress
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ..capsules.model import Body, FrozenMap, HttpCall

_LABEL = r"(?!-)[a-z0-9_-]{1,63}(?<!-)"
_HOSTNAME = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*$")
SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}


LISTEN, REFUSE, SILENT = "listen", "refuse", "silent"  # what a host's address does on a port


@dataclass(frozen=True)
class HostPlan:
    hosts: tuple[str, ...] = ()  # names that get an address of their own on the replay network
    ports: FrozenMap[str, FrozenMap[int, str]] = field(default_factory=FrozenMap)  # host -> port -> LISTEN...
    dns_failed: FrozenMap[str, tuple[int, ...]] = field(default_factory=FrozenMap)  # NXDOMAIN host -> its seqs
    unservable: FrozenMap[int, str] = field(default_factory=FrozenMap)  # seq -> why it cannot be served
    unobservable: FrozenMap[int, str] = field(default_factory=FrozenMap)  # seq -> how it is replayed unseen
    recorded: tuple[str, ...] = ()  # every DNS name the recording reaches (the nearest of an unrecorded one)
    literals: tuple[str, ...] = ()  # the hosts that are IPv4 addresses: the sidecar holds each itself

    def unservable_by_host(self, calls: Sequence[HttpCall]) -> list[tuple[str, tuple[int, ...], str]]:
        """(host[:port], seqs, why) of the calls the replay cannot offer, in recorded order: what is
        named before the first attempt."""
        groups: dict[tuple[str, str], list[int]] = {}
        for call in calls:
            if call.seq in self.unservable:
                where = call_host(call)[1] or "?"
                port = call_port(call)
                key = (f"{where}:{port}" if port else where, self.unservable[call.seq])
                groups.setdefault(key, []).append(call.seq)
        return [(where, tuple(seqs), why) for (where, why), seqs in groups.items()]


def call_host(call: HttpCall) -> tuple[str, str]:
    """(scheme, host) of a call's URL, lowercased; empty strings when unparsable."""
    try:
        parts = urlsplit(call.request.url)
        return parts.scheme.lower(), (parts.hostname or "").lower()
    except ValueError:
        return "", ""


def call_port(call: HttpCall) -> int | None:
    """The port a call's URL names, or its scheme's default; None when it is not a port.

    Mirrors the server's parse_url, which would fail to start on such a URL.
    """
    try:
        parts = urlsplit(call.request.url)
        return parts.port or DEFAULT_PORTS.get(parts.scheme.lower(), 0)
    except ValueError:
        return None


def denied(host: str, patterns: Sequence[str]) -> bool:
    """Exact names, or `*.example.com` / `.example.com` for a domain and its subdomains."""
    for pattern in (p.strip().lower() for p in patterns):
        suffix = pattern.lstrip("*")
        if host == pattern or (suffix.startswith(".") and (host.endswith(suffix) or host == suffix[1:])):
            return True
    return False


LOOPBACK = ("loopback: the program's own container, where no other container can answer (a server the "
            "command starts itself still does; one that ran beside it when recorded does not)")


def ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _why_not_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    if address.is_loopback:
        return f"{address} is {LOOPBACK}"
    if address.version == 6:
        return f"{address} is an IPv6 address: the replay network is IPv4 only"
    if address.is_multicast or address.is_link_local or address.is_unspecified or address.is_reserved \
            or address in ipaddress.IPv4Network("0.0.0.0/8"):
        return f"{address} is not an address a container on the replay network can hold"
    return None


def _why_not(call: HttpCall, denied_hosts: Sequence[str]) -> str | None:
    scheme, host = call_host(call)
    if scheme not in SCHEMES:
        return f"scheme {scheme or '?'} is not served (http and https only)"
    if call_port(call) is None:
        return "the URL's port is not a port number (0-65535)"
    address = ip_literal(host)
    if address is not None:
        return _why_not_address(address)
    if not _HOSTNAME.match(host) or host.replace(".", "").isdigit():
        return f"host {host or '?'} is not a DNS name the replay can stand in for"
    if host == "localhost" or host.endswith(".localhost"):
        return f"{host} is {LOOPBACK}"
    if denied(host, denied_hosts):
        return f"host {host} is denied by the capsule's replay policy"
    return None


def plan_hosts(calls: Sequence[HttpCall], denied_hosts: Sequence[str] = (),
               refused: Mapping[str, str] = FrozenMap()) -> HostPlan:
    """`refused`: hosts not to offer after all, each with why (an IP literal no subnet can hold here)."""
    by_host: dict[str, list[HttpCall]] = {}
    unservable: dict[int, str] = {}
    recorded: set[str] = set()
    for call in calls:
        why = _why_not(call, denied_hosts) or refused.get(call_host(call)[1])
        host = call_host(call)[1]
        if _HOSTNAME.match(host) and not host.replace(".", "").isdigit():
            recorded.add(host)
        if why:
            unservable[call.seq] = why
        else:
            by_host.setdefault(host, []).append(call)
    ports: dict[str, FrozenMap[int, str]] = {}
    dns_failed: dict[str, tuple[int, ...]] = {}
    unobservable: dict[int, str] = {}
    for host, host_calls in sorted(by_host.items()):
        if all(_failed(c, "dns") for c in host_calls):
            dns_failed[host] = tuple(c.seq for c in host_calls)  # the replay's resolver answers NXDOMAIN
        else:
            behaviour, unseen = _port_behaviours(host, host_calls)
            ports[host] = FrozenMap(behaviour)
            unobservable.update(unseen)
    literals = tuple(h for h in ports if ip_literal(h) is not None)
    return HostPlan(tuple(ports), FrozenMap(ports), FrozenMap(dns_failed), FrozenMap(unservable),
                    FrozenMap(unobservable), tuple(sorted(recorded)), literals)


def _failed(call: HttpCall, kind: str) -> bool:
    return call.error is not None and call.error.kind == kind


def _port_behaviours(host: str, host_calls: Sequence[HttpCall]) -> tuple[dict[int, str], dict[int, str]]:
    """Per port of one host: LISTEN, or, when every call on it failed to connect the same way,
    REFUSE (nothing listens: the kernel answers the SYN with a RST) or SILENT (the SYN is
    dropped: the connection times out). Those calls never reach the server: they are noted."""
    by_port: dict[int, list[HttpCall]] = {}
    for call in host_calls:
        by_port.setdefault(call_port(call) or 0, []).append(call)
    behaviour: dict[int, str] = {}
    unseen: dict[int, str] = {}
    for port, port_calls in sorted(by_port.items()):
        if all(_failed(c, "connect-refused") for c in port_calls):
            behaviour[port] = REFUSE
            why = (f"connect-refused: nothing listens on port {port} of {host}'s replay address, so the kernel "
                   "refuses the connection as recorded (the server cannot see whether it was tried)")
        elif all(_failed(c, "connect-timeout") for c in port_calls):
            behaviour[port] = SILENT
            why = (f"connect-timeout: port {port} of {host}'s replay address drops the connection request, so "
                   "connecting times out as recorded (the server cannot see whether it was tried)")
        else:
            behaviour[port] = LISTEN
            continue
        unseen.update({c.seq: why for c in port_calls})
    return behaviour, unseen


def _b64(body: Body | None) -> str | None:
    return None if body is None else base64.b64encode(body.data).decode("ascii")


def calls_document(calls: Sequence[HttpCall], plan: HostPlan, addresses: Mapping[str, str],
                   ignore: Sequence[str] = ()) -> tuple[str, dict[str, str]]:
    """The server's calls file (bodies as base64, so every byte survives) and host -> cert file token;
    `ignore`: the names matching leaves out (--http-ignore).

    Each host comes with its address and the ports it listens on, or holds silent;
    the calls the server never sees (unservable, refused or silent ports, NXDOMAIN
    hosts) are left out."""
    tokens = {host: f"h{i}" for i, host in enumerate(plan.hosts)}
    hosts = [{"name": host, "token": tokens[host], "address": addresses[host],
              "listen": [p for p, b in plan.ports[host].items() if b == LISTEN],
              "silent": [p for p, b in plan.ports[host].items() if b == SILENT]} for host in plan.hosts]
    offered = set(plan.hosts)
    served = [c for c in calls if c.seq not in plan.unservable and c.seq not in plan.unobservable
              and call_host(c)[1] in offered]
    doc = {
        "version": 2,
        "hosts": hosts,
        "rules": {"ignore": sorted({n.lower() for n in ignore})},
        "calls": [{
            "seq": c.seq, "method": c.request.method, "url": c.request.url, "body": _b64(c.request.body),
            "headers": [list(h) for h in c.request.headers],
            "response": None if c.response is None else {
                "status": c.response.status, "reason": c.response.reason,
                "headers": [list(h) for h in c.response.headers], "body": _b64(c.response.body)},
            "error": None if c.error is None else {"kind": c.error.kind, "message": c.error.message},
        } for c in served],
    }
    return json.dumps(doc, ensure_ascii=True), tokens
