"""The capsule's `repo`: git state of the work tree the command ran in.

`null` outside a git work tree (or where git is missing: then nothing can be said). The
diff is `git diff HEAD` of tracked files with external diff drivers and textconv off, its
binary files left out and named (runner/capture/gitdiff.py), scrubbed and cut at a line
boundary to 200,000 bytes; untracked files are names only (not ignored ones), at most 200, and
never in an interpreter's or the dependencies' folder (a `.venv` the repository does not ignore
is no source: listed, its 200 installed files would be differences diff calls outcome-changing).
The remote goes through the same scrubbing as every text (mask_url's
credentials and query tokens, the environment's secrets, the rules by shape), counted. A field git cannot answer (no commit yet, no origin, a
detached HEAD) is null.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from . import gitdiff
from .scrub import Scrubber

MAX_DIFF_BYTES = 200_000
MAX_UNTRACKED = 200
TIMEOUT_S = 60.0
# No pager, no prompts, no user-configured helpers that could print or run anything.
_ENV = {"GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
# Folders that hold an interpreter or installed dependencies, by their conventional names; any
# other folder holding a virtual environment (`pyvenv.cfg`) or a conda one (`conda-meta/`), and
# $VIRTUAL_ENV, are found by what they hold.
NOT_SOURCE = frozenset({".venv", "venv", "node_modules", "__pycache__", ".tox", ".nox", ".mypy_cache",
                        ".pytest_cache", ".ruff_cache"})
_ENV_MARKS = ("pyvenv.cfg", "conda-meta")


@dataclass(frozen=True)
class WorkTree:
    root: Path
    git: str


def work_tree(cwd: Path) -> WorkTree | None:
    git = shutil.which("git")
    if git is None:
        return None
    proc = _git(git, cwd, "rev-parse", "--show-toplevel")
    if proc is None or proc.returncode != 0:
        return None
    top = proc.stdout.decode("utf-8", "surrogateescape").strip()
    return WorkTree(Path(top).resolve(), git) if top else None


def _git(git: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    try:
        return subprocess.run([git, *args], cwd=cwd, env={**os.environ, **_ENV}, capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None


def _out(wt: WorkTree, *args: str) -> str | None:
    proc = _git(wt.git, wt.root, *args)
    if proc is None or proc.returncode != 0:
        return None
    return proc.stdout.decode("utf-8", "replace").strip() or None


def repo_facts(wt: WorkTree, scrub: Scrubber, exclude: Path | None = None,
               environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """`exclude`: the capsule being written, which is not the project's; `environ`: the command's
    (its $VIRTUAL_ENV is an interpreter's folder, whatever its name)."""
    commit = _out(wt, "rev-parse", "--verify", "-q", "HEAD")
    remote = _out(wt, "remote", "get-url", "origin")
    branch = _out(wt, "symbolic-ref", "--short", "-q", "HEAD")
    diff, truncated, redacted = _diff(wt, scrub) if commit else ("", False, False)
    untracked = _untracked(wt, scrub, exclude, environ or {})
    return {
        "remote": None if remote is None else scrub.text(remote),
        "commit": commit,
        "branch": None if branch is None else scrub.text(branch),  # a branch may be named for its token
        "dirty": bool(diff) or bool(untracked),
        "diff": diff,
        "diffTruncated": truncated,
        "diffRedacted": redacted,
        "untracked": untracked,
    }


def _diff(wt: WorkTree, scrub: Scrubber) -> tuple[str, bool, bool]:
    proc = _git(wt.git, wt.root, "-c", "core.quotepath=off", "diff", "HEAD", "--no-ext-diff", "--no-textconv",
                "--no-color")
    if proc is None or proc.returncode != 0:
        return "", False, False
    sections = gitdiff.files(proc.stdout)
    binary = [s for s in sections if gitdiff.is_binary(s)]
    for section in binary:
        scrub.omit(gitdiff.path(section))
    raw = b"".join(s for s in sections if not gitdiff.is_binary(s))
    clean = scrub.diff(raw)
    redacted = clean != raw or bool(binary)  # either way it is not the change as it was
    truncated = len(clean) > MAX_DIFF_BYTES
    if truncated:
        cut = clean.rfind(b"\n", 0, MAX_DIFF_BYTES + 1)
        clean = clean[: cut + 1] if cut >= 0 else b""
    # JSON holds text: bytes that are not UTF-8 become U+FFFD, as twin's decoder does.
    return clean.decode("utf-8", "replace"), truncated, redacted


def _untracked(wt: WorkTree, scrub: Scrubber, exclude: Path | None, environ: Mapping[str, str]) -> list[str]:
    proc = _git(wt.git, wt.root, "ls-files", "--others", "--exclude-standard", "-z")
    if proc is None or proc.returncode != 0:
        return []
    skip = _inside(wt.root, exclude)
    names = [n.decode("utf-8", "replace") for n in proc.stdout.split(b"\0") if n]
    envs = _environments(names, _inside(wt.root, Path(environ["VIRTUAL_ENV"]) if environ.get("VIRTUAL_ENV") else None))
    source = [n for n in sorted(names) if n != skip and not _not_source(n, envs)]
    return [scrub.text(n) for n in source][:MAX_UNTRACKED]


def _inside(root: Path, path: Path | None) -> str | None:
    """`path` relative to the work tree's root, or None when it is not under it."""
    if path is None:
        return None
    try:
        return path.resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        return None


def _environments(names: list[str], virtual_env: str | None) -> frozenset[str]:
    """The folders (relative to the root) holding an interpreter: each untracked `pyvenv.cfg`'s or
    `conda-meta/`'s, and $VIRTUAL_ENV when it is in the tree."""
    found = {virtual_env} if virtual_env not in (None, ".") else set()
    for name in names:
        parts = PurePosixPath(name).parts
        for i, part in enumerate(parts):
            if part in _ENV_MARKS and i > 0:
                found.add(PurePosixPath(*parts[:i]).as_posix())
    return frozenset(n for n in found if n)


def _not_source(name: str, envs: frozenset[str]) -> bool:
    parts = PurePosixPath(name).parts
    if any(part in NOT_SOURCE for part in parts[:-1]):
        return True
    return any(PurePosixPath(*parts[:i]).as_posix() in envs for i in range(1, len(parts)))
