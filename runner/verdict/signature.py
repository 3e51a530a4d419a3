"""The failure signature: which lines of a failed run's output identify the failure, and a
short stable hash of them.

It must be computed exactly as twin computes it (formats/README, "The failure signature",
plus the two host-warning noise lines of twin's latest normalize.ts), because a replay is
judged by comparing its signature with the one twin recorded. So the patterns below keep
twin's JavaScript semantics on purpose, quirks included:

* `\\b`, `\\w`, `\\d` and case folding are ASCII-only (JS regexes without the `u` flag),
  hence `re.ASCII` everywhere.
* `\\s` is JavaScript's whitespace set, which is not Python's (`\\ufeff` is JS whitespace,
  `\\x1c`-`\\x1f` and `\\x85` are not), hence `_WS`.
* A line is what lies between `\\n`s; a `\\r` anywhere (also a CRLF ending) keeps only what
  follows it, as twin does.

Every pattern is linear in the length of its input (no nested quantifiers over the same
characters), and `compute` looks only at the tail window twin records, so hostile output
cannot make this slow.
"""
from __future__ import annotations

import hashlib
import re
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

# twin fingerprints the last 200 lines (at most 64,000 characters) of the output; a replay
# must fingerprint the same window or long outputs would pick different key lines.
TAIL_LINES = 200
TAIL_CHARS = 64_000
MAX_KEY_LINES = 12
FALLBACK_LINES = 8
HASH_CHARS = 16

_WS_CHARS = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_WS = f"[{_WS_CHARS}]"
_A = re.ASCII
_AI = re.ASCII | re.IGNORECASE

# CSI sequences (colours, cursor moves) and OSC sequences (titles, hyperlinks).
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")

# Runtime-internal stack frames and Node's version trailer differ between Node releases
# without saying anything about the failure. twin's latest normalize.ts also drops two host
# warnings that describe the machine, not the failure: pnpm's unreadable ~/.npmrc, and a
# shell's missing locale, which a bare replay container prints where the reporter's machine
# did not. Tested on the raw line.
_NOISE_LINE = re.compile(
    rf"node:internal/|^{_WS}*at (?:process\.processTicksAndRejections|async Promise\.all)"
    r"|^Node\.js v\d"
    rf"|^[^{_WS_CHARS}]*{_WS}*WARN{_WS}+Issue while reading [^\r\u2028\u2029]*\.npmrc"
    r"|setlocale: LC_\w+: cannot change locale",
    _A,
)

_ISO_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?", _A
)
_CLOCK_TIME = re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b", _A)
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", _AI)
_HEX = re.compile(r"\b0x[0-9a-f]+\b", _AI)
# A hash has at least one letter: all-digit runs are numbers (an asserted timestamp) and stay.
_HASH = re.compile(r"\b(?=[0-9]*[a-f])[0-9a-f]{12,}\b", _AI)
# Absolute paths (two or more segments, also ~/ and C:\) differ per checkout; relative ones
# do not and stay. The lookbehind keeps `a/b/c` and `x.y/z` (relative) out.
_ABS_PATH = re.compile(r"(?<![\w.-])(?:~|[A-Za-z]:)?(?:[/\\][\w.@+~-]+){2,}", _A)
_PATH_SEP = re.compile(r"[/\\]")
# twin's `\b` before `[::1]` needs a word character before the bracket, so a bare `[::1]:80`
# is left alone there; kept identical so both sides agree.
_LOCAL_PORT = re.compile(r"\b(localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\]):\d+", _A)
_PID = re.compile(rf"\bpid[:= ]{_WS}*\d+", _AI)
_DURATION = re.compile(
    rf"\b\d+(?:\.\d+)?{_WS}?(?:ns|µs|us|ms|s|sec|secs|seconds?|m|min|mins|minutes?|h)\b", _A
)
# Runners print "(12 ms)" only for slow tests, so the whole group is cosmetic. The lookbehind
# starts a match only at the first blank of a run: same result as `\s*\(...\)`, but linear
# on a line of a million blanks.
_PAREN_DURATION = re.compile(rf"(?<!{_WS}){_WS}*\(<duration>\)")
_WS_RUN = re.compile(rf"{_WS}+")

_Replacement = str | Callable[[re.Match[str]], str]
# A rule's third member is a cheap substring test that skips a regex that cannot match.
_Rule = tuple[re.Pattern[str], _Replacement, Callable[[str], bool]]


def _has_digit(line: str) -> bool:
    return any(c in line for c in "0123456789")


def _last_segment(match: re.Match[str]) -> str:
    return "<path>/" + _PATH_SEP.split(match.group(0))[-1]


# Order matters: a broader pattern must not swallow a narrower one (a date-time before a
# clock time, a UUID before a hash, paths before ports).
_RULES: tuple[_Rule, ...] = (
    (_ISO_TIME, "<time>", lambda s: "-" in s),
    (_CLOCK_TIME, "<time>", lambda s: ":" in s),
    (_UUID, "<uuid>", lambda s: "-" in s),
    (_HEX, "<hex>", lambda s: "0x" in s or "0X" in s),
    (_HASH, "<hash>", lambda s: True),
    (_ABS_PATH, _last_segment, lambda s: "/" in s or "\\" in s),
    (_LOCAL_PORT, r"\1:<port>", lambda s: ":" in s),
    (_PID, "pid <n>", lambda s: "pid" in s.lower()),
    (_DURATION, "<duration>", _has_digit),
    (_PAREN_DURATION, "", lambda s: "(<duration>)" in s),
)

