"""Mirrors per remote: where to fetch a recorded remote from instead, as git's `insteadOf`.

A rule `PREFIX=TARGET` rewrites every recorded remote that starts with PREFIX: the longest
matching prefix wins and is replaced by TARGET (the rest of the remote is kept), so
`https://git.corp/=/srv/mirrors/` serves `https://git.corp/team/app.git` from
`/srv/mirrors/team/app.git`. TARGET is a URL or a local path (a clone, a bare repository
or a bundle); the rules are the user's, so a local target is allowed where a capsule's own
remote never is. `--repo` stays stronger: it serves every capsule, mirrors or not.

Rules come from `--mirror PREFIX=TARGET` (repeatable; first in line) and from the file
REPLAY_MIRRORS names: one rule a line, a line starting with `#` is a comment, blank lines are skipped, a
relative local target is relative to the file. The command line hands its rules over once
(`use`), before any work; everything that fetches asks `configured()`.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ...errors import UsageError
from ...textsafe import quoted

ENV = "REPLAY_MIRRORS"
SPELLING = "PREFIX=PATH_OR_URL (the start of a recorded remote, then where to fetch it from)"
_URL = re.compile(r"^(https?|git|ssh|file)://[^\s]+$|^[\w.-]+@[\w.-]+:[^\s]*$")  # scp-like user@host:path too
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*(://|::)")
_BAD_CHARS = re.compile(r"[\x00-\x20\x7f\u0085\u2028\u2029]")


@dataclass(frozen=True)
class Mirror:
    prefix: str  # the start of a recorded remote
    target: str  # what replaces that start: a URL, or an absolute local path
    origin: str  # where the rule was given: "--mirror", or "REPLAY_MIRRORS FILE:LINE"

    def rewrite(self, remote: str) -> str:
        return self.target + remote[len(self.prefix):]

    @property
    def local(self) -> bool:
        return is_local(self.target)


@dataclass(frozen=True)
class Mirrors:
    rules: tuple[Mirror, ...] = ()

    def match(self, remote: str) -> Mirror | None:
        """The rule for this remote: the longest matching prefix; between equal ones, the first given."""
        best: Mirror | None = None
        for rule in self.rules:
            if remote.startswith(rule.prefix) and (best is None or len(rule.prefix) > len(best.prefix)):
                best = rule
        return best

    def rewrite(self, remote: str) -> str | None:
        """Where to fetch this remote from (None: no rule matches, fetch it as recorded)."""
        rule = self.match(remote)
        return rule.rewrite(remote) if rule else None

    def __add__(self, other: Mirrors) -> Mirrors:
        return Mirrors(self.rules + other.rules)


def is_local(target: str) -> bool:
    """A path on this machine (not a network URL; file:// counts as local too)."""
    return target.startswith("file://") or not _URL.match(target)


def parse_rule(text: str, origin: str, base: Path | None = None) -> Mirror:
    """One `PREFIX=TARGET`; UsageError (one line, naming `origin`) for anything else."""
    prefix, sep, target = text.strip().partition("=")
    shown = quoted(text, 120)
    if not sep or not prefix or not target:
        raise UsageError(f"{origin} {shown}: expected {SPELLING}")
    if _BAD_CHARS.search(prefix) or _BAD_CHARS.search(target):
        raise UsageError(f"{origin} {shown}: spaces and control characters are not allowed in a mirror rule")
    if target.startswith("-"):
        raise UsageError(f"{origin} {shown}: the target looks like an option")
    if _URL.match(target):
        return Mirror(prefix, target, origin)
    if _SCHEME.match(target):
        raise UsageError(f"{origin} {shown}: the target's transport is not one of https, http, git, ssh, file")
    path = Path(target).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    if not path.exists():
        raise UsageError(f"{origin} {shown}: no such clone, bundle or directory {quoted(str(path), 120)}")
    # a prefix that ends in "/" keeps the rest of the remote: the target is a directory of repositories
    resolved = str(path.resolve()) + ("/" if target.endswith("/") else "")
    return Mirror(prefix, resolved, origin)


def parse_rules(items: Iterable[str], origin: str = "--mirror") -> Mirrors:
    return Mirrors(tuple(parse_rule(item, origin) for item in items))


def read_file(path: Path) -> Mirrors:
    """The rules of a mirrors file (see the module's doc for its format)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise UsageError(f"{ENV}={quoted(str(path), 200)}: cannot be read ({why})") from None
    rules = []
    for number, line in enumerate(text.splitlines(), 1):
        body = line.strip()
        if body and not body.startswith("#"):  # whole-line comments only: a URL may hold a "#"
            rules.append(parse_rule(body, f"{ENV} {path}:{number}", path.parent))
    return Mirrors(tuple(rules))


def from_env() -> Mirrors:
    raw = os.environ.get(ENV, "").strip()
    return read_file(Path(raw).expanduser()) if raw else Mirrors()


_given = Mirrors()


def use(flags: Mirrors) -> None:
    """The command line's --mirror rules, for this command (called once, before any work)."""
    global _given
    _given = flags


def configured() -> Mirrors:
    """The rules in force: the command line's first, then REPLAY_MIRRORS's (read each time: a
    long-lived worker sees an edited file)."""
    return _given + from_env()
