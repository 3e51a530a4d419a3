"""Settings: mirrors, the extra CA a build must trust, cache and limits.

Everything comes from the environment (REPLAY_*) with sane defaults, so the same
binary serves a laptop, a reproduction farm and a CI runner. SETTINGS (at the end) is the
reference table of every setting.
"""
from __future__ import annotations

import base64
import os
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import platformdirs

from .errors import UsageError
from .secretrules import mask_url

_DEFAULT_CA_DIR = Path("/usr/local/share/ca-certificates")


def default_cache_dir() -> Path:
    """The user's cache directory: $XDG_CACHE_HOME/replay, else ~/.cache/replay (platformdirs)."""
    return Path(platformdirs.user_cache_dir("replay", appauthor=False))


def _env(name: str, default: str) -> str:
    value = os.environ.get(name, "").strip()
    return value or default


def _ca_files() -> tuple[Path, ...]:
    """Extra CA certificates builds and replays must trust.

    REPLAY_CA_CERTS is a colon-separated list of PEM files or directories; "none"
    disables it. By default, the host's locally added CAs (a TLS-intercepting
    company proxy puts its CA there) are used, when there are any.
    """
    spec = os.environ.get("REPLAY_CA_CERTS", "").strip()
    if spec.lower() == "none":
        return ()
    paths = [Path(p) for p in spec.split(":") if p] if spec else [_DEFAULT_CA_DIR]
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files.extend(sorted(q for q in p.glob("*.crt") if q.is_file()))
        elif p.is_file():
            files.append(p)
    return tuple(files)


# A build stalled on a source that keeps the connection open without finishing (a dribbling
# registry, a full disk) would otherwise hold a farm night or a CI job for ever.
DEFAULT_BUILD_TIMEOUT_S = 3600


@dataclass(frozen=True)
class Settings:
    debian_mirror: str = field(default_factory=lambda: _env("REPLAY_DEBIAN_MIRROR", "http://deb.debian.org/debian"))
    npm_registry: str = field(default_factory=lambda: _env("REPLAY_NPM_REGISTRY", "https://registry.npmjs.org").rstrip("/"))
    pypi_index: str = field(default_factory=lambda: _env("REPLAY_PYPI_INDEX", "https://pypi.org/simple"))
    node_dist: str = field(default_factory=lambda: _env("REPLAY_NODE_DIST", "https://nodejs.org/dist").rstrip("/"))
    cache_dir: Path = field(default_factory=lambda: Path(_env("REPLAY_CACHE", str(default_cache_dir()))))
    ca_files: tuple[Path, ...] = field(default_factory=_ca_files)
    builder: str = field(default_factory=lambda: _env("REPLAY_BUILDER", "auto"))  # auto | buildkit | classic
    base_repo: str = field(default_factory=lambda: _env("REPLAY_BASE_REPO", "replay-base/debian"))
    image_repo: str = field(default_factory=lambda: _env("REPLAY_IMAGE_REPO", "replay/img"))
    build_timeout: str = field(default_factory=lambda: _env("REPLAY_BUILD_TIMEOUT", str(DEFAULT_BUILD_TIMEOUT_S)))

    @property
    def build_timeout_s(self) -> float | None:
        """The longest an image build may take (REPLAY_BUILD_TIMEOUT seconds; 0 or none: no limit)."""
        raw = self.build_timeout.strip().lower()
        if raw in ("none", "off"):
            return None
        try:
            secs = float(raw)
        except ValueError:
            secs = -1.0
        if secs == 0:
            return None
        if not secs > 0 or secs == float("inf"):
            raise UsageError(f"REPLAY_BUILD_TIMEOUT={self.build_timeout!r}: seconds (a positive number), "
                             "or 0 / none for no limit")
        return secs

    @property
    def downloads(self) -> Path:
        return self.cache_dir / "downloads"

    @property
    def repos(self) -> Path:
        return self.cache_dir / "repos"


def settings() -> Settings:
    return Settings()


@dataclass(frozen=True)
class Origin:
    """One setting's effective value and where it came from (for `replay doctor`)."""

    variable: str
    value: str
    source: str  # "env REPLAY_X", "env XDG_CACHE_HOME", "default"


