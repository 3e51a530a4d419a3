"""What the replay server saw: calls served, requests unmatched, recorded calls unused.

Built from the server's JSON-lines event log (one attempt: the events after the
last `attempt` marker) and the recorded calls. Frozen dataclasses; `to_data()` of
runner.capsules.model turns an HttpReport into --json output.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..capsules.model import HttpCall


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
class HttpReport:
    served: tuple[ServedCall, ...] = ()
    unmatched: tuple[UnmatchedRequest, ...] = ()
    unused: tuple[UnusedCall, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        """Every request matched and every recorded call was made."""
        return not self.unmatched and not self.unused

    def lines(self) -> list[str]:
        """The HTTP section of the human report."""
        out = [f"HTTP: {len(self.served)} served, {len(self.unmatched)} unmatched, {len(self.unused)} unused"]
        for s in self.served:
            out.append(f"  served   #{s.seq} {s.method} {s.url} -> {s.outcome}"
                       + (f" (approximated: {s.approximated})" if s.approximated else ""))
        for u in self.unmatched:
            near = f"nearest #{u.nearest} {u.nearest_request}" if u.nearest is not None else "no nearest call"
            out.append(f"  UNMATCHED {u.method} {u.url} ({near})")
            out += [f"      {d.part}: {d.why}" for d in u.differences]
        for c in self.unused:
            out.append(f"  unused   #{c.seq} {c.method} {c.url} ({c.why})")
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
    return ServedCall(int(e["seq"]), str(e.get("method", "")), str(e.get("url", "")), str(e.get("outcome", "")),
                      e.get("approximated") or None)


def _unmatched(e: Mapping[str, Any], by_seq: Mapping[int, HttpCall]) -> UnmatchedRequest:
    nearest = e.get("nearest")
    call = by_seq.get(nearest) if isinstance(nearest, int) else None
    diffs = tuple(Difference(str(d.get("part", "")), str(d.get("why", ""))) for d in e.get("differences") or ()
                  if isinstance(d, dict))
    return UnmatchedRequest(str(e.get("method", "")), str(e.get("url", "")), int(e.get("body_bytes") or 0),
                            nearest if call else None,
                            f"{call.request.method} {call.request.url}" if call else None, diffs)


def build_report(calls: Sequence[HttpCall], event_lines: Iterable[str],
                 unservable: Mapping[int, str], unobservable: Mapping[int, str],
                 notes: Sequence[str] = ()) -> HttpReport:
    """unservable: calls the replay could not offer (listed unused, with why);
    unobservable: calls emulated where the server cannot see them (dns, refused on a closed port), noted only."""
    by_seq = {c.seq: c for c in calls}
    events = _events(event_lines)
    served = tuple(_served(e) for e in events if e.get("event") == "served" and isinstance(e.get("seq"), int))
    unmatched = tuple(_unmatched(e, by_seq) for e in events if e.get("event") == "unmatched")
    done = {s.seq for s in served}
    unused = tuple(UnusedCall(c.seq, c.request.method, c.request.url, unservable.get(c.seq, "never requested"))
                   for c in calls if c.seq not in done and c.seq not in unobservable)
    server_notes = tuple(str(e.get("text")) for e in events if e.get("event") == "note")
    extra = tuple(f"#{seq}: {why}" for seq, why in sorted(unobservable.items()))
    return HttpReport(served, unmatched, unused, tuple(notes) + extra + server_notes)
