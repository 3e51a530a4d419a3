"""Version arithmetic shared by the providers."""
from __future__ import annotations

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


def nearest(recorded: str, available: Iterable[str]) -> str | None:
    """The recorded version when offered; else the closest release of the same major.minor,
    then of the same major (the newest not above the recorded one first)."""
    avail = [v for v in available if is_release(v)]
    if recorded in avail:
        return recorded
    want = vkey(recorded)
    if not want:
        return None
    for width in (2, 1):
        same = [v for v in avail if vkey(v)[:width] == want[:width]]
        if same:
            below = [v for v in same if vkey(v) <= want]
            return max(below, key=vkey) if below else min(same, key=vkey)
    return None
