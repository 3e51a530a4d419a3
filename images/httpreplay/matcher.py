"""Which recorded call answers a request; when none does, the nearest one and why.

Pure standard library, Python >= 3.9 (the sidecar runs whatever python3 its Debian
base ships). The replay server imports it; the unit tests import it directly.

Matching follows vcrpy's matchers: small named functions, each returning None when
its part agrees and a short reason when it does not. A request matches a recorded
call when method, scheme, host, port, path and query agree, then the body, under the
replay's rules (rules.py): ignored names are left out, and a request that differs only
in volatile values is served too, saying so. Headers never decide a match: secrets were
recorded as ``[redacted]``, connection-scoped headers were not recorded at all, and
clients add their own; among several matching calls they choose which comes first.
Identical requests are served in recorded order.
Calls are indexed by a normalised key (mitmproxy's server playback does the same),
so a long recording costs one dictionary look-up per request.
"""
from __future__ import annotations

import base64
import dataclasses
import difflib
import json
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple
from urllib.parse import parse_qsl, urlsplit

from rules import Rules, volatile_body, volatile_pairs

DEFAULT_PORTS = {"http": 80, "https": 443}
# Failures that happen before a request is sent: a connection attempt consumes them.
CONNECT_ERRORS = frozenset({"dns", "connect-refused", "connect-timeout", "tls"})
ERROR_KINDS = CONNECT_ERRORS | {"reset", "timeout"}


@dataclass(frozen=True)
class Request:
    method: str
    scheme: str
    host: str
    port: int
    path: str
    query: Tuple[Tuple[str, str], ...] = ()
    body: bytes = b""
    headers: Tuple[Tuple[str, str], ...] = ()  # never part of a match (rules.py: they order candidates)

    @property
    def origin(self) -> Tuple[str, str, int]:
        return (self.scheme, self.host, self.port)

    @property
    def url(self) -> str:
        default = DEFAULT_PORTS.get(self.scheme)
        netloc = self.host if self.port == default else f"{self.host}:{self.port}"
        query = "&".join(f"{k}={v}" for k, v in self.query)
        return f"{self.scheme}://{netloc}{self.path}" + (f"?{query}" if query else "")


@dataclass(frozen=True)
class Response:
    status: int
    reason: str
    headers: Tuple[Tuple[str, str], ...]
    body: Optional[bytes]


@dataclass(frozen=True)
class Recorded:
    seq: int
    request: Request
    response: Optional[Response] = None
    error_kind: Optional[str] = None
    error_message: str = ""

    @property
    def connect_error(self) -> bool:
        return self.error_kind in CONNECT_ERRORS


@dataclass(frozen=True)
class Difference:
    part: str
    why: str


def split_target(target: str) -> Tuple[str, Tuple[Tuple[str, str], ...]]:
    """A request target (path?query) as a path and its query pairs."""
    path, _, query = target.partition("?")
    return (path or "/"), tuple(parse_qsl(query, keep_blank_values=True))


def parse_url(method: str, url: str, body: bytes = b"", headers: Sequence[Sequence[str]] = ()) -> Request:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or DEFAULT_PORTS.get(scheme, 0)
    _, query = split_target("?" + parts.query)
    return Request(method.upper(), scheme, (parts.hostname or "").lower(), port, parts.path or "/", query, body,
                   _headers(headers))


def from_target(method: str, scheme: str, host: str, port: int, target: str, body: bytes = b"",
                headers: Sequence[Sequence[str]] = ()) -> Request:
    path, query = split_target(target)
    return Request(method.upper(), scheme, host.lower(), port, path, query, body, _headers(headers))


# -- the matchers ------------------------------------------------------------
def method(r: Request, rec: Request) -> Optional[str]:
    return None if r.method == rec.method else f"{r.method} != recorded {rec.method}"


def scheme(r: Request, rec: Request) -> Optional[str]:
    return None if r.scheme == rec.scheme else f"{r.scheme} != recorded {rec.scheme}"


def host(r: Request, rec: Request) -> Optional[str]:
    return None if r.host == rec.host else f"{r.host} != recorded {rec.host}"


def port(r: Request, rec: Request) -> Optional[str]:
    return None if r.port == rec.port else f"{r.port} != recorded {rec.port}"


