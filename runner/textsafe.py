"""The one output filter for text a capsule controls, by where it goes. Every writer uses it.

A capsule comes from someone else. Whatever of it reaches a terminal must not
drive that terminal (an ESC in argv could clear the screen or retitle the window),
must be encodable (a lone UTF-16 surrogate from a ``"\\ud800"`` escape has no UTF-8
form and makes printing raise), and must not drown an error line (a 2 MB version
string echoed whole). The rules, one per kind of output (docs/security.md lists them):

- terminal (`escaped`, `shown`, `quoted`, `cell`): every control, C0 and C1, DEL, lone
  surrogates, U+2028/U+2029 and the bidirectional controls written as `\\xNN`/`\\uNNNN`;
  a shell line (`shell_word`) quotes such a word as bash's `$'...'`, so it still runs as recorded;
- Markdown (`md_code`, `md_block`, `md_text`): capsule text only in a code span or a fenced
  block (never markup: no link, image, HTML or heading gets through), prose with every
  punctuation mark Markdown reads backslash-escaped; controls escaped as for a terminal (a job log
  shows the same text);
- HTML (`html_plain`): controls removed, for attributes and `<title>` (jinja2 escapes the rest);
- JSON (`json_text`): C1 controls, DEL, bidirectional controls, U+2028/U+2029 and lone
  surrogates as `\\uNNNN` escapes (json escapes C0 itself).
"""
from __future__ import annotations

import json
import re
import shlex

ELLIPSIS = "…"
# C0 controls (tab and newline too: an error is one line), DEL, C1 controls (U+0085,
# NEL, among them), lone surrogates, Unicode's line and paragraph separators (U+2028,
# U+2029: a terminal or an editor may break the line there), and the bidirectional
# overrides that make text read differently from how it is stored ("Trojan Source").
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# The same, minus tab and newline: for multi-line report values (an output tail).
_UNSAFE_KEEP_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# What JSON text may not hold raw: json.dumps(ensure_ascii=False) escapes only C0.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\ud800-\udfff\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# The ASCII punctuation Markdown may read as markup (a link's `[]`, an image's `!`, HTML's `<`
# and `&`, emphasis, a list's `-`/`+`/`1.`, an autolink's `:` and `.`): each backslash-escaped.
_PUNCTUATION = re.compile(r"""([!#$&*+\-.:<>@\[\\\]^_`{|}~])""")


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


# -- shell lines --------------------------------------------------------------------


def shell_word(word: str) -> str:
    """`shlex.quote`, except that a word holding a control is written as bash's `$'...'` with
    escapes: the line is safe to show on a terminal and still passes the same bytes when run."""
    if not _UNSAFE.search(word):
        return shlex.quote(word)
    return "$'" + "".join(_bash_char(c) for c in word) + "'"


def _bash_char(c: str) -> str:
    if c in "\\'":
        return "\\" + c
    if _UNSAFE.match(c):
        return "".join(f"\\x{b:02x}" for b in c.encode("utf-8", "surrogatepass"))
    return c


# -- Markdown ---------------------------------------------------------------------


def md_code(value: object, table: bool = False, limit: int = VIEW_CHARS) -> str:
    """Capsule text as one inline code span: controls escaped, newlines too, and a fence longer
    than any backtick run inside. `table`: a pipe escaped as GFM tables need, even in code."""
    text = cut(escaped(str(value)[: limit + 1]), limit)
    if table:
        text = text.replace("|", "\\|")
    if not text:
        return "` `"
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_block(lines: object) -> str:
    """Capsule lines as a fenced block longer than any backtick run inside, controls escaped."""
    text = "\n".join(escaped(str(line)) for line in (lines if isinstance(lines, (list, tuple)) else [lines]))
    fence = "`" * max(3, max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence}text\n{text}\n{fence}"


def md_text(value: object, limit: int = VIEW_CHARS) -> str:
    """Prose that may quote a capsule, as Markdown that renders as it reads: controls and newlines
    escaped, every punctuation mark Markdown reads backslash-escaped (no link, image, HTML, emphasis)."""
    return _PUNCTUATION.sub(r"\\\1", cut(escaped(str(value)[: limit + 1]), limit))


# -- HTML and JSON ----------------------------------------------------------------


def html_plain(value: object) -> str:
    """For an HTML attribute or `<title>`: every control removed (jinja2's autoescape does the rest)."""
    return _UNSAFE.sub("", str(value))


def json_text(data: object, indent: int | None = None) -> str:
    """JSON of `data` that no capsule string can make a terminal, an editor or a JavaScript
    parser read differently: what json leaves raw (C1, DEL, bidi, U+2028/9, lone surrogates) escaped."""
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
