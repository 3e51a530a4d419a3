"""Restore the recorded source: the commit from the remote (or --repo), the scrubbed
diff applied with git as far as it goes, then a --patch on top.

The remote comes from someone else's capsule, so git runs with only safe
transports (no `ext::`), never reads it as an option, and applies diffs with its
own path checks (nothing outside the tree).
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from ...config import Settings
from . import mirrors
from .content import ContentStore
from ...errors import Exit, NeedsInput, SourceUnavailable, UsageError
from ...secretrules import mask_urls
from ..plan import Source
from ...textsafe import quoted, shown
from ..validate import is_valid

_SAFE_ENV = {
    "GIT_ALLOW_PROTOCOL": "file:git:http:https:ssh",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_ASKPASS": "/bin/false",
    "GIT_SSH_COMMAND": "ssh -oBatchMode=yes",
}


_MIRROR_LOCK = threading.Lock()
REMOTE_LIMIT = 80  # how much of a capsule's remote an error line shows (escaped, credentials stripped)


class RemoteFailed(SourceUnavailable):
    """The capsule's remote could not give the recorded commit: unreachable (exit 3), or reachable
    without the commit (exit 2: the capsule names a commit that is not there). The line shows the
    remote cut and escaped, without credentials, and never git's own words (which echo it raw);
    `naming` puts the capsule file in front where it is known."""

    kind = "source"

    def __init__(self, remote: str, problem: str, exit_code: Exit = Exit.ENVIRONMENT) -> None:
        self.remote, self.problem, self.exit_code = remote, problem, exit_code
        super().__init__(f"the capsule's remote {quoted(mask_urls(remote), REMOTE_LIMIT)} {problem}",
                         "capsule" if exit_code == Exit.BAD_INPUT else "environment")

    def naming(self, capsule: Path | str) -> RemoteFailed:
        out = RemoteFailed(self.remote, self.problem, self.exit_code)
        out.path = str(capsule)
        out.message = f"{shown(str(capsule), 4096)}: {self.message}"
        return out


class NoRemote(NeedsInput):
    """A capsule that records a commit but no remote, replayed without --repo: usage (exit 2), as
    only the user can say where the commit is; `naming` puts the capsule file in front."""

    def __init__(self, commit: str | None) -> None:
        self.commit = commit
        super().__init__(f"the capsule records commit {shown(commit or '', 64)} but no remote to fetch it from; pass "
                         "--repo PATH_OR_URL (a clone, fork, mirror or bundle that has the commit)")

    def naming(self, capsule: Path | str) -> NoRemote:
        out = NoRemote(self.commit)
        out.path = str(capsule)
        out.message = f"{shown(str(capsule), 4096)}: {self.message}"
        return out


# What git's failure means, by its words (none of which is shown: they hold the remote).
_BAD_URL = "its URL is malformed"
_CLONE_REASONS = (
    (re.compile(r"bad/illegal format|malformed|illegal character|invalid url", re.I), _BAD_URL),
    (re.compile(r"could not resolve|name or service not known|temporary failure in name", re.I), "host not found"),
    (re.compile(r"connection refused|failed to connect|couldn't connect|could not connect", re.I), "no connection"),
    (re.compile(r"timed out|timeout|too slow|low speed|no result after", re.I), "timed out"),
    (re.compile(r"authentication|could not read username|permission denied|403|401", re.I),
     "needs credentials this machine does not have"),
    (re.compile(r"not found|does not exist|does not appear to be a git repository|404", re.I), "has no such repository"),
    (re.compile(r"ssl|certificate", re.I), "failed the TLS handshake"),
)


def _clone_reason(stderr: str) -> str:
    return next((why for pattern, why in _CLONE_REASONS if pattern.search(stderr)), "refused the clone")


@dataclass(frozen=True)
class Restored:
    commit: str | None
    diff: str  # "applied", "partial", "none", "failed"
    patch: str  # "applied", "none", "failed"
    rejected: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


_NETWORK_URL = re.compile(r"^(https?|git|ssh)://|^[\w.-]+@[\w.-]+:")  # scp-like user@host:path too
GIT_TIMEOUT_S = 900


def _git(args: list[str], cwd: Path | None = None, check: bool = True,
         stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, **_SAFE_ENV}
    # a remote that stalls (under 1 KB/s for a minute) is dropped rather than waited on forever
    cmd = ["git", "-c", "protocol.ext.allow=never", "-c", "core.hooksPath=/dev/null",
           "-c", "http.lowSpeedLimit=1000", "-c", "http.lowSpeedTime=60", *args]
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, input=stdin, timeout=GIT_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise SourceUnavailable(f"git {args[0]}: no result after {GIT_TIMEOUT_S} s") from exc
    if check and proc.returncode != 0:
        msg = proc.stderr.decode(errors="replace").strip().splitlines()
        raise SourceUnavailable(f"git {args[0]}: {shown(mask_urls(msg[-1]), 200) if msg else 'failed'}")
    return proc


def check_commit(commit: str) -> str:
    if not is_valid("commit", commit):
        raise SourceUnavailable(f"{quoted(commit)} is not a commit id (7-64 hex digits)", "capsule")
    return commit


def fetch_location(remote: str, trusted: bool) -> tuple[str, mirrors.Mirror | None]:
    """Where a remote is fetched from: --repo (trusted) as given, it wins for every capsule; a
    capsule's own remote through the mirror rules (mirrors.py), else as recorded."""
    rule = None if trusted else mirrors.configured().match(remote)
    return (rule.rewrite(remote), rule) if rule else (remote, None)


