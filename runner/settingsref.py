"""Every setting replay reads from the environment, documented once.

`replay doctor` lists them with their effective values, `replay help settings` and the
docs' Settings page (scripts/docs_gen.py) show this same table. Reading them stays where
each is used (runner/config.py for most); a unit test checks that every `REPLAY_*` name
read anywhere in runner/ has a row here.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from .config import Origin, Settings, origins, without_credentials

Scope = Literal["replay", "farm", "worker", "container"]


@dataclass(frozen=True)
class SettingRef:
    variable: str
    default: str  # as people read it
    meaning: str
    read_in: str  # the module that reads it
    scope: Scope = "replay"
    secret: bool = False  # its value is never shown (only whether it is set)


SETTINGS: tuple[SettingRef, ...] = (
    SettingRef("REPLAY_CA_CERTS", "the host's /usr/local/share/ca-certificates/*.crt",
               "extra CA certificates builds must trust (a TLS-intercepting company proxy); colon-separated files "
               "or directories, `none` to disable", "runner/config.py (also runner/ci/image.py)"),
    SettingRef("REPLAY_DEBIAN_MIRROR", "http://deb.debian.org/debian", "mirror for debootstrap and apt",
               "runner/config.py"),
    SettingRef("REPLAY_NPM_REGISTRY", "https://registry.npmjs.org",
               "npm registry (runtimes, package managers, dependencies; npm's and yarn's lockfile URLs of the public "
               "registry are rewritten to it); may hold credentials (https://user:token@host/), never shown",
               "runner/config.py"),
    SettingRef("REPLAY_PYPI_INDEX", "https://pypi.org/simple",
               "Python package index (pip's and uv's; a uv.lock's own URLs are used as recorded); may hold "
               "credentials, never shown", "runner/config.py"),
    SettingRef("REPLAY_NODE_DIST", "https://nodejs.org/dist", "official Node.js distribution, tried first",
               "runner/config.py"),
    SettingRef("REPLAY_CACHE", "$XDG_CACHE_HOME/replay, else ~/.cache/replay",
               "verified downloads, capsules from URLs, repository mirrors, the content store, build context "
               "slots; REPLAY_CACHE wins over XDG_CACHE_HOME", "runner/config.py"),
    SettingRef("REPLAY_BUILD_CACHE", "replay",
               "namespace of the BuildKit cache mounts' ids (<namespace>-npm, ...); a bench or a test gives its own "
               "to start from an empty cache", "runner/build/render.py"),
    SettingRef("REPLAY_REGISTRY", "Docker Hub",
               "where official distro images come from (host[:port], images under library/NAME); `none`: no "
               "registry, the nearest Debian suite", "runner/build/sources/providers/distros.py"),
    SettingRef("REPLAY_MIRRORS", "unset",
               "a file of mirror rules, one PREFIX=TARGET a line (`#` comments), as --mirror: a recorded remote "
               "starting with PREFIX is fetched from TARGET instead (a URL or a local clone or bundle)",
               "runner/build/sources/mirrors.py"),
    SettingRef("REPLAY_CAPSULE_MAX_BYTES", "67108864 (64 MiB)", "the largest capsule downloaded from a URL",
               "runner/capsules/fetch.py"),
    SettingRef("REPLAY_CAPSULE_TIMEOUT", "120",
               "seconds a capsule's download from a URL may take in all (redirects, headers and body: a server "
               "trickling its body is cut there; exit 3)", "runner/capsules/fetch.py"),
    SettingRef("REPLAY_BUILDER", "auto", "`buildkit` (through the engine's CLI), `classic` (docker SDK), `auto`",
               "runner/config.py"),
    SettingRef("REPLAY_BUILD_TIMEOUT", "3600",
               "seconds an image build may take in all (its retries included) before it is stopped (exit 3); `0` "
               "or `none`: no limit", "runner/config.py"),
    SettingRef("REPLAY_BASE_REPO", "replay-base/debian", "image name of the bootstrapped Debian base images",
               "runner/config.py"),
    SettingRef("REPLAY_IMAGE_REPO", "replay/img", "image name of the replay images", "runner/config.py"),
    SettingRef("REPLAY_SALT", "unset", "the salt twin hashed values with, to check --env values (= --salt)",
               "runner/cli/options.py", secret=True),
    SettingRef("REPLAY_DEBUG", "unset", "`1`: tracebacks of unexpected errors (= --debug)", "runner/cli/main.py"),
    SettingRef("REPLAY_PROGRESS", "unset",
               "`1`: progress lines on stderr even with --json or --quiet (`replay mcp` sets it for the commands it "
               "runs, to turn them into MCP progress notifications)", "runner/replay/progress.py"),
    SettingRef("REPLAY_FARM_DB", "farm.sqlite under the user's data directory (~/.local/share/replay/)",
               "the farm's history (= --db): a SQLite path or postgresql://USER[:PASSWORD]@HOST[:PORT]/DB",
               "runner/cli/farm.py", scope="farm"),
    SettingRef("REPLAY_BROKER", "redis://127.0.0.1:6379/0",
               "the Redis broker of `replay worker` and `farm run --executor celery` (= --broker); redis:// and "
               "rediss:// only", "runner/cli/worker.py, runner/cli/farm.py", scope="worker"),
    SettingRef("REPLAY_WORKER_HEARTBEAT", "10", "seconds between a worker's lease refreshes (= --heartbeat)",
               "runner/cli/worker.py", scope="worker"),
    SettingRef("REPLAY_WORKER_LEASE", "30", "seconds a worker's lease lasts without a refresh (= --lease)",
               "runner/cli/worker.py", scope="worker"),
    SettingRef("REPLAY_RANDOM_VALUES", "/replay/random-values.json",
               "set inside the replayed container (not read by replay): the file of recorded random values, for "
               "hook libraries", "runner/build/clock.py", scope="container"),
    SettingRef("DOCKER_HOST", "the local socket", "the engine to use", "the docker SDK"),
)


def names() -> frozenset[str]:
    return frozenset(s.variable for s in SETTINGS)


def effective(s: Settings | None = None) -> tuple[Origin, ...]:
    """Every setting of the table that replay reads, with its value and where it came from (for doctor)."""
    known = {o.variable: o for o in origins(s)}
    out = []
    for ref in SETTINGS:
        if ref.scope == "container":
            continue
        out.append(known.get(ref.variable) or _origin(ref))
    return tuple(out)


def _origin(ref: SettingRef) -> Origin:
    raw = os.environ.get(ref.variable, "").strip()
    if not raw:
        return Origin(ref.variable, ref.default, "default")
    value = "(set)" if ref.secret else without_credentials(raw)
    return Origin(ref.variable, value, f"env {ref.variable}")
