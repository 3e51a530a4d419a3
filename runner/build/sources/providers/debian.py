"""Java, Ruby and Rust from the base suite's own Debian packages.

No source reachable here offers these at an arbitrary version, so the suite's
package is installed: exact only when its version is the recorded one, otherwise
approximated with the versions named. The table holds what each suite's main
archive ships (the base images use the main archive only).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ....config import Settings
from ...plan import BaseImage, Fidelity, Runtime
from .versions import vkey


@dataclass(frozen=True)
class DebRuntime:
    version: str  # upstream version the package installs
    packages: tuple[str, ...]


# suite -> runtime -> choices (Java: one per JDK major the suite ships, newest last).
SUITE_RUNTIMES: dict[str, dict[str, tuple[DebRuntime, ...]]] = {
    "bullseye": {
        "java": (DebRuntime("11.0.24", ("openjdk-11-jdk-headless",)), DebRuntime("17.0.12", ("openjdk-17-jdk-headless",))),
        "ruby": (DebRuntime("2.7.4", ("ruby",)),),
        "rustc": (DebRuntime("1.48.0", ("rustc", "cargo")),),
    },
    "bookworm": {
        "java": (DebRuntime("17.0.19", ("openjdk-17-jdk-headless",)),),
        "ruby": (DebRuntime("3.1.2", ("ruby",)),),
        "rustc": (DebRuntime("1.63.0", ("rustc", "cargo")),),
    },
    "trixie": {
        "java": (DebRuntime("21.0.13", ("openjdk-21-jdk-headless",)), DebRuntime("25.0.5", ("openjdk-25-jdk-headless",))),
        "ruby": (DebRuntime("3.3.8", ("ruby",)),),
        "rustc": (DebRuntime("1.85.1", ("rustc", "cargo")),),
    },
}
RUNTIMES = ("java", "ruby", "rustc")


def _choose(recorded: str, choices: tuple[DebRuntime, ...]) -> DebRuntime:
    """The same major when the suite has it, else the newest."""
    same = [c for c in choices if vkey(c.version)[:1] == vkey(recorded)[:1]]
    return (same or list(choices))[-1]


def resolve(name: str, recorded: str, base: BaseImage) -> tuple[Runtime | None, Fidelity]:
    choices = SUITE_RUNTIMES.get(base.suite, {}).get(name) if not base.image else None
    if not choices:
        where = f"Debian {base.suite}" if not base.image else f"the {base.image} image (only Debian suites' packages are known)"
        return None, Fidelity(f"runtime {name}", recorded, "-", "not applied", f"no known {name} package for {where}")
    recorded = recorded.split("+")[0]  # 17.0.19+10: the build number is no part of the release
    chosen = _choose(recorded, choices)
    exact = vkey(recorded) == vkey(chosen.version)
    why = f"Debian {base.suite}'s {chosen.packages[0]}" if exact else \
        f"{name} {recorded} is offered by no reachable source; Debian {base.suite}'s {chosen.packages[0]} is {chosen.version}"
    return (Runtime(name, recorded, chosen.version, "debian", exact, why),
            Fidelity(f"runtime {name}", recorded, chosen.version, "exact" if exact else "approximated", why))


def resolver(name: str) -> Callable[[str, BaseImage, Settings], tuple[Runtime | None, Fidelity]]:
    def resolve_one(recorded: str, base: BaseImage, settings: Settings) -> tuple[Runtime | None, Fidelity]:
        return resolve(name, recorded, base)
    return resolve_one


def packages(runtime: Runtime, base: BaseImage) -> tuple[str, ...]:
    """The Debian packages that install this runtime in this suite."""
    for choice in SUITE_RUNTIMES.get(base.suite, {}).get(runtime.name, ()) if not base.image else ():
        if choice.version == runtime.version:
            return choice.packages
    return ()
