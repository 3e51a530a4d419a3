"""The package managers and lockfiles of a replay plan (part of the planner).

Node package managers come from the npm registry, Python ones from PyPI; those that
ship inside a runtime (go, cargo, bun) are reported with it. One node lockfile and
one Python lockfile are installed; every other recorded lockfile gets a row saying
why it is not.
"""
from __future__ import annotations

from pathlib import Path, PurePosixPath

from ..capsules.model import Capsule, PackageManager
from ..config import Settings
from .sources.content import ContentStore
from .plan import Fidelity, Lock, Runtime, Tool
from .sources.providers import BUNDLED_TOOLS, NODE_TOOLS, PYTHON_TOOLS, resolve_node_tool, resolve_python_tool
from .validate import check, relative_path

NODE_LOCK_MANAGERS = ("npm", "pnpm", "yarn")
DEFAULT_NODE_TOOL_LINES = {"npm": "10", "pnpm": "10", "yarn": "1"}  # a package manager recorded without a version
PY_LOCK_MANAGERS = {"uv.lock": "uv", "poetry.lock": "poetry", "Pipfile.lock": "pipenv", "requirements.txt": "pip"}
_NOT_INSTALLED = {
    "go.sum": "the Go module proxy is not reachable from builds here; vendored modules are used as they are",
    "Cargo.lock": "crates.io is not reachable from builds here; vendored crates are used as they are",
}


def node_tools(c: Capsule, runtimes: tuple[Runtime, ...], settings: Settings, rows: list[Fidelity]) -> tuple[Tool, ...]:
    if not any(r.name == "node" for r in runtimes):
        return ()
    wanted: dict[str, str | None] = {"npm": None}
    for pm in c.package_managers:
        if pm.name in NODE_TOOLS:
            wanted[pm.name] = pm.declared or pm.version
    for name in list(wanted):
        wanted[name] = wanted[name] or c.tools.get(name)
    out = []
    for name, version in wanted.items():
        line = DEFAULT_NODE_TOOL_LINES.get(name, "10")
        tool, row = resolve_node_tool(name, (version or line).split("+")[0], settings)
        if version is None:  # one row: what was recorded (nothing) and what the default gave
            row = Fidelity(row.fact, "not recorded", row.replayed, row.status if tool is None else "approximated",
                           row.why if tool is None else f"the capsule records no version; the newest {line}.x")
        rows.append(row)
        if tool:
            out.append(tool)
    return tuple(sorted(out, key=lambda t: t.name))


def python_tools(c: Capsule, runtimes: tuple[Runtime, ...], lock: Lock | None, settings: Settings,
                 rows: list[Fidelity]) -> tuple[Tool, ...]:
    """pip when its version is recorded; uv, poetry and pipenv when the project uses them
    (recorded package manager, the lockfile's manager, or the command itself)."""
    if not any(r.name == "python" for r in runtimes):
        return ()
    wanted: dict[str, str | None] = {}
    if "pip" in c.tools:
        wanted["pip"] = c.tools["pip"]
    for pm in c.package_managers:
        if pm.name in PYTHON_TOOLS and (pm.name != "pip" or pm.version):
            wanted[pm.name] = pm.declared or pm.version or c.tools.get(pm.name)
    if lock is not None and lock.manager != "pip":
        wanted.setdefault(lock.manager, c.tools.get(lock.manager))
    prog = PurePosixPath(c.command.argv[0]).name if c.command.argv else ""
    if prog in PYTHON_TOOLS and prog != "pip":
        wanted.setdefault(prog, c.tools.get(prog))
    out = []
    for name, version in sorted(wanted.items()):
        # The recorded version only selects among the index's releases; it never reaches the build.
        tool, row = resolve_python_tool(name, version, settings)
        rows.append(row)
        if tool:
            out.append(tool)
    return tuple(out)


