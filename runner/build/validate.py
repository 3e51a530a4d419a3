"""The one place that decides which capsule values may reach a build.

Every capsule value that ends up in a Dockerfile line, a shell line, a docker label,
an image tag, a file name or a git argument is checked here, by the planner, before
anything is rendered; the renderer trusts the plan. The rules are allow-lists (what a
version, a package name, a relative path... looks like), so a newline, a NUL, `$(…)`,
a backslash, a quote or an option-like leading `-` never passes.

argv and env values are different: they may hold anything (newlines included) and
never enter such a line: argv runs in exec form, env values go through the engine API.
"""
from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Literal

from ..errors import CapsuleError
from .sources.providers.distros import FAMILIES

Kind = Literal["version", "npm package", "python package", "locale", "sha256", "commit", "relative path",
               "file name", "id", "env name", "time zone", "go package", "go flag", "go env value"]

# Path segments: what real lockfiles, working directories and input files are called.
# No whitespace, quotes, `$`, backslash or control characters: the path may end up in
# a WORKDIR or a `cd`, where Dockerfile and shell syntax would otherwise apply.
_SEGMENT = r"[A-Za-z0-9._@+=,~][A-Za-z0-9._@+=,~-]{0,254}"
_RULES: dict[str, re.Pattern[str]] = {
    "version": re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}", re.ASCII),
    # Legacy npm names may hold capitals (JSONStream); never a leading "-" (an npm option).
    "npm package": re.compile(r"(@[A-Za-z0-9][A-Za-z0-9._~-]*/)?[A-Za-z0-9_][A-Za-z0-9._~-]{0,213}", re.ASCII),
    "python package": re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", re.ASCII),
    "locale": re.compile(r"[A-Za-z]{2,3}(_[A-Za-z]{2})?(\.[A-Za-z0-9-]{1,32})?(@[a-z]{1,32})?", re.ASCII),
    "sha256": re.compile(r"[0-9a-f]{64}", re.ASCII),
    "commit": re.compile(r"[0-9a-fA-F]{7,64}", re.ASCII),
    "relative path": re.compile(rf"(\.|{_SEGMENT}(/{_SEGMENT}){{0,63}})", re.ASCII),
    "file name": re.compile(_SEGMENT, re.ASCII),
    # capsule ids reach image tags and labels
    "id": re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", re.ASCII),
    "env name": re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,255}", re.ASCII),
    "time zone": re.compile(r"[A-Za-z0-9_+-]{1,64}(/[A-Za-z0-9_+-]{1,64}){0,3}", re.ASCII),
    # what a Go image compiles ahead (gowarm.py): a package pattern (./..., example.com/x/...), a
    # compile flag as -name[=value], a variable's value; they reach a JSON-form RUN as arguments
    "go package": re.compile(r"[A-Za-z0-9._~+][A-Za-z0-9._~+/-]{0,255}", re.ASCII),
    "go flag": re.compile(r"-[a-z]{1,16}(=[A-Za-z0-9._,/=+:*@ -]{0,255})?", re.ASCII),
    "go env value": re.compile(r"[A-Za-z0-9._,/=+:*@ -]{0,255}", re.ASCII),
}
_SHOWN = 60  # a refusal quotes at most this much of the value


def pattern(kind: Kind) -> str:
    """The rule as a regular expression (anchored), for what checks the same value elsewhere (a JSON Schema)."""
    return f"^{_RULES[kind].pattern}$"


def is_valid(kind: Kind, value: str) -> bool:
    if not isinstance(value, str) or not _RULES[kind].fullmatch(value):
        return False
    if kind in ("relative path", "go package"):
        return ".." not in PurePosixPath(value).parts
    return True


def check(kind: Kind, value: str, what: str, origin: str) -> str:
    """The value itself when it may reach a build; else one refusal naming the file (exit 2)."""
    if not is_valid(kind, value):
        raise CapsuleError(origin, f"{what}: {shown(value)} is not a valid {kind}{_why(kind, value)}")
    return value


def relative_path(value: str, what: str, origin: str) -> str:
    """A path inside the repository or working directory, normalised ("a/./b" -> "a/b")."""
    if isinstance(value, str) and value and not any(c in value for c in "\x00\n\r\\"):
        norm = PurePosixPath(value).as_posix()
        if norm.startswith("/") or ".." in PurePosixPath(norm).parts:
            raise CapsuleError(origin, f"{what}: {shown(value)} leaves the repository")
        value = norm
    return check("relative path", value, what, origin)


def shown(value: object) -> str:
    """A value as a refusal quotes it: repr (so control characters are escaped), cut."""
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _why(kind: str, value: object) -> str:
    if isinstance(value, str) and any(ord(c) < 32 or ord(c) == 127 for c in value):
        return " (it holds a control character)"
    if kind == "relative path" and isinstance(value, str) and ".." in PurePosixPath(value).parts:
        return " (it leaves the repository)"
    return ""


