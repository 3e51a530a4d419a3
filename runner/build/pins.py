"""The recorded installed versions of a replay plan (part of the planner).

Every entry of a capsule's installed-versions list (twin `resolved.node` and
`resolved.python`, NovaFabric `installed_packages`) becomes a pin of the plan and a
fidelity row, or a row saying why it is not applied. A node package recorded at
several versions stays a set: the build pins the one the lockfile places at no nested
path at the top level (what the command's own `require` gets) and keeps the nested
copies where the lockfile puts them (templates/scripts/npm-deps.js). What the build then
finds it cannot pin (a package the lockfile does not install; for Python one it installs from a
VCS checkout or a directory, templates/scripts/py-deps.py) replaces the plan's row with a
`not applied` one naming what the build found (unpinned_rows, with_build_rows).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..capsules.model import Capsule, FrozenMap
from ..facts.factkeys import normal_name
from .plan import Alternative, Fidelity, Lock, NodePin, Runtime, Tool
from .sources.providers.versions import vkey

MAX_ALTERNATIVES = 8  # environments tried besides the plan's own: each one an image
SKIP_PY_PINS = {"pip", "setuptools", "wheel"}  # the venv's own packaging tools: the image keeps its own
# How each node lockfile's manager pins a drifted package (npm-deps.js pin)
NODE_PINNING = {"npm": "npm install --no-save",
                "pnpm": "pnpm add (a direct dependency) or pnpm.overrides (a package with one copy)",
                "yarn": "the manifest's own range (a direct dependency) or resolutions (a package with one copy)"}
Check = Callable[[str, str, str], str]  # (kind, value, what) -> the value, or a refusal


def node_pins(c: Capsule, runtimes: tuple[Runtime, ...], lock: Lock | None, tools: tuple[Tool, ...], pin: bool,
              check: Check, rows: list[Fidelity]) -> FrozenMap[str, NodePin]:
    """The recorded node packages to pin, a row for each (applied or not, and why)."""
    out: dict[str, NodePin] = {}
    blocked = _node_blocker(runtimes, lock, tools, pin)
    for raw, versions in sorted(c.resolved.node.items()):
        name = check("npm package", raw, "resolved node package")
        recorded = tuple(sorted({check("version", v, f"resolved node {raw}") for v in versions}, key=vkey))
        fact, shown = f"package node {name}", ", ".join(recorded) or "(no version)"
        if not recorded:
            rows.append(Fidelity(fact, shown, "-", "not applied", "the capsule records no version of it"))
        elif blocked and not blocked.startswith("--no-pin"):
            rows.append(Fidelity(fact, shown, "-", "not applied", blocked))
        elif blocked and lock is not None:  # still compared in the build: the drift is listed
            out[name] = recorded[0] if len(recorded) == 1 else recorded
            rows.append(Fidelity(fact, shown, "the lockfile's", "not applied", blocked))
        elif len(recorded) == 1:
            out[name] = recorded[0]
            rows.append(Fidelity(fact, shown, shown, "exact", _node_how(lock, False)))
        elif lock is None:  # nothing places the nested copies: the newest at the top level
            out[name] = recorded[-1]
            rows.append(Fidelity(fact, shown, recorded[-1], "approximated",
                                 f"no lockfile places the nested copies: {recorded[-1]} installed at the top level, "
                                 f"{', '.join(recorded[:-1])} not installed"))
        else:
            out[name] = recorded
            rows.append(Fidelity(fact, shown, shown, "exact", _node_how(lock, True)))
    return FrozenMap(out)


def alternatives(c: Capsule, chosen: FrozenMap[str, NodePin]) -> tuple[Alternative, ...]:
    """For each node package pinned at several recorded versions (which copy sat at the top level is
    not recorded), each of them alone at the top level: the environments the capsule also admits,
    in the recorded order."""
    out = []
    for name, pin in chosen.items():
        if isinstance(pin, tuple) or len(c.resolved.node.get(name, ())) > 1:
            versions = pin if isinstance(pin, tuple) else tuple(sorted(set(c.resolved.node[name]), key=vkey))
            for version in versions:
                if version != pin:
                    out.append(Alternative(f"{name} {version} at the top level",
                                           FrozenMap({**dict(chosen.items()), name: version})))
    return tuple(out[:MAX_ALTERNATIVES])


def _node_blocker(runtimes: tuple[Runtime, ...], lock: Lock | None, tools: tuple[Tool, ...], pin: bool) -> str:
    """Why no recorded node package is applied ("" when they are)."""
    if not any(r.name == "node" for r in runtimes):
        return "the node runtime is not installed (the command does not need it)"
    if lock is not None and lock.manager == "yarn":
        yarn = next((t for t in tools if t.name == "yarn"), None)
        if yarn is not None and vkey(yarn.version)[:1] >= (2,):
            return f"yarn {yarn.version} (2 or later) is not pinned: only yarn 1's resolutions are"
    if not pin:
        return "--no-pin: the lockfile's version is kept (a drift is listed)"
    return ""


def _node_how(lock: Lock | None, several: bool) -> str:
    if lock is None:
        return "no lockfile installed: installed at this version with npm"
    how = NODE_PINNING.get(lock.manager, lock.manager)
    if several:
        return (f"the version the {lock.manager} lockfile places at no nested path pinned at the top level with "
                f"{how}; the nested copies as the lockfile places them (checked in the build)")
    return f"kept when the {lock.manager} lockfile installs it, else pinned with {how} (checked in the build)"


def python_pins(c: Capsule, runtimes: tuple[Runtime, ...], lock: Lock | None, pin: bool, check: Check,
                rows: list[Fidelity]) -> FrozenMap[str, str]:
    """The recorded Python distributions to pin (PEP 503 names), a row for each."""
    out: dict[str, str] = {}
    seen: dict[str, str] = {}
    installed = any(r.name == "python" for r in runtimes)
    for raw, version in sorted(c.resolved.python.items()):
        name = check("python package", normal_name("python", raw), "resolved python package")
        check("version", version, f"resolved python {raw}")
        fact = f"package python {name}"
        if name in seen:  # two spellings of one distribution (PyYAML, pyyaml)
            rows.append(Fidelity(fact, f"{raw} {version}", "-", "not applied",
                                 f"the same distribution as {seen[name]}, recorded twice: that entry is used"))
            continue
        seen[name] = f"{raw} {version}"
        why = ("the python runtime is not installed (the command does not need it)" if not installed
               else "a packaging tool: the image's venv keeps its own (pip at the recorded pip version)"
               if name in SKIP_PY_PINS else "")
        if why:
            rows.append(Fidelity(fact, version, "-", "not applied", why))
            continue
        out[name] = version
        if not pin and lock is not None:  # still compared in the build: the drift is listed
            rows.append(Fidelity(fact, version, "the lockfile's", "not applied",
                                 "--no-pin: the lockfile's version is kept (a drift is listed)"))
            continue
        how = (f"kept when the {lock.manager} lockfile installs it, else pinned with pip over it (checked in the build)"
               if lock is not None else "installed at this version with pip (no dependencies of its own)")
        rows.append(Fidelity(fact, version, version, "exact", how))
    return FrozenMap(out)


ECOSYSTEMS = ("node", "python")  # whose helpers write `unpinned` entries (npm-deps.js's carry none: node)


def unpinned_rows(entries: Any) -> tuple[Fidelity, ...]:
    """The recorded packages the build could not pin (the `unpinned` entries of npm-deps.js and
    py-deps.py, each in its `ecosystem`), as rows; the version the build found, when it found one."""
    out = []
    for e in entries or ():
        if not (isinstance(e, dict) and all(isinstance(e.get(k), str) for k in ("name", "recorded", "why"))):
            continue
        ecosystem = e.get("ecosystem", "node")
        if ecosystem not in ECOSYSTEMS:
            continue
        found = e["installed"] if isinstance(e.get("installed"), str) else "the lockfile's"
        out.append(Fidelity(f"package {ecosystem} {e['name']}", e["recorded"], found, "not applied",
                            f"found in the build: {e['why']}"))
    return tuple(out)


def with_build_rows(rows: tuple[Fidelity, ...], found: tuple[Fidelity, ...]) -> tuple[Fidelity, ...]:
    """The plan's rows, each package the build could not pin replaced by the build's row for it (the
    first row of that fact: a second spelling's "recorded twice" row stays)."""
    by_fact = {f.fact: f for f in found}
    out, replaced = [], set()
    for r in rows:
        if r.fact in by_fact and r.fact not in replaced:
            replaced.add(r.fact)
            out.append(by_fact[r.fact])
        else:
            out.append(r)
    return tuple(out) + tuple(f for f in found if f.fact not in replaced)
