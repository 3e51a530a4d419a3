"""Scrubbing what a capture writes: twin's secret rules (runner/secretrules.py), counted
per rule as the capsule's `redaction.scrubbed` reports them, plus two rules only a
recorder needs.

* `env-value`: the value of every variable whose name says it is a secret (API_TOKEN,
  DB_PASSWORD...), wherever it shows up (the output, the diff, an argument, a file name),
  whatever its shape: the rules catch secrets by shape, this catches the ones this
  environment really holds.
* `home-path`: the home directory becomes `~` (twin's rule; a replay's reports leave it out
  because their paths are the container's).
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping

from .. import secretrules
from ..secretrules import RULES, Rule, marker

# The same words the assignment rule reads a secret's name by.
_SECRET_NAME = re.compile(secretrules._NAME_WORDS, re.I)
MIN_SECRET_CHARS = 6  # shorter values ("1", "true") would scrub ordinary text


def secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


class Scrubber:
    """Scrubs text and bytes, counting replacements per rule id."""

    def __init__(self, env: Mapping[str, str], home: str | None) -> None:
        self.counts: Counter[str] = Counter()
        values = {v for k, v in env.items() if secret_name(k) and len(v) >= MIN_SECRET_CHARS}
        # Longest first: a value that contains another is replaced whole.
        self._values = sorted(values, key=len, reverse=True)
        self._home = home if home and home.rstrip("/") not in ("", "/") else None

    def text(self, text: str) -> str:
        for value in self._values:
            n = text.count(value)
            if n:
                self.counts["env-value"] += n
                text = text.replace(value, marker("env-value"))
        for rule in RULES:
            text = rule.pattern.sub(self._replacer(rule), text)
        if self._home is not None:
            home = self._home.rstrip("/")
            pattern = re.compile(re.escape(home) + r"(?=/|$|[\s\"':])")
            text, n = pattern.subn("~", text)
            self.counts["home-path"] += n
        return text

    def data(self, data: bytes) -> bytes:
        """Bytes that may not be UTF-8: the bytes that are not stay as they were."""
        return self.text(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")

    def _replacer(self, rule: Rule) -> Callable[[re.Match[str]], str]:
        def one(m: re.Match[str]) -> str:
            new = marker(rule.id) if rule.replace is None else rule.replace(m)
            if new is None or new == m.group():
                return m.group()
            self.counts[rule.id] += 1
            return new
        return one

    def scrubbed(self) -> dict[str, int]:
        return {rule: n for rule, n in sorted(self.counts.items()) if n}