def origins(s: Settings | None = None) -> tuple[Origin, ...]:
    s = s or settings()
    values = {
        "REPLAY_DEBIAN_MIRROR": s.debian_mirror, "REPLAY_NPM_REGISTRY": mask_url(s.npm_registry),
        "REPLAY_PYPI_INDEX": mask_url(s.pypi_index), "REPLAY_NODE_DIST": s.node_dist, "REPLAY_CACHE": str(s.cache_dir),
        "REPLAY_CA_CERTS": ":".join(str(p) for p in s.ca_files) or "none", "REPLAY_BUILDER": s.builder,
        "REPLAY_BASE_REPO": s.base_repo, "REPLAY_IMAGE_REPO": s.image_repo, "REPLAY_BUILD_TIMEOUT": s.build_timeout,
    }
    found = [Origin(name, value, _source(name)) for name, value in values.items()]
    docker_host = os.environ.get("DOCKER_HOST", "").strip()
    found.append(Origin("DOCKER_HOST", docker_host or "the local socket", "env DOCKER_HOST" if docker_host else "default"))
    return tuple(found)


def _source(name: str) -> str:
    if os.environ.get(name, "").strip():
        return f"env {name}"
    if name == "REPLAY_CACHE" and os.environ.get("XDG_CACHE_HOME", "").strip():
        return "env XDG_CACHE_HOME"
    return "default"


# -- registry credentials -------------------------------------------------------
# REPLAY_NPM_REGISTRY / REPLAY_PYPI_INDEX may carry credentials (https://user:token@host/...).
# The Dockerfile only ever names the registry without them; they reach the build steps that
# need them as BuildKit secrets (a temporary .npmrc / .netrc mounted for one RUN), never as
# build arguments, so nothing of them lands in a layer, the history or a label.
NPM_SECRET = "replay-npmrc"
PYPI_SECRET = "replay-netrc"


def _userinfo(url: str) -> tuple[str, str] | None:
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return None
    return urllib.parse.unquote(parts.username or ""), urllib.parse.unquote(parts.password or "")


def _npmrc(url: str, user: str, password: str) -> str:
    # npm keys auth by the registry URL without its scheme ("//host/path/:_auth"); pnpm and yarn 1 read it too
    public = urllib.parse.urlsplit(mask_url(url))
    key = f"//{public.netloc}{public.path.rstrip('/')}/"
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return f"{key}:_auth={token}\n{key}:always-auth=true\n"


def _netrc(url: str, user: str, password: str) -> str:
    # pip, uv and poetry all read ~/.netrc for an index's basic auth
    host = urllib.parse.urlsplit(url).hostname or ""
    return f"machine {host}\nlogin {user}\npassword {password}\n"


def registry_secrets(s: Settings) -> dict[str, str]:
    """The BuildKit secrets a build needs for the registries' credentials, by id (none without credentials)."""
    out: dict[str, str] = {}
    npm = _userinfo(s.npm_registry)
    if npm is not None:
        out[NPM_SECRET] = _npmrc(s.npm_registry, *npm)
    pypi = _userinfo(s.pypi_index)
    if pypi is not None:
        out[PYPI_SECRET] = _netrc(s.pypi_index, *pypi)
    return out


# --- the settings reference ------------------------------------------------------------------------
# Every setting replay reads from the environment, declared once: `replay doctor` lists them with
# their effective values, `replay help settings` and the docs' Settings page (runner/commands/topics.py)
# show this same table. A setting that is an option's default (REPLAY_SALT is --salt's) names the
# option: what it means and which commands take it come from the option's declaration
# (runner/commands). A unit test checks that every `REPLAY_*` name read anywhere in runner/ has a row
# here, and that each option row names an option declared with that variable.
Scope = Literal["replay", "farm", "worker", "container"]


@dataclass(frozen=True)
class SettingRef:
    variable: str
    default: str  # as people read it
    meaning: str = ""  # "": an option's own variable, which means what that option's declaration says
    option: str = ""  # the option it is the default of ("--salt"): its meaning and commands come from the declarations
    scope: Scope = "replay"
    secret: bool = False  # its value is never shown (only whether it is set)


