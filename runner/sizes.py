"""Sizes as people write them: `20G`, `500M`, `1.5GiB`, `100k`; a bare number is bytes.

One parser for every option that takes a size (`gc --max-size`). The units are binary
(K = 1024 bytes), as Docker reads `--memory 4g`; `GB` and `GiB` both mean 1024³.
"""
from __future__ import annotations

import re

_UNIT = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*(?:([kmgt])(?:i?b)?|b)?")

HELP = "20G, 500M, 1.5G, 100K (binary units); a bare number is bytes"


def parse_size(text: str | int) -> int:
    """Bytes; ValueError (naming the accepted forms) for anything else."""
    if isinstance(text, int):
        return text
    raw = text.strip().lower()
    m = _SIZE.fullmatch(raw)
    if m is None:
        raise ValueError(f"{text!r} is not a size ({HELP})")
    return int(float(m.group(1)) * _UNIT[m.group(2) or ""])


def format_size(n: float) -> str:
    """1536 -> 1.5K, 20 << 30 -> 20G: the shortest spelling parse_size reads back (to 0.1)."""
    for unit in ("B", "K", "M", "G"):
        if abs(n) < 1024:
            return f"{n:.0f}B" if unit == "B" else f"{n:.1f}".rstrip("0").rstrip(".") + unit
        n /= 1024
    return f"{n:.1f}".rstrip("0").rstrip(".") + "T"
