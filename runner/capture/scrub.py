"""Scrubbing what a capture writes: the secret rules (runner/secretrules.py), counted per rule as
the capsule's `redaction.scrubbed` reports them, plus what only a recorder needs.

* `env-value`: the value of every variable whose name says it is a secret (API_TOKEN,
  DB_PASS...), and every password or secret parameter a variable's URL holds (DATABASE_URL),
  wherever it shows up (the output, the diff, an argument, a file name), whatever its shape:
  the rules catch secrets by shape, this catches the ones this environment really holds.
* `option-value`: argv read as options and their values (`--password hunter2`, mysql's `-pX`:
  runner/capture/argv.py), and a long option's value in any other text (a `set -x` trace).
* Never a path: a secret-named variable holding the path of a file here, like PWD and OLDPWD,
  says where a secret is, and an argument naming it must still run on replay.
* `home-path`: the home directory, and anyone's (`/home/NAME`, `/Users/NAME`,
  `C:\\Users\\NAME`), becomes `~` (twin's rule; a replay's reports leave it out because their
  paths are the container's).
* What is left out whole (a binary file's change in the diff) is named in `omitted`.
* A diff's secret split over two lines (a continued line, a string cut in two, a wrapped value):
  each two neighbouring lines of a hunk are also read joined (without the line break and the
  quotes, backslash or `+` around it), and a secret found across the join is replaced in both
  (`split-secret`, counted once a pair of lines). Across lines that do not say they continue,
  only a secret with a shape of its own (a token's prefix, a URL's password) or an environment's
  secret value counts.
"""
from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence

from .. import secretrules
from ..secretrules import marker, secret_name
from .argv import mask_options

MIN_SECRET_CHARS = 6  # shorter values ("1", "true") would scrub ordinary text
_AROUND_BREAK = " \t\\\"'+"  # what stands around a line break inside a value: spaces, a continuation, quotes
_HUNK_LINE = (" ", "+", "-")
_ENDS = re.compile(r"[\s,;(){}\[\]<>]")
# Rules that know a secret by its context or its look (a name before it, an option, randomness, a
# query parameter) rather than by a shape of its own: across two lines they are read only where the
# lines say they continue (a backslash, a string closed and opened again, a `+`), or two lines of
# a lockfile or of prose would be read as one random word.
_BY_CONTEXT = frozenset({"assignment", "option-value", "high-entropy", "netrc-password", "url-query"})
_SHAPED = tuple(rule for rule in secretrules.RULES if rule.id not in _BY_CONTEXT)
_ANYONES_HOME = re.compile(r"(?<![\w.-])(?:/home|/Users)/[^/\s\"':]{1,255}|(?<![\w.-])[A-Za-z]:\\Users\\[^\\\s\"':]{1,255}")


def secret_values(env: Mapping[str, str]) -> list[str]:
    """What this environment holds that is secret: secret-named variables' values and the
    credentials inside any variable's URLs; longest first, so a value holding another goes whole.
    A value that is the path of a file here (GOOGLE_APPLICATION_CREDENTIALS=/etc/gcp.json) says
    where a secret is kept, not the secret: an argument naming it must still run."""
    values = {v for k, v in env.items() if secret_name(k) and not _a_path_here(v)}
    for v in env.values():
        values.update(secretrules.url_secrets(v))
    return sorted((v for v in values if len(v) >= MIN_SECRET_CHARS), key=lambda v: (-len(v), v))


def _a_path_here(value: str) -> bool:
    if not os.path.isabs(value) or "\0" in value:
        return False
    try:
        return os.path.lexists(value)
    except (OSError, ValueError):
        return False