SETTINGS: tuple[SettingRef, ...] = (
    SettingRef("REPLAY_CA_CERTS", "the host's /usr/local/share/ca-certificates/*.crt",
               "extra CA certificates builds must trust (a TLS-intercepting company proxy); colon-separated files or"
               " directories, `none` to disable"),
    SettingRef("REPLAY_DEBIAN_MIRROR", "http://deb.debian.org/debian", "mirror for debootstrap and apt"),
    SettingRef("REPLAY_NPM_REGISTRY", "https://registry.npmjs.org",
               "npm registry (runtimes, package managers, dependencies; npm's and yarn's lockfile URLs of the public"
               " registry are rewritten to it); may hold credentials (https://user:token@host/), never shown"),
    SettingRef("REPLAY_PYPI_INDEX", "https://pypi.org/simple",
               "Python package index (pip's and uv's; a uv.lock's own URLs are used as recorded); may hold "
               "credentials, never shown"),
    SettingRef("REPLAY_NODE_DIST", "https://nodejs.org/dist", "official Node.js distribution, tried first"),
    SettingRef("REPLAY_CACHE", "$XDG_CACHE_HOME/replay, else ~/.cache/replay",
               "verified downloads, capsules from URLs, repository mirrors, the content store, build context slots; "
               "REPLAY_CACHE wins over XDG_CACHE_HOME"),
    SettingRef("REPLAY_BUILD_CACHE", "replay",
               "namespace of the BuildKit cache mounts' ids (<namespace>-npm, ...); a bench or a test gives its own "
               "to start from an empty cache"),
    SettingRef("REPLAY_REGISTRY", "Docker Hub",
               "where official distro images come from (host[:port], images under library/NAME); `none`: no "
               "registry, the nearest Debian suite"),
    SettingRef("REPLAY_MIRRORS", "unset",
               "a file of mirror rules, one PREFIX=TARGET a line (`#` comments), as --mirror: a recorded remote "
               "starting with PREFIX is fetched from TARGET instead (a URL or a local clone or bundle)"),
    SettingRef("REPLAY_CAPSULE_MAX_BYTES", "67108864 (64 MiB)", "the largest capsule downloaded from a URL"),
    SettingRef("REPLAY_CAPSULE_TIMEOUT", "120",
               "seconds a capsule's download from a URL may take in all (connecting, redirects, headers and body: "
               "a server trickling its headers or body is cut there; exit 3)"),
    SettingRef("REPLAY_BUILDER", "auto", "`buildkit` (through the engine's CLI), `classic` (docker SDK), `auto`"),
    SettingRef("REPLAY_BUILD_TIMEOUT", "3600",
               "seconds an image build may take in all (its retries included) before it is stopped (exit 3); `0` or "
               "`none`: no limit"),
    SettingRef("REPLAY_BASE_REPO", "replay-base/debian", "image name of the bootstrapped Debian base images"),
    SettingRef("REPLAY_IMAGE_REPO", "replay/img", "image name of the replay images"),
    SettingRef("REPLAY_SALT", "unset", option="--salt", secret=True),
    SettingRef("REPLAY_DEBUG", "unset", option="--debug"),
    SettingRef("REPLAY_PROGRESS", "unset",
               "`1`: progress lines on stderr even with --json or --quiet (`replay mcp` sets it for the commands it "
               "runs, to turn them into MCP progress notifications)"),
    SettingRef("REPLAY_FARM_DB", "farm.sqlite under the user's data directory (~/.local/share/replay/)",
               option="--db", scope="farm"),
    SettingRef("REPLAY_BROKER", "redis://127.0.0.1:6379/0", option="--broker", scope="worker"),
    SettingRef("REPLAY_WORKER_HEARTBEAT", "10", option="--heartbeat", scope="worker"),
    SettingRef("REPLAY_WORKER_LEASE", "30", option="--lease", scope="worker"),
    SettingRef("REPLAY_RANDOM_VALUES", "/replay/random-values.json",
               "set inside the replayed container (not read by replay): the file of recorded random values, for hook"
               " libraries",
               scope="container"),
    SettingRef("DOCKER_HOST", "the local socket", "the engine to use"),
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
    value = "(set)" if ref.secret else mask_url(raw)
    return Origin(ref.variable, value, f"env {ref.variable}")
