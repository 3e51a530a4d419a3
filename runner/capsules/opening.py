"""One way to open a capsule, for every command that reads one.

In: what the user gave — a path (a JSON file, a NovaFabric directory or its capsule.yaml),
an `https://` / `http://` URL (downloaded to the cache, download.py), or `-` (a JSON capsule
on stdin) — and the trust keys and policy (`Trust`). Out: `Opened`, the capsule model, its
verification, the local path read and the name to show it by: the URL as given,
`<stdin>`, or the path. This is the one place that knows a URL or stdin was given: every
error raised while opening names the capsule by that name, and `Opened.naming()` does the
same for the errors planning raises about the files it read. No state is kept.

The capsule is parsed once: verification and the model come from one read. The policy:
the commands that replay or build (replay, farm, bisect, render, shell) open with the
user's `Trust`, so a capsule that does not verify is refused (exit 1) unless
--allow-unverified; the commands that show (inspect, diff, verify) open with
`trust.showing()`, which refuses nothing, and say what they found.
"""
from __future__ import annotations

import dataclasses
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, NamedTuple

from ..errors import CapsuleError, UsageError
from ..secretrules import mask_url
from . import detect
from .download import discard, downloaded, is_url, max_bytes
from .model import Capsule
from .novafabric import MANIFEST
from .trust import Trust
from .verification import Problem, VerifyResult

STDIN = "-"
STDIN_NAME = "<stdin>"


class ContentChecks(NamedTuple):
    """Checks of the capsule's own values, beyond its integrity (`replay verify` runs the planner's)."""

    label: str  # how the report's "checked:" line names them
    problems: Callable[[Capsule], tuple[Problem, ...]]


@dataclass(frozen=True)
class Opened:
    capsule: Capsule  # read from `path` (its provenance names the local copy: planning reads files there)
    verified: VerifyResult  # named by `name`
    path: Path  # what was read: the path given, a URL's cached copy, or stdin's bytes (a temporary file, gone now)
    name: str  # what to show: the URL as given, `<stdin>`, or the path

    @property
    def shown(self) -> Capsule:
        """The model as a command shows it (inspect, diff): named as given."""
        return dataclasses.replace(self.capsule, provenance=dataclasses.replace(self.capsule.provenance, path=self.name))

    def naming(self) -> AbstractContextManager[None]:
        """Errors about the files read (raised planning the capsule, say) name the capsule as given."""
        return _naming(self.path, self.name)


def open_capsule(given: str | Path, trust: Trust = Trust(), *, content_checks: ContentChecks | None = None) -> Opened:
    """The capsule, verified under `trust`: CapsuleError (exit 2) when it cannot be read,
    CapsuleRefused (exit 1) when the policy refuses it, SourceUnavailable (exit 3) when a URL
    does not answer; each naming the capsule as given."""
    with _located(given) as (path, name):
        with _naming(path, name):
            reader, parsed = detect(path)
            verified = _checked(reader.verify(path, trust.keys, parsed), name)
            capsule: Capsule = reader.read(path, parsed)
        if content_checks is not None:
            verified = _with_content(verified, capsule, content_checks)
    trust.admit(name, verified)
    return Opened(capsule, verified, path, name)


def verification(given: str | Path, keys: Sequence[Path] = (), *,
                 content_checks: ContentChecks | None = None) -> VerifyResult:
    """`replay verify`'s answer: integrity, seal and evidence, then (when the model can be read)
    the content checks. A capsule that parses but cannot be read into the model is answered, not
    raised, and never valid: the reader's refusal (a size limit: a recorded output over 64 MiB, a
    diff over 200,000 bytes...) is what replay would say, so it is an error here too, unless the
    verification already found one. Nothing is refused."""
    with _located(given) as (path, name):
        with _naming(path, name):
            reader, parsed = detect(path)
            verified = _checked(reader.verify(path, keys, parsed), name)
            try:
                capsule: Capsule | None = reader.read(path, parsed)
            except CapsuleError as exc:
                capsule = None
                if verified.valid:
                    verified = _refused(verified, path, exc)
    if capsule is None or content_checks is None:
        return verified
    return _with_content(verified, capsule, content_checks)


