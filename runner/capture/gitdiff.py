"""A `git diff` cut into its files, to leave the binary ones out.

A binary change cannot be scrubbed (a token inside a binary or UTF-16 file is invisible to
the rules once encoded), so the capsule never holds one: git is asked for no binary patches,
and each file git calls binary ("Binary files a/x and b/x differ"), or whose text holds a NUL
byte, is dropped from the diff and named instead.
"""
from __future__ import annotations

import re

_HEADER = re.compile(rb"^diff --(?:git|cc) ", re.M)
_BINARY = re.compile(rb"^(?:Binary files .* differ|GIT binary patch)$", re.M)
_QUOTED = re.compile(rb'"((?:[^"\\]|\\.)*)"')
_ESCAPES = {ord("a"): 7, ord("b"): 8, ord("t"): 9, ord("n"): 10, ord("v"): 11, ord("f"): 12, ord("r"): 13}


def files(diff: bytes) -> list[bytes]:
    """The diff's per-file sections, in order; what comes before the first header is one more."""
    starts = [m.start() for m in _HEADER.finditer(diff)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    return [diff[a:b] for a, b in zip(starts, [*starts[1:], len(diff)]) if diff[a:b]]


def is_binary(section: bytes) -> bool:
    """Binary as git says, or text holding a NUL byte: UTF-16 (or any binary) that git shows as text
    because `.gitattributes` says `diff`, or because its first 8,000 bytes, all git looks at, have
    no NUL. Its ASCII would be interleaved with NULs, which no rule can read."""
    if b"\0" in section:
        return True
    hunk = section.find(b"\n@@")  # a text hunk's lines start with ' ', '+' or '-': never these
    return _BINARY.search(section, 0, hunk if hunk >= 0 else len(section)) is not None


def path(section: bytes) -> str:
    """The file a section changes (its new name when renamed or copied)."""
    header, *rest = section.split(b"\n", 8)
    for line in rest:
        for word in (b"rename to ", b"copy to "):
            if line.startswith(word):
                return _unquote(line[len(word):])
    names = header.split(b" ", 2)[2] if header.count(b" ") >= 2 else b""
    quoted = _QUOTED.findall(names)
    if quoted:
        return _unquote(b'"' + quoted[-1] + b'"').removeprefix("b/")
    n = (len(names) - 5) // 2  # "a/P b/P": the two halves are the same path
    if names[:2] == b"a/" and names[2 + n:5 + n] == b" b/" and names[2:2 + n] == names[5 + n:]:
        return names[2:2 + n].decode("utf-8", "replace")
    return names.decode("utf-8", "replace")


def _unquote(raw: bytes) -> str:
    """git's C-style quoting of an unusual path: backslash escapes and octal bytes."""
    if len(raw) < 2 or not (raw.startswith(b'"') and raw.endswith(b'"')):
        return raw.decode("utf-8", "replace")
    body, out, i = raw[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i]
        if c != ord("\\") or i + 1 == len(body):
            out.append(c)
            i += 1
        elif body[i + 1:i + 4].isdigit() and len(body[i + 1:i + 4]) == 3:
            out.append(int(body[i + 1:i + 4], 8) & 0xFF)
            i += 4
        else:
            out.append(_ESCAPES.get(body[i + 1], body[i + 1]))
            i += 2
    return out.decode("utf-8", "replace")
