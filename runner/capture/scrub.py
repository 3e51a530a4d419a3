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
"""
from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence

from .. import secretrules
from ..secretrules import marker, secret_name
from .argv import mask_options

MIN_SECRET_CHARS = 6  # shorter values ("1", "true") would scrub ordinary text
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

    def argv(self, argv: Sequence[str]) -> list[str]:
        """Options' secrets first (`--password hunter2`: the value has no telling shape), then the text rules."""
        return [self.text(a) for a in mask_options(argv, self.counts)]

    def omit(self, what: str) -> None:
        self.omitted.append(self.text(what))

    def scrubbed(self) -> dict[str, int]:
        return {rule: n for rule, n in sorted(self.counts.items()) if n}
