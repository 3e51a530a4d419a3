"""`replay CAPSULE --workdir DIR`: a checkout the developer edits, run in place of the recorded source.

Each of DIR's top-level entries is bind-mounted read-only over the image's /work/repo, so what
the build put there besides the source (node_modules) stays, and nothing is built again. The
listing is read again for every attempt: an entry added since shows in the next one.
"""
from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..engine import Mount
from ..errors import UsageError

ROOT = "/work/repo"  # render.workdir's root: where the image holds the recorded source
# not mounted: git's own files, and what the image's build installed into the source tree
SKIPPED = (".git", "node_modules")


def checked(given: Path) -> Path:
    if not given.is_dir():
        raise UsageError(f"--workdir {given}: not a directory")
    return given.resolve()


def workdir_mounts(directory: str | None) -> tuple[Mount, ...]:
    """Each top-level entry of DIR over the source, read-only. A bind mount follows a symlink on the
    host, so a link that leads outside DIR (or nowhere) is left out: the checkout's own links never
    show the container a host path."""
    if directory is None:
        return ()
    root = Path(directory).resolve()
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
    return workdir_diff(directory, commit).diff


_AT = "the recorded commit "


def workdir_diff(directory: str, commit: str | None) -> WorkdirDiff:
    """`git -C DIR diff COMMIT` (HEAD when the capsule records none): what the developer changed."""
    base = commit or "HEAD"
    try:
        stat = subprocess.run(["git", "-C", directory, "diff", "--stat", base, "--"], capture_output=True, text=True,
                              timeout=60)
        if stat.returncode != 0:
            return WorkdirDiff("", "", (stat.stderr.strip().splitlines() or ["git diff failed"])[-1][:200])
        diff = subprocess.run(["git", "-C", directory, "diff", base, "--"], capture_output=True, text=True,
                              timeout=60, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        return WorkdirDiff("", "", f"git: {exc}"[:200])
    lines = stat.stdout.strip().splitlines()
    return WorkdirDiff(lines[-1].strip() if lines else "", diff.stdout)