def path(r: Request, rec: Request) -> Optional[str]:
    return None if r.path == rec.path else f"{r.path!r} != recorded {rec.path!r}"


def query(r: Request, rec: Request) -> Optional[str]:
    # Parameter order carries no meaning for servers in practice (vcrpy compares sorted too).
    if sorted(r.query) == sorted(rec.query):
        return None
    mine, theirs = set(r.query), set(rec.query)
    extra = sorted(f"{k}={v}" for k, v in mine - theirs)
    missing = sorted(f"{k}={v}" for k, v in theirs - mine)
    return f"extra {extra or '[]'}, missing {missing or '[]'}"


def body(r: Request, rec: Request) -> Optional[str]:
    if r.body == rec.body or _same_json(r.body, rec.body):
        return None
    return f"{len(r.body)} bytes (sha {_short(r.body)}) != recorded {len(rec.body)} bytes (sha {_short(rec.body)})"


MATCHERS: Tuple[Tuple[str, Callable[[Request, Request], Optional[str]]], ...] = (
    ("method", method), ("scheme", scheme), ("host", host), ("port", port),
    ("path", path), ("query", query), ("body", body),
)


def differences(r: Request, rec: Request, rules: Optional[Rules] = None) -> Tuple[Difference, ...]:
    """What differs, part by part; under `rules`, ignored names are no difference."""
    if rules is not None:
        r, rec = _kept(r, rules), _kept(rec, rules)
    out = []
    for name, fn in MATCHERS:
        why = fn(r, rec)
        if name == "body" and rules is not None and rules.body(r.body) == rules.body(rec.body):
            why = None
        if why is not None:
            out.append(Difference(name, why))
    return tuple(out)


def _kept(r: Request, rules: Rules) -> Request:
    """The request without its ignored query parameters."""
    return dataclasses.replace(r, query=rules.kept(r.query))


def _same_json(a: bytes, b: bytes) -> bool:
    """Key order and spacing of a JSON body vary between runtimes, not its meaning."""
    if not a or not b or a[:1] not in b"{[" or b[:1] not in b"{[":
        return False
    try:
        return bool(json.loads(a) == json.loads(b))
    except ValueError:
        return False


