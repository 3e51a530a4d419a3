"""twin's secret rules (rules version 1), applied to what a replay reports.

A capsule is supposed to arrive scrubbed, but the replayed program prints what it
prints: a recorded value that was never scrubbed (an old or hostile recorder), a
token the repository holds. Every attempt's output, as a report, a `-v` stream or
the farm's history keeps it, passes through the same rules twin's capture uses
(its privacy reference lists them; these are written from that description): a match
becomes ``<redacted:RULE-ID>``. Supplied ``--env`` values are replaced before these
run, by value (runner/replay/replayer.py). twin's ``home-path`` rule is left out:
a replay's paths are the container's, not a person's.

No pattern lets two unbounded repetitions meet (each is bounded, or anchored so that
one run is tried once), so scrubbing stays linear in the text: the output is the program's, and a program may print
anything.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

RULES_VERSION = 1
# What a value supplied with --env is shown as (replaced before the rules run, which leave it alone).
SUPPLIED = "[supplied value]"


def marker(rule: str) -> str:
    return f"<redacted:{rule}>"


@dataclass(frozen=True)
class Rule:
    id: str
    pattern: re.Pattern[str]
    # The replacement of one match, or None to leave it alone; default: the whole match becomes the marker.
    replace: Callable[[re.Match[str]], str | None] | None = None


_NAME_WORDS = r"(?:secret|token|passw(?:or)?d|pwd|api[_-]?key|access[_-]?key|private[_-]?key|credential|auth)"


def _assignment(m: re.Match[str]) -> str | None:
    return f"{m.group('name')}{m.group('sep')}{m.group('quote')}{marker('assignment')}"


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def looks_random(text: str) -> bool:
    """Mixed case and digits (so hex digests stay readable) and at least 4.3 bits per character."""
    return (any(c.islower() for c in text) and any(c.isupper() for c in text) and any(c.isdigit() for c in text)
            and _entropy(text) >= 4.3)


def _high_entropy(m: re.Match[str]) -> str | None:
    text = m.group()
    if re.match(r"sha(?:1|256|384|512)-", text):  # integrity hashes in a lockfile diff are public
        return None
    return marker("high-entropy") if looks_random(text) else None


# Most specific first: what an earlier rule replaced is a marker a later one does not match.
RULES: tuple[Rule, ...] = (
    Rule("private-key", re.compile(  # up to the END line, never past the next BEGIN (linear over many BEGINs)
        r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:(?!-----BEGIN ).){0,65536}?"
        r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----", re.S)),
    Rule("url-credentials", re.compile(r"\b(?P<scheme>[a-z][a-z0-9+.-]{0,30}://)[^\s/@:]{1,256}(?::[^\s/@]{0,256})?@", re.I),
         lambda m: f"{m.group('scheme')}{marker('url-credentials')}@"),
    Rule("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b")),
    Rule("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{40,255})\b")),
    Rule("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,255}\b")),
    Rule("slack-token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,255}\b")),
    Rule("stripe-key", re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,255}\b")),
    Rule("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    Rule("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    Rule("solari-key", re.compile(r"\bslr_(?:live|test)_[A-Za-z0-9_-]{8,255}")),
    Rule("llm-api-key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,255}")),
    Rule("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{8,4096}")),
    Rule("bearer-token", re.compile(r"\b(?P<scheme>Bearer|Basic|Token)\s{1,8}[A-Za-z0-9._~+/-]{8,4096}={0,3}"),
         lambda m: f"{m.group('scheme')} {marker('bearer-token')}"),
    # NAME=value, "name": "value", name: value, when the name says it is a secret; the name is kept
    # (the last lookahead leaves "Authorization: Bearer <redacted:...>" to the rule before). A name is
    # tried once per run of name characters, with up to 64 of them on either side of the word; the
    # value is taken whole (possessive), so neither part is tried again from every position.
    Rule("assignment", re.compile(
        r"(?<![A-Za-z0-9_.-])(?P<name>[A-Za-z0-9_.-]{0,64}?" + _NAME_WORDS + r"[A-Za-z0-9_.-]{0,64})"
        r"(?P<sep>[\"']?\s{0,8}[:=]\s{0,8})(?P<quote>[\"']?)(?!<redacted:|" + re.escape(SUPPLIED) + r")[^\s\"'<>,;]{4,}+(?!\s{1,8}<redacted:)",
        re.I), _assignment),
    Rule("high-entropy", re.compile(r"(?<![A-Za-z0-9+_=-])[A-Za-z0-9+_=-]{32,}"), _high_entropy),
)


def scrub(text: str) -> str:
    """``text`` with every match of the rules replaced by its marker."""
    for rule in RULES:
        text = rule.pattern.sub(_replacer(rule), text)
    return text


def _replacer(rule: Rule) -> Callable[[re.Match[str]], str]:
    if rule.replace is None:
        return lambda m: marker(rule.id)
    fn = rule.replace

    def one(m: re.Match[str]) -> str:
        new = fn(m)
        return m.group() if new is None else new
    return one


def scrub_bytes(data: bytes) -> bytes:
    """The same over bytes that may not be UTF-8 (bytes that are not stay as they were)."""
    return scrub(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
