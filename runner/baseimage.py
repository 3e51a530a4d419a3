"""Base images: choose the closest one to the recorded platform, and make it exist.

An official image is pulled when a registry is reachable; otherwise the suite is
bootstrapped with debootstrap from the configured Debian mirror and imported,
once, as `<base_repo>:<suite>`.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .capsules.model import Platform
from .config import Settings
from .errors import SourceUnavailable
from .plan import BaseImage, Fidelity

if TYPE_CHECKING:
    from .engine import Engine

# Debian suites replay can bootstrap, oldest first: (suite, version, glibc, python3).
SUITES: tuple[BaseImage, ...] = (
    BaseImage("debian", "bullseye", "11", "2.31", "3.9.2"),
    BaseImage("debian", "bookworm", "12", "2.36", "3.11.2"),
    BaseImage("debian", "trixie", "13", "2.41", "3.13.5"),
    BaseImage("debian", "sid", "unstable", "2.43", "3.13.18"),
)
DEFAULT = SUITES[1]
_BY_VERSION = {b.version: b for b in SUITES} | {b.suite: b for b in SUITES}


def _vkey(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split(".") if p.isascii() and p.isdigit() and len(p) <= 9)  # not "³⁶", not 5,000 digits


def _nearest_glibc(version: str) -> BaseImage:
    want = _vkey(version)
    return min(SUITES, key=lambda b: (abs(_vkey(b.libc_version)[1] - want[1]) if len(want) > 1 else 99,
                                     -_vkey(b.libc_version)[1]))


def _by_python(version: str) -> BaseImage | None:
    mm = _vkey(version)[:2]
    return next((b for b in SUITES if _vkey(b.python)[:2] == mm), None)


def choose_base(platform: Platform, python_version: str | None = None) -> tuple[BaseImage, list[Fidelity]]:
    """The suite closest to what was recorded, and the fidelity rows saying how close."""
    rows: list[Fidelity] = []
    distro = (platform.distro or "").lower()
    if platform.os and platform.os not in ("linux",):
        base = _by_python(python_version) if python_version else None
        base = base or DEFAULT
        rows.append(Fidelity("platform os", platform.os, f"linux ({base.suite})", "approximated",
                             f"{platform.os} cannot run in a Linux container; closest Linux image used"))
        return base, rows
    if distro == "debian" and platform.distro_version and platform.distro_version.split(".")[0] in _BY_VERSION:
        base = _BY_VERSION[platform.distro_version.split(".")[0]]
        rows.append(Fidelity("platform distro", f"debian {platform.distro_version}", f"debian {base.version} ({base.suite})", "exact"))
    elif platform.libc == "musl":
        base = DEFAULT
        rows.append(Fidelity("platform distro", f"{distro or '?'} (musl)", f"debian {base.suite} (glibc)", "approximated",
                             "no musl base image is obtainable here (Alpine's download site is unreachable)"))
    elif platform.libc_version:
        base = _nearest_glibc(platform.libc_version)
        recorded = f"{distro or 'unknown'} {platform.distro_version or ''}".strip()
        rows.append(Fidelity("platform distro", recorded, f"debian {base.version} ({base.suite})", "approximated",
                             f"{distro or 'this distro'} has no image here; nearest glibc family and version"))
    elif python_version and _by_python(python_version):
        base = _by_python(python_version) or DEFAULT
        rows.append(Fidelity("platform distro", "not recorded", f"debian {base.suite}", "approximated",
                             f"no distro recorded; the suite whose Python matches {python_version}"))
    else:
        base = DEFAULT
        rows.append(Fidelity("platform distro", distro or "not recorded", f"debian {base.suite}", "approximated",
                             "no distro and libc recorded; default base"))
    if platform.libc_version:
        exact = platform.libc_version == base.libc_version
        rows.append(Fidelity("platform libc", f"glibc {platform.libc_version}", f"glibc {base.libc_version}",
                             "exact" if exact else "approximated", "" if exact else "nearest glibc a base offers"))
    return base, rows


def base_ref(settings: Settings, base: BaseImage) -> str:
    return f"{settings.base_repo}:{base.suite}"


def ensure_base(engine: Engine, settings: Settings, base: BaseImage,
                say: Callable[[str], None] = lambda s: None) -> str:
    """Make `<base_repo>:<suite>` exist: already there, pulled, or bootstrapped."""
    ref = base_ref(settings, base)
    if engine.image_exists(ref):
        return ref
    if engine.try_pull(base.distro, base.suite):
        engine.tag(f"{base.distro}:{base.suite}", ref)
        return ref
    say(f"bootstrapping {ref} with debootstrap from {settings.debian_mirror} (once, ~30 s)")
    bootstrap(engine, settings, base, ref)
    return ref


def bootstrap(engine: Engine, settings: Settings, base: BaseImage, ref: str) -> None:
    tool = shutil.which("debootstrap")
    if tool is None:
        raise SourceUnavailable(f"base image {ref} is missing and debootstrap is not installed; run scripts/setup")
    with tempfile.TemporaryDirectory(prefix="replay-rootfs-") as tmp:
        root = Path(tmp) / "root"
        cmd = [tool, "--variant=minbase", base.suite, str(root), settings.debian_mirror]
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
            raise SourceUnavailable(f"debootstrap {base.suite} failed: {' / '.join(tail)}")
        tar = Path(tmp) / "rootfs.tar"
        subprocess.run(["tar", "-C", str(root), "--exclude=./var/cache/apt/archives/*.deb",
                        "--exclude=./var/lib/apt/lists/*", "-cf", str(tar), "."], check=True)
        engine.import_rootfs(tar, ref, ['CMD ["bash"]'])