def run_path(value: str, what: str, origin: str) -> str:
    """A working directory inside the repository. It reaches only the engine API (never a
    Dockerfile or shell line), so spaces are fine; control characters and `..` are not."""
    if not isinstance(value, str) or any(ord(c) < 32 or ord(c) == 127 for c in value) or len(value) > 4096:
        raise CapsuleError(origin, f"{what}: {shown(value)} is not a usable path")
    norm = PurePosixPath(value or ".").as_posix()
    if norm.startswith("/") or ".." in PurePosixPath(norm).parts:
        raise CapsuleError(origin, f"{what}: {shown(value)} leaves the repository")
    return norm


def validate_plan(plan: Plan, origin: str) -> Plan:
    """Every plan value that reaches a Dockerfile line, a shell line, a tag, a label or a
    file name, checked once: after planning, and when a plan is read back from JSON."""
    check("id", plan.capsule_id, "capsule id", origin)
    check("id", plan.base.suite, "base suite", origin)
    _check_base(plan.base, origin)
    for rt in (*plan.runtimes, *([plan.installer_node] if plan.installer_node else [])):
        check("version", rt.version, f"runtime {rt.name} version", origin)
    for tool in plan.tools:
        check("npm package", tool.name, "package manager", origin)
        check("version", tool.version, f"{tool.name} version", origin)
    for lock in (plan.lock, plan.python_lock):
        if lock is not None:
            relative_path(lock.path, "lockfile path", origin)
            if lock.sha256 is not None:
                check("sha256", lock.sha256, "lockfile sha256", origin)
    for pins in (plan.node_pins, *(alt.node_pins for alt in plan.alternatives)):  # each alternative's too
        for name, pin in pins.items():
            check("npm package", name, "resolved node package", origin)
            for version in pin if isinstance(pin, tuple) else (pin,):  # a package installed at several versions
                check("version", version, f"resolved node {name}", origin)
    for name, version in plan.python_pins.items():
        check("python package", name, "resolved python package", origin)
        check("version", version, f"resolved python {name}", origin)
    for loc in plan.locales:
        check("locale", loc, "locale", origin)
    run_path(plan.workdir_rel, "command.cwd", origin)
    for art in plan.inputs:
        relative_path(art.logical_path, "input", origin)
        check("sha256", art.content, "input content", origin)
    for lk in (plan.lock, plan.python_lock):
        if lk is not None and lk.content is not None:
            check("sha256", lk.content, "lockfile content", origin)
    if plan.source is not None and plan.source.local_tree is not None:
        check("sha256", plan.source.local_tree, "source tree", origin)
    if plan.source is not None and plan.source.commit is not None:
        check("commit", plan.source.commit, "commit", origin)
    for name in plan.env:
        check("env name", name, "environment variable", origin)
    if plan.go_warm is not None:
        _check_go_warm(plan.go_warm, origin)
    return plan


def _check_go_warm(warm: GoWarm, origin: str) -> None:
    if warm.mode not in ("std", "test", "build"):
        raise CapsuleError(origin, f"go warm-up: {shown(warm.mode)} is not std, test or build")
    for p in warm.packages:
        check("go package", p, "go package pattern", origin)
    for f in warm.flags:
        check("go flag", f, "go flag", origin)
    for name, value in warm.env:
        check("env name", name, "go warm-up variable", origin)
        check("go env value", value, f"go warm-up {name}", origin)


# An official base image as a plan names it: a distro replay knows, one tag (it reaches a FROM line and a tag).
_OFFICIAL = re.compile(r"(ubuntu|fedora|archlinux|alpine):[A-Za-z0-9_][A-Za-z0-9._-]{0,127}", re.ASCII)
_FAMILY_OF = {"ubuntu": "apt", "fedora": "dnf", "archlinux": "pacman", "alpine": "apk"}


def _check_base(base: BaseImage, origin: str) -> None:
    if base.family not in FAMILIES:
        raise CapsuleError(origin, f"base family: {shown(base.family)} is not one of {', '.join(FAMILIES)}")
    if base.image == "":
        if base.distro != "debian" or base.family != "apt":
            raise CapsuleError(origin, f"base {shown(base.distro)} without an official image: only Debian suites are bootstrapped")
        return
    if not _OFFICIAL.fullmatch(base.image) or base.image != f"{base.distro}:{base.suite}":
        raise CapsuleError(origin, f"base image: {shown(base.image)} is not an official image replay knows")
    if _FAMILY_OF[base.distro] != base.family:
        raise CapsuleError(origin, f"base family: {base.distro} uses {_FAMILY_OF[base.distro]}, not {shown(base.family)}")


if TYPE_CHECKING:
    from .plan import BaseImage, GoWarm, Plan
