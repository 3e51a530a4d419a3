"""Which environment variables the project reads: the evidence `why.py` ranks a variable by.

The source is the recorded commit as the build context restored it (someone else's files):
the scan reads the project's own files only (not `.git`, not installed dependencies), never
follows a link, skips large and binary files, and stops at a file count, a byte count and a
time budget, whichever comes first. What it finds is a name and the first place that reads it
(`homedir.go:41`), one per name: enough to say why a variable is suspected, cheap to keep.
"""
from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..textsafe import cut, escaped

MAX_FILES = 4000
MAX_FILE_BYTES = 256 * 1024
MAX_BYTES = 24 * 1024 * 1024
MAX_SECONDS = 3.0
MAX_NAMES = 400
MAX_LINE = 2000  # longer lines (minified bundles, data) are not code a reader cites
# Folders of installed dependencies, caches and history: not the project's own reading.
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "vendor", ".venv", "venv", "__pycache__", ".tox",
                          ".mypy_cache", ".pytest_cache", "site-packages", "dist", "build", "target", ".cache"})
_NAME = r"([A-Za-z_][A-Za-z0-9_]{0,127})"
_Q = r"""["'`]"""
# One pattern per language's ways of reading a variable; the name is the first group.
READERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("go", re.compile(rf"\bos\.(?:Getenv|LookupEnv)\(\s*\"{_NAME}\"")),
    ("js", re.compile(rf"\bprocess\.env(?:\.{_NAME}\b|\[\s*{_Q}{_NAME}{_Q}\s*\])")),
    ("python", re.compile(rf"\b(?:os\.)?(?:environ(?:\.get)?|getenv)\s*[\[(]\s*{_Q}{_NAME}{_Q}")),
    ("ruby", re.compile(rf"\bENV(?:\.fetch\(|\[)\s*{_Q}{_NAME}{_Q}")),
    ("rust", re.compile(rf"\benv::var(?:_os)?\(\s*\"{_NAME}\"|\benv!\(\s*\"{_NAME}\"")),
    ("shell", re.compile(r"\$\{?([A-Z_][A-Z0-9_]{0,127})")),
)
# Library calls that read a variable without naming it.
IMPLIED: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("HOME", re.compile(r"\bos\.UserHomeDir\(|\bos\.homedir\(|\bexpanduser\(|\bPath\.home\(|\bhome_dir\(|"
                        r"\bhomedir\.(?:Dir|Expand)\(|\bDir\.home\b")),
    ("TZ", re.compile(r"\btime\.Local\b|\btzset\(")),
)
_HINTS = ("env", "ENV", "$", "home", "Home", "tzset", "Local")  # a line without one reads nothing (a fast skip)
SHELL_FILES = frozenset({".sh", ".bash", ".zsh", ".bats", ".mk", ""})  # "": a Makefile, a script with a #! line
MAKEFILES = frozenset({"Makefile", "GNUmakefile", "Justfile"})
CODE_FILES = frozenset({".go", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx", ".py", ".rb", ".rs",
                        ".java", ".kt", ".php", ".pl", ".c", ".h", ".cc", ".cpp"}) | SHELL_FILES
# The shell's own variables and positional parameters are not the environment's.
SHELL_OWN = frozenset({"RANDOM", "LINENO", "SECONDS", "BASHPID", "PPID", "IFS", "OPTARG", "OPTIND", "REPLY",
                       "BASH_SOURCE", "FUNCNAME", "PIPESTATUS", "EUID", "UID"})


@dataclass(frozen=True)
class Read:
    """A variable the project reads, and the first place seen reading it."""

    name: str
    where: str  # "homedir.go:41", "command line"


def scan(root: Path) -> tuple[Read, ...]:
    """The variables the files under root read, one Read per name, in the order found."""
    found: dict[str, Read] = {}
    end = time.monotonic() + MAX_SECONDS
    budget = MAX_BYTES
    for n, path in enumerate(_files(root)):
        if n >= MAX_FILES or budget <= 0 or time.monotonic() > end or len(found) >= MAX_NAMES:
            break
        data = _read(path)
        if data is None or (not path.suffix and path.name not in MAKEFILES and not data.startswith(b"#!")):
            continue
        budget -= len(data)
        rel = escaped(cut(path.relative_to(root).as_posix(), 200))  # a file name is someone else's text too
        for name, line in reads_in(data.decode("utf-8", "replace"), shell=path.suffix in SHELL_FILES):
            found.setdefault(name, Read(name, f"{rel}:{line}"))
    return tuple(found.values())


def command_reads(argv: Sequence[str]) -> tuple[Read, ...]:
    """The variables a command line reads itself (`sh -c '... $CI ...'`)."""
    found: dict[str, Read] = {}
    for word in argv:
        for name, _ in reads_in(word[:MAX_FILE_BYTES], shell=True):
            found.setdefault(name, Read(name, "the command line"))
    return tuple(found.values())


def reads_in(text: str, shell: bool) -> Iterator[tuple[str, int]]:
    """(name, line number) of every read of a variable in this text."""
    readers = READERS if shell else READERS[:-1]
    for i, line in enumerate(text.splitlines(), 1):
        if len(line) > MAX_LINE or not any(hint in line for hint in _HINTS):
            continue
        for _, pattern in readers:
            for m in pattern.finditer(line):
                name = next(g for g in m.groups() if g)
                if not (pattern is READERS[-1][1] and name in SHELL_OWN):
                    yield name, i
        for name, implied in IMPLIED:
            if implied.search(line):
                yield name, i


def _files(root: Path) -> Iterator[Path]:
    """The project's code files under root, sorted, links not followed."""
    if not root.is_dir():
        return
    for top, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(files):
            path = Path(top) / name
            suffix = path.suffix.lower()
            if suffix in CODE_FILES:
                yield path


def _read(path: Path) -> bytes | None:
    """The file's bytes, or None: a link, too large, unreadable or binary."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            return None
        with path.open("rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    return None if b"\0" in data[:8192] or len(data) > MAX_FILE_BYTES else data
