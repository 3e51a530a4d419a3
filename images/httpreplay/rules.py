"""The matching rules beyond exact equality: names left out, values that look volatile, headers.

Pure standard library, Python >= 3.9 (the sidecar's python3). matcher.py applies them.

- Ignored names (`--http-ignore NAME`, plus IGNORED_ALWAYS, compared without case) are left
  out of matching wherever they appear: a query parameter, a form field or a JSON member of
  the body (at any depth), a request header. As vcrpy's `match_on` and Polly's
  `matchRequestsBy` allow.
- A volatile value is one a program makes anew on every run: a Unix time (seconds to
  nanoseconds, 2001-2100), an ISO 8601 time, a UUID, a random fraction, a hex or
  base64-like token. A request that matches no recorded call, but differs from unused ones
  only in such values (each side's value of the same kind, in the same query parameter,
  form field or JSON member), is served the first of them in recorded order, and the
  report names the values.
- Headers never decide whether a request matches (vcrpy's default: clients add their own,
  and the recorder redacted some); among several unused recorded calls that match, the one
  whose recorded headers agree best with the request's is served first.
"""
from __future__ import annotations

import json
import re
from typing import Any, FrozenSet, Iterable, List, Optional, Sequence, Tuple

Pairs = Tuple[Tuple[str, str], ...]
# Cache-busters by convention (jQuery's `_`, and the usual spellings): never part of what is asked.
IGNORED_ALWAYS = frozenset({"_", "cachebuster", "cachebust", "cache_buster", "nocache", "_ts", "_t"})
REDACTED = "[redacted]"

_KINDS: Tuple[Tuple[str, "re.Pattern[str]"], ...] = (
    ("unix time", re.compile(r"[0-9]{9,10}(\.[0-9]{1,9})?|[0-9]{12,13}|[0-9]{15,16}|[0-9]{18,19}")),
    ("time", re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?"
                        r"(Z|[+-][0-9]{2}:?[0-9]{2})?)?")),
    ("uuid", re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")),
    ("random fraction", re.compile(r"0\.[0-9]{6,}")),
    ("hex token", re.compile(r"[0-9a-fA-F]{8,}")),
    ("token", re.compile(r"(?=[A-Za-z0-9_-]*[0-9])(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{16,}={0,2}")),
)
_FORM = re.compile(r"[^=&\s]+=[^&\s]*(&[^=&\s]+=[^&\s]*)*")


class Rules:
    """The rules of one replay: the names it ignores (lower case)."""

    def __init__(self, ignore: Iterable[str] = ()) -> None:
        self.ignore: FrozenSet[str] = frozenset(n.lower() for n in ignore) | IGNORED_ALWAYS

    def kept(self, pairs: Sequence[Tuple[str, str]]) -> Pairs:
        return tuple(p for p in pairs if p[0].lower() not in self.ignore)

    def body(self, data: bytes) -> Any:
        """What body comparison sees: JSON without ignored members, form fields without ignored
        ones (sorted), else the bytes."""
        parsed = _json(data)
        if parsed is not None:
            return _strip_json(parsed, self.ignore)
        form = _form(data)
        if form is not None:
            return ("form", tuple(sorted(self.kept(form))))
        return data

    def header_score(self, asked: Sequence[Tuple[str, str]], recorded: Sequence[Tuple[str, str]]) -> int:
        """How well a request's headers agree with a recorded call's: +1 per recorded header the
        request repeats, -1 per one it does not (ignored names and redacted values left out)."""
        have = {(k.lower(), v) for k, v in asked}
        score = 0
        for name, value in recorded:
            if name.lower() in self.ignore or value == REDACTED:
                continue
            score += 1 if (name.lower(), value) in have else -1
        return score


def volatile_kind(a: str, b: str) -> Optional[str]:
    """The kind of volatile value both are (two different values of one kind), else None."""
    if a == b:
        return None
    for kind, pattern in _KINDS:
        if pattern.fullmatch(a) and pattern.fullmatch(b):
            if kind == "unix time" and not (_plausible_time(a) and _plausible_time(b)
                                            and len(a.split(".")[0]) == len(b.split(".")[0])):
                return None
            if kind in ("hex token", "token") and len(a) != len(b):
                return None
            return kind
    return None


def _plausible_time(text: str) -> bool:
    digits = text.split(".")[0]
    seconds = int(digits) / 10 ** max(0, len(digits) - 10)
    return 978307200 <= seconds <= 4102444800  # 2001-01-01 .. 2100-01-01


def volatile_pairs(asked: Pairs, recorded: Pairs, where: str) -> Optional[List[str]]:
    """Where two sets of name=value pairs differ only in volatile values: one line per value
    ("query ts: 1700000000 (recorded 1690000000, unix time)"); None when they differ otherwise."""
    if sorted(asked) == sorted(recorded):
        return []
    if sorted(k for k, _ in asked) != sorted(k for k, _ in recorded):
        return None
    mine, theirs = sorted(asked), sorted(recorded)
    out: List[str] = []
    for (name, value), (_, was) in zip(mine, theirs):
        if value == was:
            continue
        kind = volatile_kind(value, was)
        if kind is None:
            return None
        out.append(f"{where} {name}: {_cut(value)} (recorded {_cut(was)}, {kind})")
    return out


def volatile_body(asked: Any, recorded: Any) -> Optional[List[str]]:
    """Two bodies as Rules.body sees them: the volatile values they differ in, or None."""
    if asked == recorded:
        return []
    if isinstance(asked, tuple) and isinstance(recorded, tuple) and asked[:1] == recorded[:1] == ("form",):
        return volatile_pairs(asked[1], recorded[1], "form")
    if isinstance(asked, bytes) or isinstance(recorded, bytes):
        return None
    out: List[str] = []
    return out if _json_volatile(asked, recorded, "body", out) else None


def _json_volatile(a: Any, b: Any, path: str, out: List[str]) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return set(a) == set(b) and all(_json_volatile(a[k], b[k], f"{path}.{k}", out) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_volatile(x, y, f"{path}[{i}]", out) for i, (x, y) in enumerate(zip(a, b)))
    if a == b and type(a) is type(b):
        return True
    if isinstance(a, (str, int, float)) and isinstance(b, (str, int, float)) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        kind = volatile_kind(str(a), str(b))
        if kind is not None:
            out.append(f"{path}: {_cut(str(a))} (recorded {_cut(str(b))}, {kind})")
            return True
    return False


def _json(data: bytes) -> Any:
    if not data or data[:1] not in b"{[":
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


def _strip_json(value: Any, ignore: FrozenSet[str]) -> Any:
    if isinstance(value, dict):
        return {k: _strip_json(v, ignore) for k, v in value.items() if k.lower() not in ignore}
    if isinstance(value, list):
        return [_strip_json(v, ignore) for v in value]
    return value


def _form(data: bytes) -> Optional[Pairs]:
    from urllib.parse import parse_qsl

    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return None
    if not _FORM.fullmatch(text):
        return None
    return tuple(parse_qsl(text, keep_blank_values=True))


def _cut(text: str) -> str:
    return text if len(text) <= 40 else text[:39] + "…"