class Scrubber:
    """Scrubs text and bytes, counting replacements per rule id."""

    def __init__(self, env: Mapping[str, str], home: str | None) -> None:
        self.counts: Counter[str] = Counter()
        self.omitted: list[str] = []
        self._values = secret_values(env)
        self._home = home.rstrip("/") if home and home.rstrip("/") not in ("", "/") else None

    def text(self, text: str, paths: bool = True) -> str:
        """`paths`: home directories as `~` too (not in a value the user asked for by name)."""
        for rule in secretrules.URL_RULES:  # first: a URL loses its password whole, not around a marker
            text = secretrules.apply(rule, text, self.counts)
        for value in self._values:
            n = text.count(value)
            if n:
                self.counts["env-value"] += n
                text = text.replace(value, marker("env-value"))
        text = secretrules.scrub(text, self.counts)
        if not paths:
            return text
        if self._home is not None:
            pattern = re.compile(r"(?<![\w.-])" + re.escape(self._home) + r"(?=/|$|[\s\"':])", re.M)
            text, n = pattern.subn("~", text)
            self.counts["home-path"] += n
        text, n = _ANYONES_HOME.subn("~", text)
        self.counts["home-path"] += n
        return text

    def data(self, data: bytes) -> bytes:
        """Bytes that may not be UTF-8: the bytes that are not stay as they were."""
        return self.text(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")

    def diff(self, data: bytes) -> bytes:
        """A diff as `data` scrubs it, with secrets split over two of its lines found joined first."""
        lines = data.decode("utf-8", "surrogateescape").split("\n")
        heads: dict[int, int] = {}  # line -> where its text stops being the end of a split secret
        tails: dict[int, int] = {}  # line -> where the start of a split secret begins
        for i in range(len(lines) - 1):
            a, b = lines[i], lines[i + 1]
            if not (a.startswith(_HUNK_LINE) and b.startswith(_HUNK_LINE)):
                continue
            found = list(self._across(a[1:], b[1:]))
            for start, end in found:
                tails[i] = min(tails.get(i, len(a)), 1 + start)
                heads[i + 1] = max(heads.get(i + 1, 1), 1 + end)
            self.counts["split-secret"] += bool(found)
        for i in sorted(heads.keys() | tails.keys()):
            line = lines[i]
            head, tail = self._widened(line, heads.get(i, 1), tails.get(i, len(line)))
            cut = marker("split-secret")
            lines[i] = line[0] + (cut if head >= tail else
                                  (cut if i in heads else "") + line[head:tail] + (cut if i in tails else ""))
        return self.data("\n".join(lines).encode("utf-8", "surrogateescape"))

    def _widened(self, line: str, head: int, tail: int) -> tuple[int, int]:
        """`head` and `tail` moved past any secret of the line's own that they would cut (the rest of
        a URL whose scheme a split secret took): what is left between them is scrubbed on its own."""
        own = [(1 + match, 1 + start, 1 + end) for match, start, end in self._spans(line[1:])]
        moved = True
        while moved:
            moved = False
            for match, start, end in own:
                if match < head < end:
                    head, moved = end, True
                if start < tail < end:
                    tail, moved = start, True
        return head, tail

    def _across(self, a: str, b: str) -> Iterator[tuple[int, int]]:
        """The secrets found in `a` and `b` joined that cross the join: (where it starts in a, where it ends in b)."""
        core_a = a.rstrip(_AROUND_BREAK)
        skip_b = len(b) - len(b.lstrip(_AROUND_BREAK))
        joined, at = core_a + b[skip_b:], len(core_a)
        if not core_a or skip_b == len(b) or _ENDS.match(core_a[-1]) or _ENDS.match(b[skip_b]):
            return  # a line that ends (or starts) with `;`, `)`, `{`, `,`... ends what it holds
        last, first = a.rstrip()[-1:], b.lstrip()[:1]
        continued = last in ("\\", "+") or first == "+" or (last in ("'", '"') and first == last)
        for _, start, end in self._spans(joined, secretrules.RULES if continued else _SHAPED):
            if start < at < end and not self._both_whole(core_a, b[skip_b:], start, end - at):
                yield start, skip_b + end - at

    def _both_whole(self, a: str, b: str, start: int, end: int) -> bool:
        """Is a[start:] inside a secret of a's own, and b[:end] inside one of b's own? Then the two
        lines hold two secrets (two URLs, one a line), each scrubbed where it is, not one split."""
        return (any(m <= start and e >= len(a) for m, _, e in self._spans(a))
                and any(m == 0 and e >= end for m, _, e in self._spans(b)))

    def _spans(self, text: str, rules: Sequence[secretrules.Rule] = secretrules.RULES) -> Iterator[tuple[int, int, int]]:
        """Where each rule (and each of this environment's secret values) would replace text, read
        on `text` as it is: each rule on its own, so more than scrubbing it would (never less).
        (where the match starts, where what it replaces starts: after a name it keeps, the end)."""
        for value in self._values:
            at = text.find(value)
            while at >= 0:
                yield at, at, at + len(value)
                at = text.find(value, at + 1)
        for rule in rules:
            for m in rule.pattern.finditer(text):
                new = marker(rule.id) if rule.replace is None else rule.replace(m)
                end = m.end()
                if new is not None and rule.value is not None:
                    taken = rule.value.match(text, end)
                    new, end = (new, taken.end()) if taken is not None else (None, end)
                if new is not None and new != text[m.start():end]:
                    yield m.start(), m.start() + len(os.path.commonprefix([new, text[m.start():end]])), end

    def argv(self, argv: Sequence[str]) -> list[str]:
        """Options' secrets first (`--password hunter2`: the value has no telling shape), then the text rules."""
        return [self.text(a) for a in mask_options(argv, self.counts)]

    def omit(self, what: str) -> None:
        self.omitted.append(self.text(what))

    def scrubbed(self) -> dict[str, int]:
        return {rule: n for rule, n in sorted(self.counts.items()) if n}
