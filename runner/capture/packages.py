"""The project's package managers (from its lockfiles and package.json's packageManager)
and what is installed (`resolved`), as twin records them.

Lockfiles are looked for in every directory from the working directory up to the repo
root; the nearest one of each manager is recorded, its path relative to the repo root.
`resolved` is what is installed, not what a lockfile says: the two drift, and the
installed tree is what the command ran against.
"""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .probes import TIMEOUT_S

# lockfile -> (manager, ecosystem), in twin's order.
LOCKFILES = {
    "package-lock.json": ("npm", "node"), "npm-shrinkwrap.json": ("npm", "node"), "pnpm-lock.yaml": ("pnpm", "node"),
    "yarn.lock": ("yarn", "node"), "bun.lock": ("bun", "node"), "bun.lockb": ("bun", "node"),
    "uv.lock": ("uv", "python"), "poetry.lock": ("poetry", "python"), "Pipfile.lock": ("pipenv", "python"),
    "Cargo.lock": ("cargo", "rust"), "go.sum": ("go", "go"),
}
PYTHON_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "uv.lock", "poetry.lock",
                  "Pipfile", "Pipfile.lock", ".venv")
MAX_NODE_PACKAGES = 50_000
_DECLARED = re.compile(r"(?P<name>@?[A-Za-z0-9._-]+)@(?P<version>[^\s]+)")
_NAME_RUN = re.compile(r"[-_.]+")
# Installed distributions of an interpreter, as pip list sees them (without needing pip).
_LIST_DISTS = (
    "import importlib.metadata as m, json, sys\n"
    "json.dump({d.metadata['Name']: d.version for d in m.distributions() if d.metadata['Name']}, sys.stdout)\n"
)


def search_dirs(cwd: Path, root: Path | None) -> list[Path]:
    """The working directory and each parent up to the repo root (only cwd outside a repo)."""
    dirs = [cwd]
    if root is None:
        return dirs
    d = cwd
    while d != root and d.parent != d and root in d.parents:
        d = d.parent
        dirs.append(d)
    return dirs


def package_managers(dirs: list[Path], root: Path, versions: Mapping[str, str]) -> list[dict[str, Any]]:
    """One entry per manager: the nearest lockfile of each; package.json's pin; a bare package.json is npm."""
    found: dict[str, dict[str, Any]] = {}
    for d in dirs:
        for lockfile, (name, ecosystem) in LOCKFILES.items():
            path = d / lockfile
            if name in found or not path.is_file():
                continue
            found[name] = _entry(name, ecosystem, versions, _relative(path, root), _sha256(path))
    declared = _declared(dirs)
    if declared is not None:
        name, version = declared
        entry = found.get(name) or _entry(name, "node", versions, None, None)
        entry["declared"] = version
        found.setdefault(name, entry)
    if any((d / "package.json").is_file() for d in dirs) and not any(
            e["ecosystem"] == "node" for e in found.values()):
        found["npm"] = _entry("npm", "node", versions, None, None)
    return list(found.values())


def _entry(name: str, ecosystem: str, versions: Mapping[str, str], lockfile: str | None,
           sha: str | None) -> dict[str, Any]:
    return {"name": name, "ecosystem": ecosystem, "version": versions.get(name), "declared": None,
            "lockfile": lockfile, "lockfileSha256": sha}


def _relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _sha256(path: Path) -> str | None:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def _declared(dirs: list[Path]) -> tuple[str, str] | None:
    """package.json's packageManager ("pnpm@9.15.9+sha512..."), the nearest that has one."""
    for d in dirs:
        doc = _json(d / "package.json")
        pin = doc.get("packageManager") if isinstance(doc, dict) else None
        if isinstance(pin, str) and (m := _DECLARED.fullmatch(pin.strip())):
            return m.group("name"), m.group("version")
    return None


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


# -- resolved ------------------------------------------------------------------

def resolved_node(dirs: list[Path], limit: int = MAX_NODE_PACKAGES) -> dict[str, list[str]] | None:
    """Every installed package's versions in every node_modules from cwd up to the root
    (pnpm's .pnpm store included); None when there is no node_modules at all."""
    roots = [d / "node_modules" for d in dirs if (d / "node_modules").is_dir()]
    if not roots:
        return None
    versions: dict[str, set[str]] = {}
    seen: set[Path] = set()
    count = 0
    for name, version in _walk(roots, seen):
        if name not in versions:
            if count >= limit:
                continue
            count += 1
            versions[name] = set()
        versions[name].add(version)
    return {name: sorted(vs, key=_version_key) for name, vs in sorted(versions.items())}


def _walk(stack: list[Path], seen: set[Path]) -> Iterator[tuple[str, str]]:
    """(name, version) of each package below these node_modules directories, iteratively; symlinks
    are not followed (pnpm's links point into .pnpm, which is read itself)."""
    stack = list(reversed(stack))
    while stack:
        modules = stack.pop()
        try:
            real = modules.resolve()
        except OSError:
            continue
        if real in seen:
            continue
        seen.add(real)
        for pkg in _package_dirs(modules):
            if pkg.name == ".pnpm":
                stack.extend(sorted(p / "node_modules" for p in _dirs(pkg)))
                continue
            doc = _json(pkg / "package.json")
            if isinstance(doc, dict) and isinstance(doc.get("name"), str) and isinstance(doc.get("version"), str):
                yield doc["name"], doc["version"]
            if (pkg / "node_modules").is_dir():
                stack.append(pkg / "node_modules")


def _package_dirs(modules: Path) -> Iterator[Path]:
    for entry in _dirs(modules):
        if entry.name.startswith("@"):
            yield from _dirs(entry)
        elif entry.name == ".pnpm" or not entry.name.startswith("."):
            yield entry


def _dirs(path: Path) -> list[Path]:
    try:
        return sorted(p for p in path.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return []


def _version_key(version: str) -> tuple[Any, ...]:
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"[.+-]", version))


def is_python_project(dirs: list[Path], environ: Mapping[str, str]) -> bool:
    return bool(environ.get("VIRTUAL_ENV")) or any((d / m).exists() for d in dirs for m in PYTHON_MARKERS)


def resolved_python(interpreter: str, cwd: Path) -> dict[str, str] | None:
    """The interpreter's installed distributions, PEP 503 names; None when it cannot say."""
    try:
        proc = subprocess.run([interpreter, "-I", "-c", _LIST_DISTS], cwd=cwd, capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=TIMEOUT_S * 3)
        doc = json.loads(proc.stdout) if proc.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if not isinstance(doc, dict):
        return None
    found = {_NAME_RUN.sub("-", str(k)).lower(): str(v) for k, v in doc.items()}
    return dict(sorted(found.items()))
