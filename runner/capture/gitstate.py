"""The capsule's `repo`: git state of the work tree the command ran in.

`null` outside a git work tree (or where git is missing: then nothing can be said). The
diff is `git diff HEAD` of tracked files with external diff drivers and textconv off, its
binary files left out and named (runner/capture/gitdiff.py), scrubbed and cut at a line
boundary to 200,000 bytes; untracked files are names only (not ignored ones), at most 200.
The remote goes through the same scrubbing as every text (mask_url's
credentials and query tokens, the environment's secrets, the rules by shape), counted. A field git cannot answer (no commit yet, no origin, a
detached HEAD) is null.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import gitdiff
from .scrub import Scrubber

MAX_DIFF_BYTES = 200_000
MAX_UNTRACKED = 200
TIMEOUT_S = 60.0
# No pager, no prompts, no user-configured helpers that could print or run anything.
_ENV = {"GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}


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


def repo_facts(wt: WorkTree, scrub: Scrubber, exclude: Path | None = None) -> dict[str, Any]:
    """`exclude`: the capsule being written, which is not the project's."""
    commit = _out(wt, "rev-parse", "--verify", "-q", "HEAD")
    remote = _out(wt, "remote", "get-url", "origin")
    diff, truncated, redacted = _diff(wt, scrub) if commit else ("", False, False)
    untracked = _untracked(wt, scrub, exclude)
    return {
        "remote": None if remote is None else scrub.text(remote),
        "commit": commit,
        "branch": _out(wt, "symbolic-ref", "--short", "-q", "HEAD"),
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
    clean = scrub.data(raw)
    redacted = clean != raw or bool(binary)  # either way it is not the change as it was
    truncated = len(clean) > MAX_DIFF_BYTES
    if truncated:
        cut = clean.rfind(b"\n", 0, MAX_DIFF_BYTES + 1)
        clean = clean[: cut + 1] if cut >= 0 else b""
    # JSON holds text: bytes that are not UTF-8 become U+FFFD, as twin's decoder does.
    return clean.decode("utf-8", "replace"), truncated, redacted


def _untracked(wt: WorkTree, scrub: Scrubber, exclude: Path | None) -> list[str]:
    proc = _git(wt.git, wt.root, "ls-files", "--others", "--exclude-standard", "-z")
    if proc is None or proc.returncode != 0:
        return []
    skip = None
    if exclude is not None:
        try:
            skip = exclude.resolve().relative_to(wt.root).as_posix()
        except ValueError:
            skip = None
    names = [n.decode("utf-8", "replace") for n in proc.stdout.split(b"\0") if n]
    return [scrub.text(n) for n in sorted(names) if n != skip][:MAX_UNTRACKED]
