"""Which recorded hosts the replay network offers, and the calls file the server reads.

Pure functions over the recorded calls (no engine): unit-tested on their own.

A host becomes a network alias of the replay server when it is a DNS name the
server can stand in for. Not offered: IP literals and localhost (a name cannot
override them), schemes other than http/https, URLs whose port is not a port, hosts
the capsule's policy denies, and hosts whose every call failed with `dns` — leaving
those without an alias is exactly how their name fails to resolve in the replay.

Two kinds of recorded failure are emulated where the server cannot see them, so the
report notes them instead of listing them as never requested: `dns` (no alias), and
`connect-refused` on a port where every call was refused (the server leaves that port
closed, so the kernel refuses the connection for real).
"""
from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ..capsules.model import Body, FrozenMap, HttpCall

_LABEL = r"(?!-)[a-z0-9_-]{1,63}(?<!-)"
_HOSTNAME = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*$")
SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class HostPlan:
    aliases: tuple[str, ...] = ()  # names the replay server answers to
    unservable: FrozenMap[int, str] = field(default_factory=FrozenMap)  # seq -> why it cannot be served
    unobservable: FrozenMap[int, str] = field(default_factory=FrozenMap)  # seq -> how it is emulated unseen


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
    for call in calls:
        why = _why_not(call, denied_hosts)
        if why:
            unservable[call.seq] = why
        else:
            by_host.setdefault(call_host(call)[1], []).append(call)
    aliases: list[str] = []
    unobservable: dict[int, str] = {}
    offered: list[HttpCall] = []  # the calls the server gets
    for host, host_calls in by_host.items():
        if all(_failed(c, "dns") for c in host_calls):
            for c in host_calls:
                unobservable[c.seq] = f"dns error: {host} has no address in the replay (whether it was asked cannot be seen)"
        else:
            aliases.append(host)
            offered += host_calls
    unobservable.update(_closed_ports(offered))
    return HostPlan(tuple(sorted(aliases)), FrozenMap(unservable), FrozenMap(unobservable))


def _failed(call: HttpCall, kind: str) -> bool:
    return call.error is not None and call.error.kind == kind


def _closed_ports(offered: Sequence[HttpCall]) -> dict[int, str]:
    """Calls on a port the server leaves closed: every call the server gets on it was refused.

    The server decides by port alone, over every call in its calls file (server.py
    serving_ports), so this groups the same calls the same way.
    """
    by_port: dict[int | None, list[HttpCall]] = {}
    for call in offered:
        by_port.setdefault(call_port(call), []).append(call)
    return {c.seq: f"connect-refused: port {port} is closed in the replay, so connecting is refused "
                   "(whether it was tried cannot be seen)"
            for port, port_calls in by_port.items() if all(_failed(c, "connect-refused") for c in port_calls)
            for c in port_calls}


def _b64(body: Body | None) -> str | None:
    return None if body is None else base64.b64encode(body.data).decode("ascii")


def calls_document(calls: Sequence[HttpCall], plan: HostPlan) -> tuple[str, dict[str, str]]:
    """The server's calls file (bodies as base64, so every byte survives) and host -> cert file token."""
    tokens = {host: f"h{i}" for i, host in enumerate(plan.aliases)}
    served = [c for c in calls if c.seq not in plan.unservable and c.seq not in plan.unobservable]
    doc = {
        "version": 1,
        "hosts": tokens,
        "calls": [{
            "seq": c.seq, "method": c.request.method, "url": c.request.url, "body": _b64(c.request.body),
            "response": None if c.response is None else {
                "status": c.response.status, "reason": c.response.reason,
                "headers": [list(h) for h in c.response.headers], "body": _b64(c.response.body)},
            "error": None if c.error is None else {"kind": c.error.kind, "message": c.error.message},
        } for c in served],
    }
    return json.dumps(doc, ensure_ascii=True), tokens
