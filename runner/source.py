"""Restore the recorded source: the commit from the remote (or --repo), the scrubbed
diff applied with git as far as it goes, then a --patch on top.

The remote comes from someone else's capsule, so git runs with only safe
transports (no `ext::`), never reads it as an option, and applies diffs with its
own path checks (nothing outside the tree).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from .config import Settings
from .errors import SourceUnavailable
from .plan import Source

_SAFE_ENV = {
    "GIT_ALLOW_PROTOCOL": "file:git:http:https:ssh",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_ASKPASS": "/bin/false",
    "GIT_SSH_COMMAND": "ssh -oBatchMode=yes",
}


_MIRROR_LOCK = threading.Lock()


@dataclass(frozen=True)
class Restored:
    commit: str | None
    diff: str  # "applied", "partial", "none", "failed"
    patch: str  # "applied", "none", "failed"
    rejected: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def _git(args: list[str], cwd: Path | None = None, check: bool = True, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, **_SAFE_ENV}
    proc = subprocess.run(["git", "-c", "protocol.ext.allow=never", "-c", "core.hooksPath=/dev/null", *args],
                          cwd=cwd, env=env, capture_output=True, input=stdin)
    if check and proc.returncode != 0:
        msg = proc.stderr.decode(errors="replace").strip().splitlines()
        raise SourceUnavailable(f"git {args[0]}: {msg[-1] if msg else 'failed'}")
    return proc


def _mirror(settings: Settings, remote: str, commit: str) -> Path:
    """A cached bare clone of the remote that holds the commit."""
    if remote.startswith("-"):
        raise SourceUnavailable(f"refusing the remote {remote!r}: it looks like an option")
    local = Path(remote).expanduser()
    url = str(local.resolve()) if local.exists() else remote
    cache = settings.repos / hashlib.sha256(url.encode()).hexdigest()[:20]
    with _MIRROR_LOCK:  # bisect builds both ends at once: one clone per remote
        if not cache.exists():
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix="clone-", dir=cache.parent))
            try:
                _git(["clone", "--bare", "--quiet", "--", url, str(tmp / "repo.git")])
                try:
                    (tmp / "repo.git").rename(cache)
                except OSError:
                    if not cache.exists():  # another process won the race: use its clone
                        raise
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    if _git(["cat-file", "-e", f"{commit}^{{commit}}"], cwd=cache, check=False).returncode != 0:
        _git(["fetch", "--quiet", "--", url, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"], cwd=cache, check=False)
        if _git(["cat-file", "-e", f"{commit}^{{commit}}"], cwd=cache, check=False).returncode != 0:
            raise SourceUnavailable(f"commit {commit} is not in {remote} (pass --repo with a clone that has it)")
    return cache


def _apply(dest: Path, diff: str, label: str) -> tuple[str, tuple[str, ...]]:
    if not diff.strip():
        return "none", ()
    data = diff.encode() if diff.endswith("\n") else (diff + "\n").encode()
    with tempfile.NamedTemporaryFile(suffix=".diff", delete=False) as fh:
        fh.write(data)
    try:
        if _git(["apply", "--whitespace=nowarn", "--binary", fh.name], cwd=dest, check=False).returncode == 0:
            return "applied", ()
        proc = _git(["apply", "--whitespace=nowarn", "--binary", "--reject", fh.name], cwd=dest, check=False)
        rejected = tuple(sorted(str(p.relative_to(dest)) for p in dest.rglob("*.rej")))
        for p in dest.rglob("*.rej"):
            p.unlink()
        status = "partial" if proc.returncode != 0 and _touched(proc) else ("applied" if proc.returncode == 0 else "failed")
        return status, rejected
    finally:
        os.unlink(fh.name)


def _touched(proc: subprocess.CompletedProcess[bytes]) -> bool:
    return b"Applied patch" in proc.stderr or b"cleanly" in proc.stderr


def restore(source: Source, settings: Settings, dest: Path) -> Restored:
    """Write the source tree into dest (which must not exist yet)."""
    notes: list[str] = []
    if source.local_dir:
        src = Path(source.local_dir)
        if not src.is_dir():
            raise SourceUnavailable(f"--source {src}: not a directory")
        shutil.copytree(src, dest, symlinks=True, ignore=shutil.ignore_patterns(".git", "node_modules"))
        commit = None
        diff_status = "none"
        rejected: tuple[str, ...] = ()
    else:
        if not source.remote:
            raise SourceUnavailable("the capsule records a commit but no remote; pass --repo PATH_OR_URL")
        if not source.commit:
            raise SourceUnavailable("no commit to restore")
        cache = _mirror(settings, source.remote, source.commit)
        dest.mkdir(parents=True)
        archive = _git(["archive", "--format=tar", source.commit], cwd=cache).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
        commit = source.commit
        diff_status, rejected = _apply(dest, source.diff, "diff")
        if source.diff_truncated:
            notes.append("the recorded diff was truncated: files past the cut are not restored")
        if source.diff_redacted and diff_status != "applied":
            notes.append("the recorded diff was redacted (scrubbed secrets) and did not apply fully")
        if diff_status in ("partial", "failed"):
            notes.append(f"the recorded diff applied {diff_status}ly" + (f"; rejected: {', '.join(rejected)}" if rejected else ""))
    patch_status, patch_rej = _apply(dest, source.patch, "patch")
    if patch_status in ("partial", "failed"):
        raise SourceUnavailable(f"--patch does not apply to the restored source ({', '.join(patch_rej) or 'no hunk applied'})")
    return Restored(commit, diff_status, patch_status, rejected, tuple(notes))
