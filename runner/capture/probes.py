"""Facts about this host: the operating system, and the runtimes and tools present, each
at the version it reports itself (a version command, 10 seconds at most, run in the
command's working directory so version managers answer for the project).

Anything that is not found, or does not answer in time, is simply absent. Corepack is
told not to download or prompt and Go not to fetch a toolchain, so probing stays offline.
"""
from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TIMEOUT_S = 10.0
_VERSION = re.compile(r"\d+(?:\.\d+)+(?:-[0-9A-Za-z.]+)?")
_OFFLINE = {"COREPACK_ENABLE_DOWNLOAD_PROMPT": "0", "COREPACK_ENABLE_NETWORK": "0", "COREPACK_ENABLE_STRICT": "0",
            "GOTOOLCHAIN": "local", "NO_UPDATE_NOTIFIER": "1", "NPM_CONFIG_UPDATE_NOTIFIER": "false"}


@dataclass(frozen=True)
class Probe:
    argv: tuple[str, ...]
    last: bool = False  # the version is the first line's last version-like word (gcc's first is the package's)


RUNTIMES: dict[str, Probe] = {
    "node": Probe(("node", "--version")), "bun": Probe(("bun", "--version")), "deno": Probe(("deno", "--version")),
    "go": Probe(("go", "version")), "rustc": Probe(("rustc", "--version")), "java": Probe(("java", "-version")),
    "ruby": Probe(("ruby", "--version")),
}  # python: the project's own interpreter (python_interpreter)
TOOLS: dict[str, Probe] = {
    "npm": Probe(("npm", "--version")), "pnpm": Probe(("pnpm", "--version")), "yarn": Probe(("yarn", "--version")),
    "pip": Probe(("pip", "--version")), "uv": Probe(("uv", "--version")), "poetry": Probe(("poetry", "--version")),
    "cargo": Probe(("cargo", "--version")), "git": Probe(("git", "--version")), "make": Probe(("make", "--version")),
    "gcc": Probe(("gcc", "--version"), last=True), "clang": Probe(("clang", "--version")),
    "cmake": Probe(("cmake", "--version")), "docker": Probe(("docker", "--version")),
}
EXTRA = {"pipenv": Probe(("pipenv", "--version"))}  # a package manager's version, asked only when it is used


def version_of(text: str, last: bool = False) -> str | None:
    """The version in a version command's first non-empty line."""
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    found: list[str] = _VERSION.findall(line)
    if not found:
        return None
    return found[-1] if last else found[0]


def probe(p: Probe, cwd: str, environ: Mapping[str, str]) -> str | None:
    exe = shutil.which(p.argv[0], path=environ.get("PATH"))
    if exe is None:
        return None
    try:
        proc = subprocess.run([exe, *p.argv[1:]], cwd=cwd, env={**environ, **_OFFLINE}, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    # java -version answers on stderr
    text = (proc.stdout or proc.stderr).decode("utf-8", "replace")
    return version_of(text, p.last)


def probe_all(probes: Mapping[str, Probe], cwd: str, environ: Mapping[str, str]) -> dict[str, str]:
    """Every probe at once (they are independent, and most wait on process start-up)."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        futures = {name: pool.submit(probe, p, cwd, environ) for name, p in probes.items()}
        found = {name: f.result() for name, f in futures.items()}
    return {name: v for name, v in found.items() if v is not None}


def python_interpreter(project_dirs: list[Path], environ: Mapping[str, str]) -> str | None:
    """The project's own interpreter: a .venv in the project, then $VIRTUAL_ENV, then python3."""
    for d in project_dirs:
        candidate = d / ".venv" / "bin" / "python"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    venv = environ.get("VIRTUAL_ENV")
    if venv and (Path(venv) / "bin" / "python").is_file():
        return str(Path(venv) / "bin" / "python")
    return shutil.which("python3", path=environ.get("PATH"))


def python_version(interpreter: str, cwd: str, environ: Mapping[str, str]) -> str | None:
    return probe(Probe((interpreter, "--version")), cwd, environ)


# -- the operating system -------------------------------------------------------

_PLATFORMS = {"linux": "linux", "darwin": "darwin", "win32": "win32", "cygwin": "cygwin", "freebsd": "freebsd",
              "openbsd": "openbsd", "sunos": "sunos", "aix": "aix"}
_ARCHES = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64", "i386": "ia32", "i686": "ia32",
           "armv7l": "arm", "armv6l": "arm", "ppc64le": "ppc64", "ppc64": "ppc64", "s390x": "s390x",
           "riscv64": "riscv64", "loongarch64": "loong64", "mips": "mips", "mipsel": "mipsel"}


def os_facts(os_release: Path = Path("/etc/os-release")) -> dict[str, Any]:
    """`os` as Node names it; what cannot be read is null, never a guess."""
    plat = next((v for k, v in _PLATFORMS.items() if sys.platform.startswith(k)), sys.platform)
    machine = platform.machine()
    facts: dict[str, Any] = {"platform": plat, "arch": _ARCHES.get(machine.lower(), machine.lower()),
                             "release": platform.release(), "distro": None, "distroVersion": None,
                             "libc": None, "libcVersion": None}
    if plat == "linux":
        release = read_os_release(os_release)
        facts["distro"] = release.get("ID")
        facts["distroVersion"] = release.get("VERSION_ID")
        facts["libc"], facts["libcVersion"] = libc()
    elif plat == "darwin":
        facts["distro"] = "macos"
        facts["distroVersion"] = platform.mac_ver()[0] or None
    return facts


def read_os_release(path: Path) -> dict[str, str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    found = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and re.fullmatch(r"[A-Z_]+", key.strip()):
            found[key.strip()] = value.strip().strip("\"'")
    return found


def libc() -> tuple[str | None, str | None]:
    name, version = platform.libc_ver()
    if name == "glibc":
        return "glibc", version or None
    musl = sorted(Path("/lib").glob("ld-musl-*.so.1"))
    if musl:
        try:  # the loader prints its version on stderr when run bare
            proc = subprocess.run([str(musl[0])], capture_output=True, timeout=TIMEOUT_S)
            m = re.search(r"Version (\S+)", proc.stderr.decode("utf-8", "replace"))
            return "musl", m.group(1) if m else None
        except (OSError, subprocess.SubprocessError):
            return "musl", None
    return None, None
