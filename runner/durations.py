"""Durations as people write them: `90s`, `15m`, `1h`, `1h30m`; a bare number is seconds.

One parser for every option that takes a duration (run, bisect, farm), so `--timeout`
means the same everywhere. A bare number keeps meaning seconds, as it always did:
scripts written before units existed keep their meaning; twin's --timeout counts minutes,
so a bare number gets a note saying how it was read (`bare_number_note`).
"""
from __future__ import annotations

import re

_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_WHOLE = re.compile(r"(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+")

HELP = "90s, 15m, 1h, 1h30m; a bare number is seconds"


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
        raise ValueError(f"{text!r} is not a duration ({HELP})")
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
