"""The words people type, put where the parser reads them: `replay CAPSULE` is `replay run CAPSULE`,
and global options before a command go after its words (`replay -q doctor` is `replay doctor -q`).
What a command word is and which options are global comes from the declarations (catalog.py,
common.py)."""
from __future__ import annotations

import difflib
from pathlib import Path

from ..errors import UsageError
from .catalog import GROUPS, top_words
from .common import GLOBALS, VERSION

COMMAND_WORDS = frozenset(top_words())  # `replay CAPSULE` is `replay run` unless the word is one of these
_FLAGS = frozenset(f for p in GLOBALS if p.kind == "flag" for f in p.flags)  # -q, --json, ...
_VALUED = frozenset(f for p in GLOBALS if p.kind != "flag" for f in p.flags)  # --color WHEN


def _hoisted(args: list[str]) -> list[str]:
    """`replay -q doctor` is `replay doctor -q`: global options before a command go after its words
    (where the command reads them). Before a capsule they are run's options already."""
    i = 0
    while i < len(args):
        word = args[i]
        if word in _FLAGS or (word.partition("=")[0] in _VALUED and "=" in word):
            i += 1
        elif word in _VALUED and i + 1 < len(args):
            i += 2
        else:
            break
    lead, rest = args[:i], args[i:]
    if not lead or not rest or rest[0] not in COMMAND_WORDS:
        return args
    n = 2 if rest[0] in GROUPS and len(rest) > 1 and not rest[1].startswith("-") else 1
    return [*rest[:n], *lead, *rest[n:]]


def normal_argv(args: list[str]) -> list[str]:
    """`replay [OPTIONS] CAPSULE ...` is `replay run [OPTIONS] CAPSULE ...`; `replay -q doctor` is
    `replay doctor -q`."""
    if any(a in ("-h", "--help", *VERSION.flags) for a in args[:1]):
        return args
    args = _hoisted(args)
    first_word = next((a for a in args if not a.startswith("-")), None)
    if first_word is None or first_word in COMMAND_WORDS:
        return args
    if args[0] == first_word and _looks_mistyped(first_word):  # an option's value is never a typo
        raise UsageError(no_such_command(first_word))
    return ["run", *args]


def safe_argv(args: list[str]) -> list[str]:
    try:
        return normal_argv(args)
    except UsageError:
        return args


def _looks_mistyped(word: str) -> bool:
    """A word close to a command that is no capsule (no such file, no URL): a typo, not a capsule."""
    from ..capsules.download import is_url  # the capsules package, only for a word that is no command

    if is_url(word) or "/" in word or "." in word or _exists(word):
        return False
    return bool(difflib.get_close_matches(word, sorted(COMMAND_WORDS), n=1, cutoff=0.6))


def _exists(word: str) -> bool:
    try:
        return Path(word).exists()
    except OSError:  # a name too long for this file system is no file either
        return False


def no_such_command(word: str) -> str:
    match = difflib.get_close_matches(word, sorted(COMMAND_WORDS), n=1, cutoff=0.6)
    hint = f"; did you mean `replay {match[0]}`?" if match else f" (commands: {', '.join(sorted(COMMAND_WORDS))})"
    return f"no such command {word!r}{hint}"
