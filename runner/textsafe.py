"""Showing text a capsule controls: control characters escaped, huge values cut.

A capsule comes from someone else. Whatever of it reaches a terminal must not
drive that terminal (an ESC in argv could clear the screen or retitle the window),
must be encodable (a lone UTF-16 surrogate from a ``"\\ud800"`` escape has no UTF-8
form and makes printing raise), and must not drown an error line (a 2 MB version
string echoed whole).
"""
from __future__ import annotations

import re

ELLIPSIS = "…"
# C0 controls (tab and newline too: an error is one line), DEL, C1 controls (U+0085,
# NEL, among them), lone surrogates, Unicode's line and paragraph separators (U+2028,
# U+2029: a terminal or an editor may break the line there), and the bidirectional
# overrides that make text read differently from how it is stored ("Trojan Source").
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# The same, minus tab and newline: for multi-line report values (an output tail).
_UNSAFE_KEEP_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def escaped(text: str, keep_lines: bool = False) -> str:
    """``text`` with every unsafe character written as a ``\\xNN`` / ``\\uNNNN`` escape."""
    return (_UNSAFE_KEEP_LINES if keep_lines else _UNSAFE).sub(_escape, text)


def cut(text: str, limit: int) -> str:
    """At most ``limit`` characters: the start of ``text`` and an ellipsis when it is longer."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + ELLIPSIS


# A report or table cell shows at most this much of one value (rich lays out long text
# slowly: a 2 MB cell takes seconds); --json has it all.
VIEW_CHARS = 4_000


def cell(text: str, max_chars: int = VIEW_CHARS) -> str:
    """A value for one table cell: every unsafe character escaped, newlines included, and cut."""
    if len(text) <= max_chars:
        return escaped(text)
    return f"{escaped(text[:max_chars])}{ELLIPSIS} (cut: {len(text):,} characters in all)"


def shown(value: object, limit: int = 80) -> str:
    """A value fit for one line of output: escaped, then cut to ``limit`` characters.

    Only the first ``limit + 1`` characters are escaped (escaping never shortens
    text), so a 50 MB string costs no more than a short one.
    """
    text = value if isinstance(value, str) else _repr(value)
    return cut(escaped(text[: limit + 1]), limit)


def quoted(value: object, limit: int = 60) -> str:
    """``shown`` in double quotes, for naming a value inside a sentence."""
    return '"' + shown(value, limit) + '"'


def _repr(value: object) -> str:
    try:
        return repr(value)
    except ValueError:  # an int of thousands of digits: Python refuses to convert it (a DoS guard)
        return f"<an integer of about {int(value.bit_length() * 0.30103)} digits>"  # type: ignore[attr-defined]
