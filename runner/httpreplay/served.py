"""What the replay server saw: calls served, requests unmatched, recorded calls unused.

Built from the server's JSON-lines event log (one attempt: the events after the
last `attempt` marker) and the recorded calls. The resolver's `dns` events say
which names the program looked up: a recorded host whose calls all failed with
`dns` is served NXDOMAIN once per lookup, and a name the recording lacks is listed
as "contacted, not in the recording" with the nearest recorded host by name. Frozen dataclasses; runner.codec's
`encode` turns an HttpReport into --json output.
"""
from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..capsules.model import HttpCall
from .hostplan import HostPlan


@dataclass(frozen=True)
class Difference:
    part: str  # method scheme host port path query body order recording
    why: str


@dataclass(frozen=True)
class ServedCall:
    seq: int
    method: str
    url: str
    outcome: str  # "response 200", "error reset: reset", ...
    approximated: str | None = None  # how the emulation differs from the recorded failure
    volatile: tuple[str, ...] = ()  # the values the request differed in, served all the same ("query ts: …")


@dataclass(frozen=True)
class UnmatchedRequest:
    method: str
    url: str
    body_bytes: int
    nearest: int | None  # seq of the nearest recorded call
    nearest_request: str | None  # "GET https://..." of that call
    differences: tuple[Difference, ...]


@dataclass(frozen=True)
class UnusedCall:
    seq: int
    method: str
    url: str
    why: str = "never requested"


@dataclass(frozen=True)
class UnrecordedHost:
    host: str  # a name the program looked up that no recorded call reaches (it got NXDOMAIN)
    nearest: str | None  # the most alike recorded host, by name

    @property
    def line(self) -> str:
        near = f"nearest recorded host: {self.nearest}" if self.nearest else "no host was recorded"
        return f"contacted, not in the recording: {self.host} ({near})"


@dataclass(frozen=True)
class HttpReport:
    served: tuple[ServedCall, ...] = ()
    unmatched: tuple[UnmatchedRequest, ...] = ()
    unused: tuple[UnusedCall, ...] = ()
    notes: tuple[str, ...] = ()
    unrecorded_hosts: tuple[UnrecordedHost, ...] = ()
    # recorded calls the replay could not offer (loopback, IPv6, a denied host…), named before the first attempt
    unservable: tuple[UnusedCall, ...] = ()

    @property
    def clean(self) -> bool:
        """Every request matched, every recorded call was made, no host outside the recording was looked up."""
        return not self.unmatched and not self.unused and not self.unrecorded_hosts

    def lines(self) -> list[str]:
        """The HTTP section of the human report."""
        out = [f"HTTP: {len(self.served)} served, {len(self.unmatched)} unmatched, {len(self.unused)} unused, "
               + (f"{len(self.unservable)} not served, " if self.unservable else "")
               + f"{len(self.unrecorded_hosts)} unrecorded host(s)"]
        for s in self.served:
            out.append(f"  served   #{s.seq} {s.method} {s.url} -> {s.outcome}"
                       + (f" (approximated: {s.approximated})" if s.approximated else "")
                       + (f" (volatile values: {'; '.join(s.volatile)})" if s.volatile else ""))
        for u in self.unmatched:
            near = f"nearest #{u.nearest} {u.nearest_request}" if u.nearest is not None else "no nearest call"
            out.append(f"  UNMATCHED {u.method} {u.url} ({near})")
            out += [f"      {d.part}: {d.why}" for d in u.differences]
        for c in self.unused:
            out.append(f"  unused   #{c.seq} {c.method} {c.url} ({c.why})")
        for c in self.unservable:
            out.append(f"  not served #{c.seq} {c.method} {c.url} ({c.why})")
        out += [f"  {h.line}" for h in self.unrecorded_hosts]
        out += [f"  note: {n}" for n in self.notes]
        return out


def _events(lines: Iterable[str]) -> list[dict[str, Any]]:
    """The last attempt's events; lines that are not JSON objects are skipped."""
    events: list[dict[str, Any]] = []
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        if event.get("event") == "attempt":
            events = []
        else:
            events.append(event)
    return events


def _served(e: Mapping[str, Any]) -> ServedCall:
    volatile = e.get("volatile")
    return ServedCall(int(e["seq"]), str(e.get("method", "")), str(e.get("url", "")), str(e.get("outcome", "")),
                      e.get("approximated") or None,
                      tuple(str(v) for v in volatile) if isinstance(volatile, list) else ())