def _mirror(settings: Settings, remote: str, commit: str, trusted: bool) -> Path:
    """A cached bare clone of the remote (or of its mirror) that holds the commit.

    A capsule's own remote must be a network URL: a local path or file:// would let
    someone else's capsule copy any repository of this machine into an image. Local
    clones and bundles come only from the user, through --repo (trusted) or a mirror rule."""
    named = quoted(mask_urls(remote), REMOTE_LIMIT)
    if remote.startswith("-"):
        raise RemoteFailed(remote, "looks like an option: refused", Exit.BAD_INPUT)
    url, rule = fetch_location(remote, trusted)
    if not trusted and rule is None and not _NETWORK_URL.match(remote):
        raise NeedsInput(f"the capsule's remote {named} is not a network URL; "
                         "pass --repo PATH_OR_URL to use a local clone, or --mirror PREFIX=PATH_OR_URL")
    check_commit(commit)
    local = Path(url).expanduser()
    url = str(local.resolve()) if (trusted or rule) and local.exists() else url
    via = f" through the mirror {quoted(mask_urls(url), REMOTE_LIMIT)} ({rule.origin})" if rule else ""
    cache = settings.repos / hashlib.sha256(url.encode()).hexdigest()[:20]
    with _MIRROR_LOCK:  # bisect builds both ends at once: one clone per remote
        if not cache.exists():
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix="clone-", dir=cache.parent))
            try:
                _clone(url, tmp / "repo.git", remote, via, needs_input=not (trusted or rule))
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
            raise RemoteFailed(remote, f"answers{via}, but commit {commit} is not in it (pass --repo with a clone "
                               "that has it)", Exit.BAD_INPUT)
    return cache


# Why a clone of the capsule's own remote fails that only the user can mend (--repo or --mirror): exit 2.
# Not "host not found" nor "no connection": a DNS outage or a network down looks the same from
# here, and is the environment's (exit 3; a farm's infra-error, retried next night, not broken).
_NEEDS_INPUT = frozenset({"has no such repository", "needs credentials this machine does not have"})


def _clone(url: str, dest: Path, remote: str, via: str = "", needs_input: bool = False) -> None:
    """A bare clone; a failure says why in replay's words (exit 3: the remote cannot be reached, its
    host not found or the connection refused; exit 2 when `needs_input`, the remote is the
    capsule's own, and it answered that only another one will do)."""
    try:
        proc = _git(["clone", "--bare", "--quiet", "--", url, str(dest)], check=False)
    except SourceUnavailable as exc:  # no result in GIT_TIMEOUT_S
        raise RemoteFailed(remote, f"cannot be cloned{via}: no answer in {GIT_TIMEOUT_S} s") from exc
    if proc.returncode != 0:
        why = _clone_reason(proc.stderr.decode(errors="replace"))
        if why == _BAD_URL:  # the capsule's own text is wrong, not the network
            raise RemoteFailed(remote, f"cannot be cloned{via}: {why}", Exit.BAD_INPUT)
        raise RemoteFailed(remote, f"cannot be cloned{via}: {why} (pass --repo PATH_OR_URL or --mirror "
                                   "PREFIX=PATH_OR_URL: a clone, fork, mirror or bundle that has the commit)",
                           Exit.BAD_INPUT if needs_input and why in _NEEDS_INPUT else Exit.ENVIRONMENT)


