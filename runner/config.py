"""Settings: mirrors, the extra CA a build must trust, cache and limits.

Everything comes from the environment (REPLAY_*) with sane defaults, so the same
binary serves a laptop, a reproduction farm and a CI runner.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

_DEFAULT_CA_DIR = Path("/usr/local/share/ca-certificates")


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


@dataclass(frozen=True)
class Settings:
    debian_mirror: str = field(default_factory=lambda: _env("REPLAY_DEBIAN_MIRROR", "http://deb.debian.org/debian"))
    npm_registry: str = field(default_factory=lambda: _env("REPLAY_NPM_REGISTRY", "https://registry.npmjs.org").rstrip("/"))
    pypi_index: str = field(default_factory=lambda: _env("REPLAY_PYPI_INDEX", "https://pypi.org/simple"))
    node_dist: str = field(default_factory=lambda: _env("REPLAY_NODE_DIST", "https://nodejs.org/dist").rstrip("/"))
    cache_dir: Path = field(default_factory=lambda: Path(_env("REPLAY_CACHE", str(Path.home() / ".cache" / "replay"))))
    ca_files: tuple[Path, ...] = field(default_factory=_ca_files)
    builder: str = field(default_factory=lambda: _env("REPLAY_BUILDER", "auto"))  # auto | buildkit | classic
    base_repo: str = field(default_factory=lambda: _env("REPLAY_BASE_REPO", "replay-base/debian"))
    image_repo: str = field(default_factory=lambda: _env("REPLAY_IMAGE_REPO", "replay/img"))

    @property
    def downloads(self) -> Path:
        return self.cache_dir / "downloads"

    @property
    def repos(self) -> Path:
        return self.cache_dir / "repos"


def settings() -> Settings:
    return Settings()
