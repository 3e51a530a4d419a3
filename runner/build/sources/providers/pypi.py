"""PyPI through its Simple API (PEP 691 JSON), the part every mirror serves.

The JSON API under /pypi/<name>/json is not served by every index (nor reachable
from every network), so versions and file digests come from the Simple index named
by REPLAY_PYPI_INDEX; files are downloaded host side and checked against the
index's sha256 before they enter a build context.
"""
from __future__ import annotations

import json
import re
import urllib.parse
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ....config import Settings
from ....errors import SourceUnavailable
from . import registry_http

_ACCEPT = "application/vnd.pypi.simple.v1+json"


@dataclass(frozen=True)
class PyFile:
    filename: str
    url: str
    sha256: str


@dataclass(frozen=True)
class Project:
    name: str
    versions: tuple[str, ...]
    files: tuple[PyFile, ...]


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@lru_cache(maxsize=64)
def project(index: str, name: str) -> Project:
    """One project's page of the Simple index, as JSON."""
    url = f"{index.rstrip('/')}/{_normalise(name)}/"
    try:
        doc = json.loads(registry_http.get(url, timeout=60, accept=_ACCEPT))
    except SourceUnavailable as exc:
        if "HTTP 404" in str(exc):
            raise SourceUnavailable(f"the Python package index has no project {name}", "capsule") from exc
        raise
    except ValueError as exc:  # an index that ignores the Accept header answers HTML
        raise SourceUnavailable(f"{url}: not a PEP 691 JSON answer") from exc
    files = tuple(
        PyFile(str(f["filename"]), urllib.parse.urljoin(url, str(f["url"])), str(f["hashes"]["sha256"]))
        for f in doc.get("files", []) if isinstance(f, dict) and f.get("hashes", {}).get("sha256")
        and not f.get("yanked")
    )
    versions = tuple(str(v) for v in doc.get("versions", ())) or _versions_from_files(name, files)
    return Project(name, versions, files)


def _versions_from_files(name: str, files: tuple[PyFile, ...]) -> tuple[str, ...]:
    """For indexes older than PEP 700 (no `versions` key): wheel and sdist names carry it."""
    prefix = _normalise(name).replace("-", "_") + "-"
    out: list[str] = []
    for f in files:
        stem = f.filename.replace(_normalise(name), _normalise(name).replace("-", "_"), 1)
        if stem.lower().startswith(prefix):
            version = stem[len(prefix):].split("-")[0].removesuffix(".tar.gz").removesuffix(".zip")
            if version not in out:
                out.append(version)
    return tuple(out)


def versions(settings: Settings, name: str) -> list[str]:
    return list(project(settings.pypi_index, name).versions)


def wheel(settings: Settings, name: str, version: str, platform_tag: str) -> Path:
    """The wheel of name==version for this platform, downloaded and sha256-checked (cached)."""
    prefix = f"{_normalise(name).replace('-', '_')}-{version}-"
    for f in project(settings.pypi_index, name).files:
        if f.filename.startswith(prefix) and f.filename.endswith(".whl") and platform_tag in f.filename:
            return registry_http.cached_download(settings, f.url, f"sha256:{f.sha256}", f.filename)
    raise SourceUnavailable(f"the Python package index has no {platform_tag} wheel of {name} {version}", "capsule")