def _unmatched(e: Mapping[str, Any], by_seq: Mapping[int, HttpCall]) -> UnmatchedRequest:
    nearest = e.get("nearest")
    call = by_seq.get(nearest) if isinstance(nearest, int) else None
    diffs = tuple(Difference(str(d.get("part", "")), str(d.get("why", ""))) for d in e.get("differences") or ()
                  if isinstance(d, dict))
    return UnmatchedRequest(str(e.get("method", "")), str(e.get("url", "")), int(e.get("body_bytes") or 0),
                            nearest if call else None,
                            f"{call.request.method} {call.request.url}" if call else None, diffs)


def _lookups(events: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Name -> how many times the program looked it up: its A questions (getaddrinfo asks
    A and AAAA once per lookup), or one when it asked only for other types."""
    a_questions: dict[str, int] = {}
    asked: set[str] = set()
    for e in events:
        if e.get("event") == "dns" and isinstance(e.get("name"), str):
            asked.add(e["name"])
            if e.get("type") == "A":
                a_questions[e["name"]] = a_questions.get(e["name"], 0) + 1
    return {name: a_questions.get(name, 1) for name in asked}


def _nxdomain_served(plan: HostPlan, lookups: Mapping[str, int], by_seq: Mapping[int, HttpCall]) -> list[ServedCall]:
    """A host recorded as a dns failure: each lookup got NXDOMAIN, served its calls in order."""
    served = []
    for host, seqs in plan.dns_failed.items():
        for seq in seqs[:lookups.get(host, 0)]:
            call = by_seq[seq]
            served.append(ServedCall(seq, call.request.method, call.request.url, "error dns: nxdomain"))
    return served


def unrecorded_hosts(events: Sequence[Mapping[str, Any]], recorded: Sequence[str]) -> tuple[UnrecordedHost, ...]:
    """Names answered NXDOMAIN that no recorded call reaches, in the order first asked.

    Reverse lookups (*.arpa) are not hosts; NAME.SUFFIX is dropped when NAME was asked
    too (the stub resolver appending its search domains after an NXDOMAIN)."""
    known = set(recorded)
    names: list[str] = []
    for e in events:
        name = e.get("name")
        if (e.get("event") == "dns" and e.get("answer") == "nxdomain" and isinstance(name, str) and name
                and name not in known and name not in names and not name.endswith(".arpa")):
            names.append(name)
    names = [n for n in names if not any(n.startswith(other + ".") for other in names)]
    return tuple(UnrecordedHost(n, _nearest_host(n, recorded)) for n in names)


def _nearest_host(name: str, recorded: Sequence[str]) -> str | None:
    if not recorded:
        return None
    return max(recorded, key=lambda host: (difflib.SequenceMatcher(None, name, host).ratio(), host))


def build_report(calls: Sequence[HttpCall], event_lines: Iterable[str], plan: HostPlan,
                 notes: Sequence[str] = ()) -> HttpReport:
    """plan.unservable: calls the replay could not offer (listed apart, with why: named before the
    first attempt, so not "never requested");
    plan.unobservable: calls replayed where the server cannot see them (a closed or
    silent port), noted only; plan.dns_failed: hosts answered NXDOMAIN, served per lookup."""
    by_seq = {c.seq: c for c in calls}
    events = _events(event_lines)
    served = tuple(_served(e) for e in events if e.get("event") == "served" and isinstance(e.get("seq"), int))
    served += tuple(_nxdomain_served(plan, _lookups(events), by_seq))
    unmatched = tuple(_unmatched(e, by_seq) for e in events if e.get("event") == "unmatched")
    done = {s.seq for s in served}
    dns_seqs = {seq for seqs in plan.dns_failed.values() for seq in seqs}
    unused = tuple(UnusedCall(c.seq, c.request.method, c.request.url,
                              "never looked up" if c.seq in dns_seqs else "never requested")
                   for c in calls if c.seq not in done and c.seq not in plan.unobservable and c.seq not in plan.unservable)
    unservable = tuple(UnusedCall(c.seq, c.request.method, c.request.url, plan.unservable[c.seq])
                       for c in calls if c.seq in plan.unservable)
    server_notes = tuple(str(e.get("text")) for e in events if e.get("event") == "note")
    extra = tuple(f"#{seq}: {why}" for seq, why in sorted(plan.unobservable.items()))
    return HttpReport(tuple(sorted(served, key=lambda s: s.seq)), unmatched, unused,
                      tuple(notes) + extra + server_notes, unrecorded_hosts(events, plan.recorded), unservable)
