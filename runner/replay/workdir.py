"""`replay CAPSULE --workdir DIR`: a checkout the developer edits, run in place of the recorded source.

Each of DIR's top-level entries is bind-mounted read-only over the image's /work/repo, so what
the build put there besides the source (node_modules) stays, and nothing is built again. The
listing is read again for every attempt: an entry added since shows in the next one.

DIR is a boundary: it must be the root of a git checkout of the recorded repository (never `/`,
the home directory or a folder holding it: `.ssh`, `/run` and the engine's socket stay out), and
it must hold files and directories only (a socket would let the command talk to a host process, a
FIFO or a device reach past the files). Without --repo, DIR's own git gives the recorded commit.
The diff it prints goes through the output filter (textsafe.py).
"""
from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISBLK, S_ISCHR, S_ISFIFO, S_ISSOCK

from ..engine import Mount
from ..errors import UsageError
from ..textsafe import escaped, shown

ROOT = "/work/repo"  # render.workdir's root: where the image holds the recorded source
# not mounted: git's own files, and what the image's build installed into the source tree
SKIPPED = (".git", "node_modules")
_SPECIAL = ((S_ISSOCK, "a socket"), (S_ISFIFO, "a FIFO"), (S_ISCHR, "a character device"), (S_ISBLK, "a block device"))


def checked(given: Path) -> Path:
    """DIR as mounted: a directory, not `/` nor the home directory (nor one holding it), the root of a
    git checkout, holding files and directories only; anything else is a UsageError (exit 2)."""
    if not given.is_dir():
        raise UsageError(f"--workdir {shown(str(given))}: not a directory")
    root = given.resolve()
    if root == Path("/") or _home().is_relative_to(root):
        raise UsageError(f"--workdir {shown(str(given))}: is `/`, the home directory or holds it; give the checkout's "
                         "own folder")
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None:
        raise UsageError(f"--workdir {shown(str(given))}: not a git checkout (DIR is a checkout of the recorded repository)")
    if Path(top).resolve() != root:
        raise UsageError(f"--workdir {shown(str(given))}: not the checkout's root ({shown(top)} is); give the root")
    only_files(root)
    return root


def _home() -> Path:
    try:
        return Path.home().resolve()
    except (RuntimeError, KeyError):  # no HOME and no password entry: no home to protect
        return Path("/nonexistent-home")


def only_files(root: Path) -> None:
    """Every entry that would be mounted is a file, a directory or a symbolic link (a link stays a
    link in the container: it never opens the host's file). A directory this user cannot list is
    refused too: the container (root, DAC_OVERRIDE) could list it, and what it holds is unchecked."""
    def unreadable(exc: OSError) -> None:
        raise _unreadable(root, Path(exc.filename or root), exc)

    try:
        entries = sorted(root.iterdir())
    except OSError as exc:
        raise _unreadable(root, root, exc) from exc
    for entry in entries:
        if entry.name in SKIPPED:
            continue
        _refuse_special(root, entry)
        if entry.is_dir() and not entry.is_symlink():
            for base, dirs, files in os.walk(entry, onerror=unreadable):
                for name in (*dirs, *files):
                    _refuse_special(root, Path(base, name))


def _unreadable(root: Path, path: Path, exc: OSError) -> UsageError:
    where = shown(str(path.relative_to(root))) if path.is_relative_to(root) and path != root else "DIR itself"
    return UsageError(f"--workdir {shown(str(root))}: {where} cannot be read ({exc.strerror or exc}); every "
                      "directory mounted is checked first")


def _refuse_special(root: Path, path: Path) -> None:
    try:
        mode = path.lstat().st_mode  # a link is a link: what it names is never opened on the host
    except OSError as exc:
        raise _unreadable(root, path, exc) from exc
    for test, what in _SPECIAL:
        if test(mode):
            raise UsageError(f"--workdir {shown(str(root))}: {shown(str(path.relative_to(root)))} is {what}; only files and "
                             "directories are mounted")


def same_repository(directory: str, commit: str | None) -> None:
    """DIR holds the recorded commit: it is a checkout of the recorded repository (exit 2 when not)."""
    if commit and _git(Path(directory), "cat-file", "-e", f"{commit}^{{commit}}") is None:
        raise UsageError(f"--workdir {shown(directory)}: does not hold the recorded commit {commit[:12]}; DIR is a "
                         "checkout of the recorded repository (git fetch it there)")


def _git(directory: Path, *args: str) -> str | None:
    """git's answer in DIR, or None when it fails."""
    try:
        proc = subprocess.run(["git", "-C", str(directory), *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def workdir_mounts(directory: str | None) -> tuple[Mount, ...]:
    """Each top-level entry of DIR over the source, read-only. A bind mount follows a symlink on the
    host, so a link that leads outside DIR (or nowhere) is left out: the checkout's own links never
    show the container a host path."""
    if directory is None:
        return ()
    root = Path(directory).resolve()
    only_files(root)  # again for every attempt: what DIR holds now
    return tuple(Mount(str(entry), f"{ROOT}/{entry.name}", read_only=True)
                 for entry in sorted(Path(directory).iterdir())
                 if entry.name not in SKIPPED and _inside(entry, root))


def _inside(entry: Path, root: Path) -> bool:
    if not entry.is_symlink():
        return True
    target = entry.resolve()
    return target.exists() and target.is_relative_to(root) and target != root


@dataclass(frozen=True)
class WorkdirDiff:
    stat: str  # git diff --stat's last line ("" when DIR is the recorded commit)
    diff: str  # the whole diff
    problem: str = ""  # why there is no diff (DIR is not a git checkout, the commit is not in it)

    def note(self, directory: str, commit: str | None) -> str:
        at = f"{_AT}{commit[:12]}" if commit else "its HEAD"
        if self.problem:
            return f"--workdir {directory}: ran in place of the recorded source; no diff against {at}: {self.problem}"
        if not self.diff:
            return f"--workdir {directory}: ran in place of the recorded source, unchanged from {at}"
        return f"--workdir {directory}: ran in place of the recorded source, changed from {at}: {self.stat}"


def report_diff(notes: Sequence[str], directory: str) -> str:
    """The whole diff of a replay's --workdir, against the commit its note names (the text report ends with it)."""
    commit = next((n.split(_AT, 1)[1].split(":")[0] for n in notes if n.startswith("--workdir") and _AT in n), None)
    return escaped(workdir_diff(directory, commit).diff, keep_lines=True)  # a repository's file may hold escapes


_AT = "the recorded commit "


def workdir_diff(directory: str, commit: str | None) -> WorkdirDiff:
    """`git -C DIR diff COMMIT` (HEAD when the capsule records none): what the developer changed."""
    base = commit or "HEAD"
    try:
        stat = subprocess.run(["git", "-C", directory, "diff", "--stat", base, "--"], capture_output=True, text=True,
                              timeout=60)
        if stat.returncode != 0:
            return WorkdirDiff("", "", escaped((stat.stderr.strip().splitlines() or ["git diff failed"])[-1][:200]))
        diff = subprocess.run(["git", "-C", directory, "diff", base, "--"], capture_output=True, text=True,
                              timeout=60, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        return WorkdirDiff("", "", f"git: {exc}"[:200])
    lines = stat.stdout.strip().splitlines()
    return WorkdirDiff(escaped(lines[-1].strip()) if lines else "", diff.stdout)
