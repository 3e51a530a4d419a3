"""Units replay reads and writes: durations (like 90s, 15m, 1h30m) and sizes (like 512m, 4g).

Durations as people write them: `90s`, `15m`, `1h`, `1h30m`; a bare number is seconds.

One parser for every option that takes a duration (run, bisect, farm), so `--timeout`
means the same everywhere. A bare number keeps meaning seconds, as it always did:
scripts written before units existed keep their meaning; twin's --timeout counts minutes,
so a bare number gets a note saying how it was read (`bare_number_note`).

Sizes as people write them: `20G`, `500M`, `1.5GiB`, `100k`; a bare number is bytes.

One parser for every option that takes a size (`gc --max-size`). The units are binary
(K = 1024 bytes), as Docker reads `--memory 4g`; `GB` and `GiB` both mean 1024³.
"""
from __future__ import annotations

import re

_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_WHOLE = re.compile(r"(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+")

DURATION_HELP = "90s, 15m, 1h, 1h30m; a bare number is seconds"


def parse_duration(text: str | float | int) -> float:
    """Seconds; ValueError (naming the accepted forms) for anything else."""
    if isinstance(text, (int, float)):  # a default typer passes through unchanged
        return float(text)
    raw = text.strip().lower().replace(" ", "")
    try:
        return float(raw)
    except ValueError:
        pass
    if not raw or not _WHOLE.fullmatch(raw):
        raise ValueError(f"{text!r} is not a duration ({DURATION_HELP})")
    return sum(float(n) * _UNIT_S[unit] for n, unit in _PART.findall(raw))


def bare_number_note(text: str | float | int, option: str = "--timeout") -> str | None:
    """For a bare number (seconds here, minutes in twin): the line that says how it was read."""
    if not isinstance(text, str):
        return None  # a default, not something typed
    raw = text.strip()
    try:
        seconds = float(raw)
    except ValueError:
        return None
    return f"{option} {raw} read as {seconds:g} s; twin's minutes are {option} {raw}m"


def format_duration(seconds: float) -> str:
    """The shortest exact spelling: 900 -> 15m, 5400 -> 1h30m, 2.5 -> 2.5s."""
    if seconds != int(seconds) or seconds < 60:
        return f"{seconds:g}s"
    left, parts = int(seconds), []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if left >= size:
            parts.append(f"{left // size}{unit}")
            left %= size
    return "".join(parts)


# --- sizes --------------------------------------------------------------------------------

_UNIT = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*(?:([kmgt])(?:i?b)?|b)?")

SIZE_HELP = "20G, 500M, 1.5G, 100K (binary units); a bare number is bytes"


def parse_size(text: str | int) -> int:
    """Bytes; ValueError (naming the accepted forms) for anything else."""
    if isinstance(text, int):
        return text
    raw = text.strip().lower()
    m = _SIZE.fullmatch(raw)
    if m is None:
        raise ValueError(f"{text!r} is not a size ({SIZE_HELP})")
    return int(float(m.group(1)) * _UNIT[m.group(2) or ""])


def format_size(n: float) -> str:
    """1536 -> 1.5K, 20 << 30 -> 20G: the shortest spelling parse_size reads back (to 0.1)."""
    for unit in ("B", "K", "M", "G"):
        if abs(n) < 1024:
            return f"{n:.0f}B" if unit == "B" else f"{n:.1f}".rstrip("0").rstrip(".") + unit
        n /= 1024
    return f"{n:.1f}".rstrip("0").rstrip(".") + "T"