def bundled_tool_rows(c: Capsule, runtimes: tuple[Runtime, ...]) -> list[Fidelity]:
    """go, cargo and bun as package managers: they are installed with their runtime."""
    rows = []
    by_name = {r.name: r for r in runtimes}
    for pm in c.package_managers:
        runtime_name = BUNDLED_TOOLS.get(pm.name)
        if runtime_name is None:
            continue
        recorded = pm.version or c.tools.get(pm.name) or "not recorded"
        rt = by_name.get(runtime_name)
        if rt is None:
            rows.append(Fidelity(f"package manager {pm.name}", recorded, "-", "not applied",
                                 f"comes with the {runtime_name} runtime, which is not installed"))
        else:
            rows.append(Fidelity(f"package manager {pm.name}", recorded, f"with {runtime_name} {rt.version}",
                                 "exact" if rt.exact else "approximated",
                                 f"comes with the {runtime_name} runtime ({rt.source})"))
    return rows


def locks(c: Capsule, rows: list[Fidelity], store: ContentStore) -> tuple[Lock | None, Lock | None]:
    """The node lockfile and the Python lockfile to install (the first of each recorded)."""
    node: Lock | None = None
    python: Lock | None = None
    for pm in c.package_managers:
        if not pm.lockfile:
            continue
        kind = _lock_kind(c, pm)
        if pm.name in NODE_LOCK_MANAGERS and node is None:
            node = _repo_lock(c, pm.name, pm, rows)
        elif kind in PY_LOCK_MANAGERS and python is None:
            python = _python_lock(c, PY_LOCK_MANAGERS[kind], pm, rows, store)
        else:
            why = _NOT_INSTALLED.get(kind, f"{pm.name} lockfiles are not installed yet; resolved versions are pinned instead")
            rows.append(Fidelity("lockfile", pm.lockfile, "-", "not applied", why))
    if python is None and c.python and c.python.lock_file_kind and not c.python.lock_file_ref:
        rows.append(Fidelity("lockfile", c.python.lock_file_kind, "-", "not applied",
                             "the capsule records its hash but not its path; the installed packages are pinned instead"))
    return node, python


def _lock_kind(c: Capsule, pm: PackageManager) -> str:
    if _in_capsule(c) and c.python and c.python.lock_file_kind:
        return c.python.lock_file_kind
    return PurePosixPath(pm.lockfile or "").name


def _in_capsule(c: Capsule) -> bool:
    """NovaFabric ships the lockfile inside the capsule (lock_file_ref is capsule-relative)."""
    return c.provenance.format.value == "novafabric"


def _checked_rel(c: Capsule, path: str) -> PurePosixPath:
    return PurePosixPath(relative_path(path, "lockfile path", c.provenance.path))


def _repo_lock(c: Capsule, manager: str, pm: PackageManager, rows: list[Fidelity]) -> Lock:
    rel = _checked_rel(c, pm.lockfile or "")
    rows.append(Fidelity("lockfile", str(rel), str(rel), "exact", "sha256 checked inside the build"))
    return Lock(manager, str(rel), pm.lockfile_sha256)


def _python_lock(c: Capsule, manager: str, pm: PackageManager, rows: list[Fidelity], store: ContentStore) -> Lock:
    if not _in_capsule(c):
        lock = _repo_lock(c, manager, pm, rows)
        rows[-1] = Fidelity("lockfile", lock.path, lock.path, "exact", f"sha256 checked inside the build; {_how(manager)}")
        return lock
    ref = _checked_rel(c, pm.lockfile or "")
    name = c.python.lock_file_kind if c.python and c.python.lock_file_kind else ref.name
    check("file name", name, "lock file kind", c.provenance.path)
    rows.append(Fidelity("lockfile", f"{ref} (in the capsule)", name, "exact",
                         f"sha256 checked inside the build; {_how(manager)}"))
    origin = Path(c.provenance.path) / ref
    content = store.put_file(origin, c.provenance.path, "lockfile") if origin.exists() else None
    return Lock(manager, name, pm.lockfile_sha256, content=content)


def _how(manager: str) -> str:
    return {"uv": "uv sync --frozen", "poetry": "poetry install --no-root",
            "pipenv": "pipenv install --deploy (--dev when the capsule records a package only the lock's "
                      "develop section holds)", "pip": "pip install -r"}[manager]
