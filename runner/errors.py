"""Typed errors. Only the CLI turns them into one line and an exit code.

Exit codes (everywhere): 0 success, 1 a negative answer, 2 bad input or usage,
3 the environment failed (no engine, a build that could not run).
"""
from __future__ import annotations

import errno
from enum import IntEnum
from pathlib import Path
from typing import Literal

from .textsafe import shown

# An error line names the file and the problem: a capsule's values are cut (with an
# ellipsis) and escaped, never echoed whole. The path is the user's (a URL or `<stdin>` as
# given: capsules/opening.py names it), so it is only escaped, never cut short of PATH_MAX.
PATH_LIMIT = 4096
NAME_MAX = 255
PROBLEM_LIMIT = 200


# Who is at fault, decided where the error is raised (never read back from its words): the
# capsule (or what was given with it: retrying changes nothing; a farm calls it broken), or
# the environment (the engine, a package source, the network: a farm retries next night).
Fault = Literal["capsule", "environment"]


class Exit(IntEnum):
    OK = 0
    NEGATIVE = 1
    BAD_INPUT = 2
    ENVIRONMENT = 3


class ReplayError(Exception):
    """Base of every error replay raises on purpose."""

    exit_code: Exit = Exit.ENVIRONMENT
    kind = "environment"  # the JSON envelope's error.kind
    fault: Fault = "environment"
    path: str | None = None  # the file the error is about, when there is one

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def line(self) -> str:
        return self.message


class CapsuleError(ReplayError):
    """A capsule that cannot be read: names the file and the problem (exit 2)."""

    exit_code = Exit.BAD_INPUT
    kind = "capsule"
    fault: Fault = "capsule"

    def __init__(self, path: Path | str, problem: str) -> None:
        problem = shown(problem, PROBLEM_LIMIT)
        super().__init__(f"{shown(str(path), PATH_LIMIT)}: {problem}")
        self.path = str(path)
        self.problem = problem

    def named(self, path: str) -> CapsuleError:
        """The same error about the same file, named as the user gave it (a URL, `<stdin>`)."""
        other = type(self).__new__(type(self))  # the same class (UnsupportedVersion stays one), fields kept
        other.__dict__.update(self.__dict__)
        CapsuleError.__init__(other, path, self.problem)
        return other


class PathError(CapsuleError):
    """A path the file system refuses (too long, a symlink loop, no permission, a directory where a
    file belongs...): one line naming the file and the problem in words, exit 2."""

    kind = "path"

    @classmethod
    def of(cls, path: Path | str, exc: OSError) -> PathError:
        return cls(path, _PATH_PROBLEMS.get(exc.errno or 0) or (exc.strerror or str(exc)).lower())


_PATH_PROBLEMS = {
    errno.ENOENT: "no such file or directory",
    errno.ENOTDIR: "a component of the path is not a directory",
    errno.ENAMETOOLONG: f"a name in the path is longer than the file system allows ({NAME_MAX} bytes a name, "
                        f"{PATH_LIMIT} a path)",
    errno.ELOOP: "too many levels of symbolic links (a symlink loop)",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EISDIR: "is a directory, not a file",
    errno.EEXIST: "already exists",
    errno.EROFS: "on a read-only file system",
    errno.ENOSPC: "no space left on the device",
    errno.EXDEV: "on another file system",
    errno.ENXIO: "no such device (a socket or FIFO nobody serves)",
    errno.EBUSY: "busy",
    errno.ETXTBSY: "busy (a program running)",
    errno.EINVAL: "not a valid path here",
}


class NotACapsule(CapsuleError):
    """A file or directory no reader claims (exit 2): a farm passes over it in a folder."""


class UnsupportedVersion(CapsuleError):
    """A format version newer than this replay understands."""

    def __init__(self, path: Path | str, found: str, understood: str, fmt: str) -> None:
        super().__init__(
            path,
            f"{fmt} format {found} is newer than this replay understands ({understood}); upgrade replay",
        )
        self.found = found
        self.understood = understood


class CapsuleRefused(ReplayError):
    """A readable capsule that failed verification under --require-valid: a negative answer (exit 1)."""

    exit_code = Exit.NEGATIVE
    kind = "refused"
    fault: Fault = "capsule"


class UsageError(ReplayError):
    """Bad arguments or options (exit 2)."""

    exit_code = Exit.BAD_INPUT
    kind = "usage"
    fault: Fault = "capsule"


class ImageLacks(UsageError):
    """What was asked needs a program this capsule's image does not have (exit 2, as bad usage: the
    capsule's image cannot do it, and running again changes nothing): `--debugger`'s relay needs perl."""


class EngineUnavailable(ReplayError):
    """No Docker engine answers (exit 3)."""

    exit_code = Exit.ENVIRONMENT
    kind = "engine"


class SubnetTaken(EngineUnavailable):
    """The engine refused a network because another network holds (part of) its subnet: the caller
    may try another subnet."""


class BuildFailed(ReplayError):
    """An image build that could not complete (exit 3)."""

    exit_code = Exit.ENVIRONMENT
    kind = "build"

    def __init__(self, message: str, log_tail: str = "", fault: Fault = "environment",
                 transient: bool = False) -> None:
        super().__init__(message)
        self.log_tail = log_tail
        self.fault = fault
        self.transient = transient  # a mirror or registry hiccup: worth building again


class BuildTimedOut(BuildFailed):
    """A build that did not finish within REPLAY_BUILD_TIMEOUT (exit 3): stopped, never retried."""

    def __init__(self, limit_s: float, step: str, log_tail: str = "") -> None:
        super().__init__(f"image build did not finish within {limit_s:g} s (REPLAY_BUILD_TIMEOUT) and was "
                         f"stopped; the step it was in: {step}", log_tail)
        self.step = step


class SourceUnavailable(ReplayError):
    """A runtime, package or repository that no configured source offers (exit 3)."""

    exit_code = Exit.ENVIRONMENT
    kind = "source"

    def __init__(self, message: str, fault: Fault = "environment") -> None:
        super().__init__(message)
        self.fault = fault  # "capsule": the source answers, and has not what the capsule names


class NeedsInput(ReplayError):
    """The capsule lacks something only the user can supply (e.g. --source) (exit 2)."""

    exit_code = Exit.BAD_INPUT
    kind = "needs-input"
    fault: Fault = "capsule"


class MissingExtra(ReplayError):
    """An optional part of replay whose dependencies are not installed (exit 3)."""

    exit_code = Exit.ENVIRONMENT
    kind = "missing-extra"