def commits_between(settings: Settings, remote: str, trusted: bool, good: str, bad: str) -> list[tuple[str, str]]:
    """(sha, subject) of the commits after `good` up to `bad`, oldest first, along bad's
    first parents: the line `git bisect --first-parent` walks (a merged branch counts
    as its merge commit)."""
    cache = _mirror(settings, remote, bad, trusted)
    _mirror(settings, remote, good, trusted)
    if _git(["merge-base", "--is-ancestor", good, bad], cwd=cache, check=False).returncode != 0:
        raise UsageError(f"the good commit {good[:12]} is not an ancestor of the bad commit {bad[:12]}: "
                         "no line of commits leads from one to the other")
    # both are checked hex ids (never options); NUL-separated because a subject is free text
    out = _git(["log", "--first-parent", "--reverse", "--format=%H%x00%s", bad, f"^{good}", "--"], cwd=cache).stdout
    rows = (line.partition("\0") for line in out.decode("utf-8", "replace").split("\n"))
    return [(sha, subject) for sha, sep, subject in rows if sep]


def ship_tree(source: Source, settings: Settings, store: ContentStore) -> str | None:
    """On the machine that sends the work (the farm's coordinator): the commit's tree, put in
    the content store under the source's name, when this machine's rules fetch it from a
    local path (a mirror's or --repo's), which a worker elsewhere cannot read. None when the
    worker fetches the source itself (a network URL, or a remote no rule of this machine serves)."""
    if source.local_tree or not source.remote or not source.commit:
        return None
    url, rule = fetch_location(source.remote, source.remote_from_user)
    if (rule is None and not source.remote_from_user) or not mirrors.is_local(url):
        return None
    known = store.source_tree(source.remote, source.commit)
    if known is not None:
        return known
    cache = _mirror(settings, source.remote, source.commit, source.remote_from_user)
    tar = _git(["archive", "--format=tar", source.commit], cwd=cache).stdout
    digest = store.put_bytes(tar)
    store.put_source(source.remote, source.commit, digest)
    return digest


def _untar(tar: Path, dest: Path) -> None:
    """A shipped tree, unpacked as _extract unpacks a fresh one."""
    with open(tar, "rb") as fh:
        proc = subprocess.run(["tar", "-x", "--no-same-owner", "-C", str(dest)], stdin=fh,
                              capture_output=True, timeout=GIT_TIMEOUT_S)
    if proc.returncode != 0:
        raise SourceUnavailable(f"the shipped tree {tar.name[:12]}: it could not be extracted")


