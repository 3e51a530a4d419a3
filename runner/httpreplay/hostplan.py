"""Which recorded hosts the replay network offers, and the calls file the server reads.

Pure functions over the recorded calls (no engine): unit-tested on their own.

A host becomes a network alias of the replay server when it is a DNS name the
server can stand in for. Not offered: IP literals and localhost (a name cannot
override them), schemes other than http/https, hosts the capsule's policy denies,
and hosts whose every call failed with `dns` — leaving those without an alias is
exactly how their name fails to resolve in the replay.
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


def denied(host: str, patterns: Sequence[str]) -> bool:
    """Exact names, or `*.example.com` / `.example.com` for a domain and its subdomains."""
    for pattern in (p.strip().lower() for p in patterns):
        suffix = pattern.lstrip("*")
        if host == pattern or (suffix.startswith(".") and (host.endswith(suffix) or host == suffix[1:])):
            return True
    return False


def _why_not(scheme: str, host: str, denied_hosts: Sequence[str]) -> str | None:
    if scheme not in SCHEMES:
        return f"scheme {scheme or '?'} is not served (http and https only)"
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
        scheme, host = call_host(call)
        why = _why_not(scheme, host, denied_hosts)
        if why:
            unservable[call.seq] = why
        else:
            by_host.setdefault(host, []).append(call)
    aliases, unobservable = [], {}
    for host, host_calls in by_host.items():
        if all(c.error is not None and c.error.kind == "dns" for c in host_calls):
            for c in host_calls:
                unobservable[c.seq] = f"dns error: {host} has no address in the replay (whether it was asked cannot be seen)"
        else:
            aliases.append(host)
    return HostPlan(tuple(sorted(aliases)), FrozenMap(unservable), FrozenMap(unobservable))


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
