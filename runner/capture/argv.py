"""argv read as options and their values, as capture writes it: the option rule is
runner/secretrules.py's (`option_secret`, the one every text is scrubbed with too); here the
words are walked with the program they belong to, so mysql's `-pSECRET` is known as such, and
a secret option's value is the next argument whole, or a shell line's next word."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from ..secretrules import SHORT_SECRET_OPTIONS, a_source, marker, option_secret

_SHELL_BREAKS = frozenset({";", "&&", "||", "|", "&", "(", ")", "then", "do"})


class _OptionWalk:
    """argv read as one stream of words (an argument holding a shell line is several), so an
    option's secret is found in the next word, the next argument, or a shell line's next word."""

    def __init__(self) -> None:
        self.program: str | None = None  # the command the words belong to, for its short options
        self.pending = False  # the next word is a secret
        self.closing = ""  # inside a quoted secret ("my pass phrase"): the quote that ends it
        self.masked = 0

    def word(self, w: str) -> str:
        if not w:
            return w
        if self.closing:  # the rest of a quoted secret goes with it
            self.closing = "" if self.closing in w else self.closing
            return ""
        if self.pending:
            self.pending = False
            if not w.startswith(("<redacted:", "--")):
                return self.secret(w, whole=False)
        if w in _SHELL_BREAKS or w.endswith(";"):
            self.program = None
            return w
        found = option_secret(w, self.program)
        if found is None:
            base = w.rsplit("/", 1)[-1]
            self.program = base if base in SHORT_SECRET_OPTIONS else self.program
            return w
        if found.at is None:
            self.pending = True
            return w
        return w[:found.at] + self.secret(w[found.at:], whole=False) if found.at < len(w) else w

    def starts_value(self, arg: str) -> bool:
        """Is this whole argument the secret an option before it announced (`--password`, `my pass phrase`)?"""
        return self.pending and not self.closing and bool(arg) and not arg.startswith(("<redacted:", "--"))

    def secret(self, value: str, whole: bool) -> str:
        """`value` (one word, or a `whole` argument) as it is written: masked, but for openssl's
        `pass:` prefix, and a source (`env:VAR`) left as it was."""
        self.pending = False
        if a_source(value):
            return value
        prefix = "pass:" if value.startswith("pass:") and len(value) > 5 else ""
        rest = value[len(prefix):]
        if not whole and rest[0] in "\"'" and rest.count(rest[0]) == 1:
            self.closing = rest[0]
        self.masked += 1
        return prefix + marker("option-value")


def mask_options(argv: Sequence[str], counts: Counter[str] | None = None) -> list[str]:
    """argv with the secrets its options carry as `<redacted:option-value>`: `--password hunter2`
    (the whole next argument, `--password "my pass phrase"`), `--token=x`, mysql's `-pSECRET`,
    redis-cli's `-a SECRET`, keytool's `-storepass X`, openssl's `-passin pass:X`, also inside a
    shell line (`sh -c "mysql -pSECRET db"`, where the secret is the next word)."""
    walk = _OptionWalk()
    out = []
    for arg in argv:
        if walk.starts_value(arg):  # an argument is one value, spaces and all
            out.append(walk.secret(arg, whole=True))
            continue
        parts = re.split(r"(\s+)", arg)
        out.append("".join(walk.word(p) if i % 2 == 0 else p for i, p in enumerate(parts)))
    if counts is not None and walk.masked:
        counts["option-value"] += walk.masked
    return out