def _alike(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio()


def _short(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()[:12]


def _key(r: Request) -> Tuple[Any, ...]:
    return (r.method, r.scheme, r.host, r.port, r.path, tuple(sorted(r.query)))


# -- the recorded calls, consumed in order -----------------------------------
class Matcher:
    """Thread-safe: the server answers each connection on its own thread."""

    def __init__(self, calls: Sequence[Recorded], rules: Optional[Rules] = None) -> None:
        self.rules = rules or Rules()
        self.calls = tuple(sorted(calls, key=lambda c: c.seq))
        self._by_key: Dict[Tuple[Any, ...], List[Recorded]] = {}
        self._by_origin: Dict[Tuple[str, str, int], List[Recorded]] = {}
        # each call's request as matching sees it: ignored query parameters out, the body normalised
        self._seen: Dict[int, Tuple[Request, Any]] = {}
        for call in self.calls:
            kept = _kept(call.request, self.rules)
            self._seen[call.seq] = (kept, self.rules.body(call.request.body))
            self._by_key.setdefault(_key(kept), []).append(call)
            self._by_origin.setdefault(call.request.origin, []).append(call)
        self._used: set = set()
        self._lock = threading.Lock()

    def reset(self) -> None:
        with self._lock:
            self._used.clear()

    def used(self) -> Tuple[int, ...]:
        with self._lock:
            return tuple(sorted(self._used))

    def take(self, r: Request) -> Optional[Recorded]:
        """The unused recorded call this request matches, now used: the first in recorded order
        among those whose recorded headers agree best with the request's."""
        kept, body = _kept(r, self.rules), self.rules.body(r.body)
        with self._lock:
            fits = [c for c in self._by_key.get(_key(kept), ())
                    if c.seq not in self._used and self._seen[c.seq][1] == body]
            if not fits:
                return None
            call = max(fits, key=lambda c: (self.rules.header_score(r.headers, c.request.headers), -c.seq))
            self._used.add(call.seq)
            return call

    def take_volatile(self, r: Request) -> Optional[Tuple[Recorded, List[str]]]:
        """For a request that matched nothing: the first unused recorded call (in recorded order)
        that differs from it only in volatile values, now used, and those values."""
        kept, body = _kept(r, self.rules), self.rules.body(r.body)
        with self._lock:
            for call in self.calls:
                rec, rec_body = self._seen[call.seq]
                if call.seq in self._used or _key(rec)[:5] != _key(kept)[:5]:
                    continue
                found = volatile_pairs(kept.query, rec.query, "query")
                more = volatile_body(body, rec_body) if found is not None else None
                if found is not None and more is not None and found + more:
                    self._used.add(call.seq)
                    return call, found + more
        return None

    def take_connect_error(self, origin: Tuple[str, str, int]) -> Optional[Recorded]:
        """A connection failure recorded next for this origin, now used.

        A connection-level failure (refused, timeout, tls, dns) happened before any
        request was sent, so it is consumed by a connection attempt, and only when it
        is the origin's earliest call not yet served (a failure followed by a retry
        that succeeded replays as exactly that).
        """
        with self._lock:
            pending = [c for c in self._by_origin.get(origin, ()) if c.seq not in self._used]
            if pending and pending[0].connect_error:
                self._used.add(pending[0].seq)
                return pending[0]
        return None

    def dns_error_next(self, host: str, take: bool) -> Optional[Recorded]:
        """The host's earliest call not yet served, when it is a recorded dns failure (used if `take`).

        A lookup comes before any connection, so the resolver consumes it: a host that
        failed to resolve and later answered replays as exactly that, one lookup each."""
        with self._lock:
            pending = [c for c in self.calls if c.request.host == host and c.seq not in self._used]
            if pending and pending[0].error_kind == "dns":
                if take:
                    self._used.add(pending[0].seq)
                return pending[0]
        return None

    def nearest(self, r: Request) -> Tuple[Optional[Recorded], Tuple[Difference, ...]]:
        """The recorded call closest to a request that matched nothing, and how they differ."""
        used = set(self.used())
        best: Optional[Tuple[Tuple[int, int, float, int, int], Recorded, Tuple[Difference, ...]]] = None
        for call in self.calls:
            diffs = differences(r, call.request, self.rules)
            # Fewest differing parts, then the same host, then the most alike URL, then not yet served.
            rank = (len(diffs), int(any(d.part == "host" for d in diffs)), -_alike(r.url, call.request.url),
                    int(call.seq in used), call.seq)
            if best is None or rank < best[0]:
                best = (rank, call, diffs)
        if best is None:
            return None, (Difference("recording", "no calls were recorded"),)
        _, call, diffs = best
        if not diffs:  # everything agrees: it was already served
            count = len(self._by_key.get(_key(_kept(r, self.rules)), ()))
            diffs = (Difference("order", f"all {count} recorded call(s) like this were already served"),)
        return call, diffs


# -- the calls file the replay session writes ---------------------------------
def _b64(value: Optional[str]) -> Optional[bytes]:
    return None if value is None else base64.b64decode(value)


def _headers(items: Sequence[Sequence[str]]) -> Tuple[Tuple[str, str], ...]:
    return tuple((str(k), str(v)) for k, v in items)


def load_rules(doc: Dict[str, Any]) -> Rules:
    """The calls file's matching rules: the names it ignores (--http-ignore)."""
    rules = doc.get("rules") or {}
    return Rules(str(n) for n in rules.get("ignore") or ())


def load_calls(doc: Dict[str, Any]) -> Tuple[Recorded, ...]:
    """Calls from the JSON the session writes (bodies always base64)."""
    calls = []
    for item in doc.get("calls", ()):
        req = parse_url(item["method"], item["url"], _b64(item.get("body")) or b"", item.get("headers") or ())
        resp = item.get("response")
        err = item.get("error") or {}
        calls.append(Recorded(
            seq=int(item["seq"]), request=req,
            response=None if resp is None else Response(
                int(resp["status"]), str(resp.get("reason") or ""), _headers(resp.get("headers") or ()),
                _b64(resp.get("body"))),
            error_kind=err.get("kind"), error_message=str(err.get("message") or ""),
        ))
    return tuple(calls)
