"""Which recorded hosts the replay network offers, and the calls file the server reads.

Pure functions over the recorded calls (no engine): unit-tested on their own.

A host gets an address of its own on the replay network (addressing.py), which the
replay's resolver answers for its name, when it is a DNS name the server can stand
in for. Not offered: IP literals and localhost (a name cannot override them),
schemes other than http/https, URLs whose port is not a port, and hosts the
capsule's policy denies (the resolver answers NXDOMAIN for those). A host whose
every call failed with `dns` gets no address either: the resolver answers NXDOMAIN,
exactly the recorded failure, and each lookup of it is seen (report.py).

On each port a host listens, unless every recorded call on that port failed to
connect the same way: all `connect-refused` leaves the port closed (the kernel
answers the SYN with a RST: ECONNREFUSED), all `connect-timeout` holds it silent (the
SYN is dropped: the client's connect times out). Both are exact, whatever the other
hosts do on that port, but happen where the server cannot see them, so the report
notes those calls instead of listing them as never requested.
"""
from __future__ import annotations

import base64
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


def _why_not(call: HttpCall, denied_hosts: Sequence[str]) -> str | None:
    scheme, host = call_host(call)
    if scheme not in SCHEMES:
        return f"scheme {scheme or '?'} is not served (http and https only)"
    if call_port(call) is None:
        return "the URL's port is not a port number (0-65535)"
    if not _HOSTNAME.match(host) or host.replace(".", "").isdigit():
        return f"host {host or '?'} is not a DNS name the replay can stand in for"
    if host == "localhost" or host.endswith(".localhost"):
        return "localhost is the program's own machine: not emulated"
    if denied(host, denied_hosts):
        return f"host {host} is denied by the capsule's replay policy"
    return None


def plan_hosts(calls: Sequence[HttpCall], denied_hosts: Sequence[str] = ()) -> HostPlan:
    by_host: dict[str, list[HttpCall]] = {}
    unservable: dict[int, str] = {}
    recorded: set[str] = set()
    for call in calls:
        why = _why_not(call, denied_hosts)
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
    return HostPlan(tuple(ports), FrozenMap(ports), FrozenMap(dns_failed), FrozenMap(unservable),
                    FrozenMap(unobservable), tuple(sorted(recorded)))


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


def calls_document(calls: Sequence[HttpCall], plan: HostPlan, addresses: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """The server's calls file (bodies as base64, so every byte survives) and host -> cert file token.

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
        "calls": [{
            "seq": c.seq, "method": c.request.method, "url": c.request.url, "body": _b64(c.request.body),
            "response": None if c.response is None else {
                "status": c.response.status, "reason": c.response.reason,
                "headers": [list(h) for h in c.response.headers], "body": _b64(c.response.body)},
            "error": None if c.error is None else {"kind": c.error.kind, "message": c.error.message},
        } for c in served],
    }
    return json.dumps(doc, ensure_ascii=True), tokens
