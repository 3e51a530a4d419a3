"""Which node installs a lockfile's npm dependencies.

`npm ci` of a lockfile that runs no package code gives the same node_modules on any node:
it depends on the lockfile, the npm version and the platform. Then the dependency layer is
installed with an *installer node* (the plan's installer_node: the newest release of the
runtime's major, so capsules differing only in their node patch or minor share it), and the
plan's node goes in after it: an image that differs only in the node version reuses the
dependency layer. The installer node is a build stage of its own, bind-mounted for that one
step (BuildKit), never part of the image.

What could make the result depend on the node version, each a reason to keep the plain order
(node, then the install), is read from the lockfile here:
- a package with an install script (npm records `hasInstallScript` for preinstall, install,
  postinstall and an implicit `node-gyp rebuild`): it runs on the node that installs;
- a linked (workspace, file:) or git dependency: npm runs its `prepare` script;
- an optional package whose `engines.node` the two nodes judge differently: npm skips an
  optional package its node does not satisfy;
- lockfileVersion 1 (no `packages` section to read it from), or an npm before 7 (it reads
  only the version 1 part).
An optional package this platform never installs (its `os` or `cpu` excludes linux-x64) is
skipped on every node, so it is no reason. The root's own scripts are not either: they are
kept out of the dependency layer and run with the source, on the plan's node.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .plan import Plan, Runtime
from .sources.providers.versions import satisfies, vkey

# The platform every image is built for (its node is the linux-x64 build).
PLATFORM = {"os": "linux", "cpu": "x64"}
MAX_LOCKFILE_BYTES = 64 << 20  # a bigger one is not read: the plain order is kept


@dataclass(frozen=True)
class DepsNode:
    """The dependencies are installed with node `version`; the command runs on `runtime`."""

    version: str
    runtime: Runtime

    def note(self) -> str:
        rt = self.runtime
        on = f"the recorded node {rt.version}" if rt.exact else f"node {rt.version} (nearest to the recorded {rt.recorded})"
        return f"dependencies installed with node {self.version}: the lockfile runs no install scripts; the command runs on {on}"


def choose(plan: Plan, deps_dir: Path, builder: str) -> tuple[DepsNode | None, str]:
    """The installer node for this plan's build, or None and why not ("" when there is no npm
    lockfile to install). `deps_dir` holds the lockfile as the build will see it."""
    rt, installer, lock = plan.runtime("node"), plan.installer_node, plan.lock
    if rt is None or installer is None or lock is None or lock.manager != "npm":
        return None, ""
    if builder != "buildkit":
        return None, "the classic builder cannot mount a build stage"
    if vkey(installer.version)[:1] != vkey(rt.version)[:1]:
        return None, f"the installer node {installer.version} is not of node {rt.version}'s major"
    npm = plan.tool("npm")
    if npm is None or npm.source != "npm-registry":
        return None, "npm is not installed at a version of its own"
    if vkey(npm.version)[:1] < (7,):
        return None, f"npm {npm.version} reads only the lockfile's version 1 part"
    why = lock_blocker(_read(deps_dir / lock.path), installer.version, rt.version)
    return (None, why) if why else (DepsNode(installer.version, rt), "")


def _read(path: Path) -> Any:
    try:
        if path.stat().st_size > MAX_LOCKFILE_BYTES:
            return None
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def lock_blocker(lock: Any, installer: str, runtime: str) -> str | None:
    """Why `npm ci` of this package-lock.json could come out otherwise on node `runtime` than on
    node `installer`; None when it cannot."""
    if not isinstance(lock, dict):
        return "the lockfile cannot be read"
    version = lock.get("lockfileVersion")
    if not isinstance(version, int) or version < 2:
        return f"lockfileVersion {version} records no install scripts"
    packages = lock.get("packages")
    if not isinstance(packages, dict):
        return "the lockfile has no packages section"
    for key, entry in packages.items():
        if key == "":
            continue
        why = _package_blocker(key.rpartition("node_modules/")[2] or key, entry, installer, runtime)
        if why:
            return why
    return None


def _package_blocker(name: str, entry: Any, installer: str, runtime: str) -> str | None:
    if not isinstance(entry, dict):
        return f"{name}: not a lockfile entry"
    if entry.get("link"):
        return f"{name} is linked (a workspace or file: dependency): npm runs its prepare script"
    resolved = entry.get("resolved")
    if isinstance(resolved, str) and not resolved.startswith(("https://", "http://")):
        return f"{name} comes from {resolved.split(':')[0]}: npm runs a git dependency's prepare script"
    optional = entry.get("optional") is True
    if optional and not _installable_here(entry):
        return None  # skipped on this platform whatever the node
    if entry.get("hasInstallScript"):
        return f"{name} has an install script"
    engines = entry.get("engines")
    wanted = engines.get("node") if isinstance(engines, dict) else None
    if optional and wanted is not None:
        a = satisfies(installer, wanted) if isinstance(wanted, str) else None
        b = satisfies(runtime, wanted) if isinstance(wanted, str) else None
        if a is None or b is None or a != b:
            return f"optional {name} wants node {wanted}: npm skips it by the node version"
    return None


def _installable_here(entry: dict[str, Any]) -> bool:
    """npm-install-checks' checkPlatform for os and cpu (libc is not read: counted as installable)."""
    return all(_allows(entry.get(field), value) for field, value in PLATFORM.items())


def _allows(spec: Any, value: str) -> bool:
    if spec is None:
        return True
    items = [spec] if isinstance(spec, str) else spec
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        return True  # not a list npm reads: counted as installable (the conservative side)
    if items == ["any"]:
        return True
    negated = [i[1:] for i in items if i.startswith("!")]
    if value in negated:
        return False
    return value in items or len(negated) == len(items)