_KEYWORDS = re.compile(
    r"\b(?:errors?|fail(?:ed|ure|ing)?|exception|traceback|panic(?:ked)?|assert(?:ion)?"
    r"|expected|received|cannot|unable|not found|undefined|segmentation fault|fatal"
    r"|abort(?:ed)?)\b",
    _AI,
)
_MARKS = re.compile("[✗✕×✖]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class FailureSignature:
    key_lines: tuple[str, ...]
    signature: str


def strip_ansi(text: str) -> str:
    """Text without terminal escapes (colours, cursor moves, titles, hyperlinks)."""
    return _ANSI.sub("", text)


def normalize_line(line: str) -> str:
    """One line as it would read on any machine: no escapes, no volatile tokens."""
    line = _ANSI.sub("", line)
    # Progress bars redraw with \r; only the final state of the line is meaningful.
    line = line[line.rfind("\r") + 1 :]
    for pattern, replacement, may_match in _RULES:
        if may_match(line):
            line = pattern.sub(replacement, line)
    # After folding, every blank run is one space, so trimming spaces is JS's trim().
    return _WS_RUN.sub(" ", line).strip(" ")


def _normalized(output: str) -> Iterator[str]:
    for raw in output.split("\n"):
        if not _NOISE_LINE.search(raw):
            line = normalize_line(raw)
            if line:
                yield line


def numbered(output: str) -> Iterator[tuple[int, str]]:
    """Each normalised, non-empty line with its 1-based line number, runtime noise left out
    (a report names where two outputs differ)."""
    for n, raw in enumerate(output.split("\n"), 1):
        if not _NOISE_LINE.search(raw):
            line = normalize_line(raw)
            if line:
                yield n, line


def normalize(output: str) -> list[str]:
    """The output's normalised, non-empty lines, runtime noise left out."""
    return list(_normalized(output))


def is_key_line(line: str) -> bool:
    """Whether a normalised line looks like part of the failure."""
    # Package managers' deprecation warnings mention "fail" or "error" without failing.
    if line.startswith("WARN"):
        return False
    return bool(_KEYWORDS.search(line) or _MARKS.search(line))


def key_lines(output: str) -> tuple[str, ...]:
    """The first lines that look like an error; the last lines when none does."""
    found: list[str] = []
    last: deque[str] = deque(maxlen=FALLBACK_LINES)
    # Lazy: a long output with an early failure stops being normalised after 12 key lines.
    for line in _normalized(output):
        if is_key_line(line):
            found.append(line)
            if len(found) == MAX_KEY_LINES:
                break
        elif not found:
            last.append(line)
    return tuple(found) if found else tuple(last)


def digest(key_lines: Sequence[str]) -> str:
    """The hash part of a signature: 16 hex characters of SHA-256 of the key lines joined by `\\n`.
    The one place it is computed (the twin reader checks a recorded signature with it too)."""
    # JavaScript encodes a lone surrogate (possible in JSON text) as U+FFFD.
    text = _LONE_SURROGATE.sub("\ufffd", "\n".join(key_lines))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_CHARS]


def signature(key_lines: Sequence[str], exit_code: int | None, signal: str | None) -> str:
    """`exit<code>:` (or `<SIGNAL>:`) and 16 hex characters of SHA-256 of the key lines."""
    # twin interpolates a null exit code as "null"; keep it so both sides agree.
    prefix = signal if signal else f"exit{'null' if exit_code is None else exit_code}"
    return f"{prefix}:{digest(key_lines)}"


def output_tail(output: str) -> str:
    """The window twin fingerprints: the last 200 lines, at most 64,000 characters."""
    text = output[-TAIL_CHARS:]
    # A final newline ends the last line; it does not start another one.
    body = text[:-1] if text.endswith("\n") else text
    cut = len(body)
    for _ in range(TAIL_LINES):
        cut = body.rfind("\n", 0, cut)
        if cut < 0:
            return text
    return text[cut + 1 :]


def last_lines(output: str, window: str, count: int = 40) -> str:
    """The last `count` lines of an output (str.splitlines' lines), read from its window
    (output_tail) when that holds more than `count` of them: a long output is split once less."""
    lines = window.splitlines()
    if len(lines) <= count and len(window) < len(output):
        lines = output.splitlines()
    return "\n".join(lines[-count:])


def compute(output: str, exit_code: int | None, signal: str | None = None) -> FailureSignature:
    """The signature of a failed run from its interleaved output (raw or an `outputTail`)."""
    return of_window(output_tail(output), exit_code, signal)


def of_window(window: str, exit_code: int | None, signal: str | None = None) -> FailureSignature:
    """The signature of an output already cut to its window (output_tail): a replay reads the
    window for the failed tests too, and cuts it once."""
    lines = key_lines(window)
    return FailureSignature(key_lines=lines, signature=signature(lines, exit_code, signal))
