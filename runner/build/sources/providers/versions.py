"""Version arithmetic shared by the providers."""
from __future__ import annotations

import re
from collections.abc import Iterable


def vkey(version: str) -> tuple[int, ...]:
    out = []
    for part in version.split("."):
        # ASCII digits only: "³".isdigit() holds, yet int("³") raises.
        digits = "".join(ch for ch in part[:9] if "0" <= ch <= "9") if "0" <= part[:1] <= "9" else ""
        if not digits:
            break
        out.append(int(digits))
    return tuple(out)


def is_release(version: str) -> bool:
    return all(p.isascii() and p.isdigit() for p in version.split("."))


def is_line(version: str) -> bool:
    """A release line rather than a release: "22", "22.x", "3.12" name every release under them."""
    parts = version.split(".")
    while parts and parts[-1].lower() in ("x", "*"):
        parts.pop()
    return 0 < len(parts) < 3 and all(p.isascii() and p.isdigit() for p in parts)


def newest_of_line(line: str, available: Iterable[str]) -> str | None:
    """The newest release whose leading parts are the line's ("22" -> the newest 22.x.y)."""
    want = vkey(line)
    same = [v for v in available if is_release(v) and vkey(v)[:len(want)] == want]
    return max(same, key=vkey) if want and same else None


def nearest(recorded: str, available: Iterable[str]) -> str | None:
    """The recorded version when offered; a line ("22", "3.12") not offered as a release gives its
    newest release; else
    the closest release of the same major.minor, then of the same major (the newest not above
    the recorded one first)."""
    avail = [v for v in available if is_release(v)]
    if recorded in avail:  # pip's "23.2" is a release of its own
        return recorded
    if is_line(recorded):
        return newest_of_line(recorded, avail)
    want = vkey(recorded)
    if not want:
        return None
    for width in (2, 1):
        same = [v for v in avail if vkey(v)[:width] == want[:width]]
        if same:
            below = [v for v in same if vkey(v) <= want]
            return max(below, key=vkey) if below else min(same, key=vkey)
    return None


# -- npm's semver ranges, for release versions (node-semver's desugaring) -------------------------
# A bound is (major, minor, patch, 1 for a release, 0 for a prerelease): "<2.0.0-0" is below every
# 2.0.0 release, and a release version is never equal to a prerelease bound.
Bound = tuple[int, int, int, int]
_NUM = r"0|[1-9][0-9]*|[xX*]"
_PARTIAL = rf"v?=?({_NUM})(?:\.({_NUM})(?:\.({_NUM})(?:-([0-9A-Za-z.-]+))?)?)?(?:\+[0-9A-Za-z.-]+)?"
_OPS = r"<=|>=|<|>|=|~>|~|\^"
_COMPARATOR = re.compile(rf"({_OPS})?{_PARTIAL}", re.ASCII)
_HYPHEN = re.compile(r"(\S+)\s+-\s+(\S+)", re.ASCII)
_NONE: list[tuple[str, Bound]] = [("<", (0, 0, 0, 0))]
Partial = tuple[int | None, int | None, int | None, str]  # None: a wildcard ("1.x"), or left out ("1")


def satisfies(version: str, spec: str) -> bool | None:
    """Whether a release version ("22.1.0") satisfies an npm range (">=18", "^14.17.0 || >=16",
    "1.2.x", "1 - 2"), by node-semver's rules; None when the range is not one read here."""
    have = vkey(version)
    if len(have) != 3 or not is_release(version):
        return None
    point: Bound = (have[0], have[1], have[2], 1)
    for alternative in spec.split("||"):
        comparators = _range(alternative)
        if comparators is None:
            return None
        if all(_holds(point, op, bound) for op, bound in comparators):
            return True
    return False


def _holds(v: Bound, op: str, b: Bound) -> bool:
    return {"<": v < b, "<=": v <= b, ">": v > b, ">=": v >= b, "=": v == b}[op]


def _range(text: str) -> list[tuple[str, Bound]] | None:
    text = re.sub(rf"({_OPS})\s+", r"\1", text.strip())  # ">= 1.2" is ">=1.2"
    hyphen = _HYPHEN.fullmatch(text)
    if hyphen:
        low, high = _partial(hyphen.group(1)), _partial(hyphen.group(2))
        return None if low is None or high is None else _from(low) + _to(high)
    out: list[tuple[str, Bound]] = []
    for token in text.split():
        m = _COMPARATOR.fullmatch(token)
        if m is None:
            return None
        out += _desugar(m.group(1) or "", _partial_of(m.group(2), m.group(3), m.group(4), m.group(5)))
    return out


def _partial(text: str) -> Partial | None:
    m = re.fullmatch(_PARTIAL, text, re.ASCII)
    return None if m is None else _partial_of(*m.groups())


def _partial_of(major: str | None, minor: str | None, patch: str | None, pre: str | None) -> Partial:
    """Everything after the first wildcard is one too ("1.x.3" is "1.x")."""
    nums: list[int | None] = []
    for n in (major, minor, patch):
        nums.append(None if n is None or n in "xX*" or (nums and nums[-1] is None) else int(n))
    return nums[0], nums[1], nums[2], (pre or "") if nums[2] is not None else ""


def _desugar(op: str, p: Partial) -> list[tuple[str, Bound]]:
    major, minor, patch, pre = p
    if major is None:  # "*", "x", "~x": anything; "<*", ">*": nothing
        return _NONE if op in ("<", ">") else []
    low: Bound = (major, minor or 0, patch or 0, 0 if pre else 1)
    if op in ("~", "~>"):
        return [(">=", low), ("<", (major + 1, 0, 0, 0) if minor is None else (major, minor + 1, 0, 0))]
    if op == "^":
        if minor is None or major > 0:
            return [(">=", low), ("<", (major + 1, 0, 0, 0))]
        if patch is None or minor > 0:
            return [(">=", low), ("<", (0, minor + 1, 0, 0))]
        return [(">=", low), ("<", (0, 0, patch + 1, 0))]
    if minor is not None and patch is not None:
        return [(op or "=", low)]
    # an X-range: "1", "1.2", ">1.x", "<=1.2"
    if op in ("", "="):
        return _from(p) + _to(p)
    if op == ">":
        return [(">=", (major + 1, 0, 0, 1) if minor is None else (major, minor + 1, 0, 1))]
    if op == "<=":
        return [("<", (major + 1, 0, 0, 0) if minor is None else (major, minor + 1, 0, 0))]
    return [(op, (major, minor or 0, 0, 0 if op == "<" else 1))]


def _from(p: Partial) -> list[tuple[str, Bound]]:
    major, minor, patch, pre = p
    if major is None:
        return []
    return [(">=", (major, minor or 0, patch or 0, 0 if pre else 1))]


def _to(p: Partial) -> list[tuple[str, Bound]]:
    major, minor, patch, pre = p
    if major is None:
        return []
    if minor is None:
        return [("<", (major + 1, 0, 0, 0))]
    if patch is None:
        return [("<", (major, minor + 1, 0, 0))]
    return [("<=", (major, minor, patch, 0 if pre else 1))]
