"""What a build's log says went wrong: a full disk, a package source that never answered, a
mirror or registry hiccup (worth building again), or a step that failed for the capsule's own
reasons. Decided here once, from the log, and carried by the error (`fault`, `transient`)."""
from __future__ import annotations

import re
from collections.abc import Sequence

from ..config import settings
from ..secretrules import mask_url
from ..errors import BuildFailed

# The engine's own words when its disk is full, and what frees space (replay's leftovers, then the build cache).
_DISK_FULL = re.compile(r"no space left on device|ENOSPC|disk quota exceeded", re.IGNORECASE)
DISK_FULL_HINT = ("the engine's disk is full (no space left on device); free space with `replay gc`, "
                  "`docker builder prune` and `docker image prune`, then replay again")


# A mirror or registry hiccup in a build's log (after replay's own retries): worth building again.
TRANSIENT = ("Temporary failure resolving", "Could not connect", "Connection timed out", "ETIMEDOUT",
             "ECONNRESET", "EAI_AGAIN", "503 Service Unavailable", "502 Bad Gateway", "Connection reset by peer",
             "Hash Sum mismatch", "ReadTimeoutError")
# A package source that accepted the connection and never answered, in npm's and pip's words.
_NPM_TIMEOUT = re.compile(r"ERR_SOCKET_TIMEOUT|ETIMEDOUT|Socket timeout|network timeout at", re.I)
_PIP_TIMEOUT = re.compile(r"Read timed out|ReadTimeoutError|ConnectTimeoutError", re.I)


def disk_full(text: str) -> bool:
    """Whether an engine's message says its disk is full."""
    return bool(_DISK_FULL.search(text))


def build_failure(error: str, tail: Sequence[str]) -> BuildFailed:
    """The one-line error of a failed build: a full disk says so and how to free space, a package
    source that timed out is named (without its credentials). Whose fault it is is decided here,
    from the log, once: a full disk, a source that timed out or a hiccup is the environment's;
    any other failing step (`npm ci`, a lockfile check) the capsule's."""
    lines = [error, *tail]
    if any(disk_full(line) for line in lines):
        return BuildFailed(f"image build failed: {DISK_FULL_HINT}", "\n".join(tail))
    s = settings()
    for pattern, variable, url in ((_NPM_TIMEOUT, "REPLAY_NPM_REGISTRY", s.npm_registry),
                                   (_PIP_TIMEOUT, "REPLAY_PYPI_INDEX", s.pypi_index)):
        if any(pattern.search(line) for line in lines):
            return BuildFailed(f"image build failed: the package source {mask_url(url)} ({variable}) "
                               "did not answer in time; check it, or point the variable at a mirror that answers",
                               "\n".join(tail))
    transient = any(t in line for line in lines for t in TRANSIENT)
    return BuildFailed(f"image build failed ({error})", "\n".join(tail),
                       "environment" if transient else "capsule", transient)