def _refused(verified: VerifyResult, path: Path, exc: CapsuleError) -> VerifyResult:
    """The reader's refusal as verify's error, on the file it names inside the capsule."""
    where = None
    if exc.path is not None and path.is_dir():
        try:
            where = Path(exc.path).relative_to(path).as_posix()
        except ValueError:
            pass
    problem = Problem("error", f"{exc.problem} (replay refuses it)", where if where != "." else None)
    return dataclasses.replace(verified, problems=(*verified.problems, problem),
                               checks=(*verified.checks, "the capsule reads as replay reads it (its size limits)"))


def _checked(result: VerifyResult, name: str) -> VerifyResult:
    return dataclasses.replace(result, path=name)


def _with_content(verified: VerifyResult, capsule: Capsule, checks: ContentChecks) -> VerifyResult:
    return dataclasses.replace(verified, problems=verified.problems + checks.problems(capsule),
                               checks=(*verified.checks, checks.label))


@contextmanager
def _located(given: str | Path) -> Iterator[tuple[Path, str]]:
    """(the local path to read, the name to show)."""
    text = str(given)
    if text == STDIN:
        data = read_stdin()
        with tempfile.TemporaryDirectory(prefix="replay-stdin-") as tmp:
            path = Path(tmp) / "stdin.json"
            path.write_bytes(data)
            yield path, STDIN_NAME
        return
    if isinstance(given, str) and is_url(given):
        local = downloaded(given)
        try:
            yield local, mask_url(given)  # its own errors name the URL, masked too
        except CapsuleError:
            discard(local)  # a capsule refused as unreadable leaves nothing in the cache
            raise
        return
    yield Path(given), text


@contextmanager
def _naming(path: Path, name: str) -> Iterator[None]:
    try:
        yield
    except CapsuleError as exc:
        named = _named(exc, path, name)
        if named is exc:
            raise
        raise named from None


def _named(exc: CapsuleError, path: Path, name: str) -> CapsuleError:
    """The error about `path` (or a file inside it) named by `name`; itself when it names another."""
    local = str(path)
    if name == local or exc.path is None:
        return exc
    if exc.path == local:
        return exc.named(name)
    if exc.path.startswith(local + "/"):  # a file inside a capsule directory
        return exc.named(name + exc.path[len(local):])
    return exc


def claimed_format(path: Path) -> str:
    """The format a capsule that cannot be opened says it is, by its shape and first bytes
    (a farm lists it, as broken, under that format): novafabric, twin, codeinstances or unknown.
    Only regular files are read: a FIFO or a device is `unknown`, never waited on."""
    try:
        mode = path.stat().st_mode
    except OSError:  # missing, a name too long, a symlink loop
        return "novafabric" if path.name == MANIFEST else "unknown"
    if stat.S_ISDIR(mode) or path.name == MANIFEST:
        return "novafabric"
    try:
        if not stat.S_ISREG(mode):
            return "unknown"
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError:
        return "unknown"
    if b"codeinstances/" in head:
        return "codeinstances"
    return "twin" if b'"twin"' in head else "unknown"


def read_stdin(stream: BinaryIO | None = None) -> bytes:
    """A JSON capsule's bytes from stdin, capped like a download (REPLAY_CAPSULE_MAX_BYTES);
    one line (exit 2) for a terminal, nothing, too much or no JSON. A NovaFabric capsule is a
    directory: it cannot come on stdin."""
    source = stream if stream is not None else sys.stdin.buffer
    if stream is None and sys.stdin.isatty():
        raise UsageError("`-` reads a capsule from stdin, but stdin is a terminal: pipe one in "
                         "(replay inspect - < capsule.json) or give its path")
    cap = max_bytes()
    data = source.read(cap + 1)
    if len(data) > cap:
        raise CapsuleError(STDIN_NAME, f"more than the {cap}-byte limit (REPLAY_CAPSULE_MAX_BYTES)")
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if not head:
        raise CapsuleError(STDIN_NAME, "empty: pipe a JSON capsule in, or give a capsule's path")
    if head not in (b"{", b"["):
        raise CapsuleError(STDIN_NAME, "not a JSON capsule: only twin and CodeInstances capsules (JSON files) can "
                                       "come on stdin; a NovaFabric capsule is a directory: give its path")
    return data