def _extract(cache: Path, commit: str, dest: Path) -> None:
    """git archive piped into tar: the tree never sits whole in memory."""
    env = {**os.environ, **_SAFE_ENV}
    with subprocess.Popen(["git", "archive", "--format=tar", commit], cwd=cache, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as archive:
        tar = subprocess.run(["tar", "-x", "--no-same-owner", "-C", str(dest)], stdin=archive.stdout,
                             capture_output=True, timeout=GIT_TIMEOUT_S)
        archive.wait(timeout=GIT_TIMEOUT_S)
    if archive.returncode != 0 or tar.returncode != 0:
        raise SourceUnavailable(f"git archive {commit}: the tree could not be extracted")


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


_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def cut_to_whole_hunks(diff: str) -> tuple[str, str | None]:
    """A truncated diff (cut at a line boundary) ends inside a hunk, which makes git refuse
    the whole diff as corrupt: keep everything before that hunk, so what was recorded whole
    still applies. Returns the kept diff and the file whose change was cut (None if none)."""
    parts = diff.split("\n")  # not splitlines(): a changed line may hold \r or \f
    lines = [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    section, section_name, hunks_in_section = 0, None, 0
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            section, section_name, hunks_in_section = i, _file_name(line), 0
        elif line.startswith("GIT binary patch"):
            end = _binary_end(lines, i + 1)
            if end is None:
                return "".join(lines[:section]), section_name
            i = end
            hunks_in_section += 1
            continue
        elif (m := _HUNK.match(line)) is not None:
            end = _hunk_end(lines, i + 1, int(m.group(1) or 1), int(m.group(2) or 1))
            if end is None:  # a header whose hunks were all cut away is dropped with it
                return "".join(lines[:i] if hunks_in_section else lines[:section]), section_name
            i = end
            hunks_in_section += 1
            continue
        i += 1
    if section_name is not None and hunks_in_section == 0 and any(line.startswith("--- ") for line in lines[section:]):
        return "".join(lines[:section]), section_name  # cut between the file's header and its first hunk
    return diff, None


def _file_name(header: str) -> str:
    parts = header.rstrip("\n").split(" b/", 1)
    return parts[1] if len(parts) == 2 else header[len("diff --git "):].strip()


def _hunk_end(lines: list[str], i: int, old: int, new: int) -> int | None:
    """Index past a hunk's body, or None when the diff ends before it is whole."""
    while old > 0 or new > 0:
        if i >= len(lines):
            return None
        tag = lines[i][:1]
        if tag == " " or lines[i] == "\n":  # an empty context line whose blank was stripped counts, as in git
            old, new = old - 1, new - 1
        elif tag == "-":
            old -= 1
        elif tag == "+":
            new -= 1
        elif tag != "\\":
            return None  # a hunk shorter than its header says: corrupt, treated as cut here
        i += 1
    while i < len(lines) and lines[i].startswith("\\"):  # "\ No newline at end of file"
        i += 1
    return i


def _binary_end(lines: list[str], i: int) -> int | None:
    """Index past a binary patch (a forward and a reverse block, each ended by an empty line)."""
    blocks = 0
    while i < len(lines) and blocks < 2:
        if lines[i].strip() == "":
            blocks += 1
        i += 1
    return i if blocks == 2 else None


def _touched(proc: subprocess.CompletedProcess[bytes]) -> bool:
    return b"Applied patch" in proc.stderr or b"cleanly" in proc.stderr


def restore(source: Source, settings: Settings, dest: Path, store: ContentStore) -> Restored:
    """Write the source tree into dest (which must not exist yet)."""
    notes: list[str] = []
    if source.local_tree:  # --source DIR, packed into the content store when planned
        store.extract_tree(source.local_tree, dest)
        commit = None
        diff_status = "none"
        rejected: tuple[str, ...] = ()
    else:
        if not source.remote:
            raise NoRemote(source.commit)
        if not source.commit:
            raise SourceUnavailable("no commit to restore", "capsule")
        shipped = store.source_tree(source.remote, source.commit)
        if shipped is not None:  # the coordinator read it from its mirror (ship_tree)
            dest.mkdir(parents=True)
            _untar(store.path(shipped), dest)
        else:
            url, rule = fetch_location(source.remote, source.remote_from_user)
            cache = _mirror(settings, source.remote, source.commit, source.remote_from_user)
            dest.mkdir(parents=True)
            _extract(cache, source.commit, dest)
            if rule is not None:
                notes.append(f"source fetched from the mirror {quoted(mask_urls(url), REMOTE_LIMIT)} "
                             f"({rule.origin}) instead of the recorded remote")
        commit = source.commit
        diff, cut_file = cut_to_whole_hunks(source.diff) if source.diff_truncated else (source.diff, None)
        diff_status, rejected = _apply(dest, diff, "diff")
        if source.diff_truncated:
            notes.append("the recorded diff was truncated: applied up to the cut; "
                         + (f"{cut_file}'s change at the cut and " if cut_file else "")
                         + "files past the cut are not restored")
        if source.diff_redacted and diff_status != "applied":
            notes.append("the recorded diff was redacted (scrubbed secrets) and did not apply fully")
        if diff_status in ("partial", "failed"):
            notes.append(f"the recorded diff applied {diff_status}ly" + (f"; rejected: {', '.join(rejected)}" if rejected else ""))
    patch_status, patch_rej = _apply(dest, source.patch, "patch")
    if patch_status in ("partial", "failed"):
        raise SourceUnavailable(f"--patch does not apply to the restored source ({', '.join(patch_rej) or 'no hunk applied'})",
                                "capsule")
    return Restored(commit, diff_status, patch_status, rejected, tuple(notes))
