"""Bun and Deno at the recorded version, from the npm registry's platform packages.

Both projects publish their official linux-x64 binaries as npm packages (the ones
their npm installers pick): `@oven/bun-linux-x64` holds package/bin/bun and
`@deno/linux-x64-glibc` holds package/deno. Checked against the registry's
integrity hash, like node.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ....config import Settings
from ....errors import SourceUnavailable
from ...plan import BaseImage, Fidelity, Runtime
from .registry_http import npm_has, npm_tarball, npm_versions
from .versions import nearest


@dataclass(frozen=True)
class BinaryPackage:
    runtime: str
    package: str
    member: str  # the binary inside the tarball


PACKAGES = {
    "bun": BinaryPackage("bun", "@oven/bun-linux-x64", "package/bin/bun"),
    "deno": BinaryPackage("deno", "@deno/linux-x64-glibc", "package/deno"),
}


def resolve(name: str, recorded: str, settings: Settings) -> tuple[Runtime | None, Fidelity]:
    pkg = PACKAGES[name]
    recorded = recorded.lstrip("v")
    try:
        chosen = recorded if npm_has(settings, pkg.package, recorded) else \
            nearest(recorded, npm_versions(settings, pkg.package))
    except SourceUnavailable as exc:
        return None, Fidelity(f"runtime {name}", recorded, "-", "not applied", f"no source reachable: {exc}")
    if chosen is None:
        return None, Fidelity(f"runtime {name}", recorded, "-", "not applied",
                              f"the npm registry's {pkg.package} offers no release of that major")
    exact = chosen == recorded
    why = f"official build, npm registry package {pkg.package}" if exact else \
        f"{name} {recorded} is offered by no reachable source; nearest release"
    return (Runtime(name, recorded, chosen, "npm-registry", exact, why),
            Fidelity(f"runtime {name}", recorded, chosen, "exact" if exact else "approximated", why))


def resolver(name: str) -> Callable[[str, BaseImage, Settings], tuple[Runtime | None, Fidelity]]:
    """resolve() in the shape of the other runtime providers."""
    def resolve_one(recorded: str, base: BaseImage, settings: Settings) -> tuple[Runtime | None, Fidelity]:
        return resolve(name, recorded, settings)
    return resolve_one


def fetch(runtime: Runtime, settings: Settings) -> Path:
    return npm_tarball(settings, PACKAGES[runtime.name].package, runtime.version)


def file_name(runtime: Runtime) -> str:
    return f"{runtime.name}-{runtime.version}.tgz"
