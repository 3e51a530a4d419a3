"""Base images: choose the closest one to the recorded platform, and make it exist.

A capsule recorded on Debian gets its suite: pulled when a registry is reachable,
otherwise bootstrapped with debootstrap from the configured Debian mirror and imported,
once, as `<base_repo>:<suite>`. One recorded on Ubuntu, Fedora, Arch or Alpine gets
that distro's official image when a registry serves it (providers/distros.py), else
the nearest Debian suite, the reason in the fidelity table.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING

from ...capsules.model import Platform
from ...config import Settings
from ...errors import SourceUnavailable
from ..plan import BaseImage, Fidelity
from .providers import distros

if TYPE_CHECKING:
    from ...engine import Engine

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


def choose_base(platform: Platform, python_version: str | None = None,
                needs: Collection[str] = ()) -> tuple[BaseImage, list[Fidelity]]:
    """The base closest to what was recorded, and the fidelity rows saying how close: the
    Debian suite itself, the recorded distro's official image when a registry serves it
    (and can run the runtimes the capsule needs), else the nearest Debian suite (the
    reason reported)."""
    distro = (platform.distro or "").lower()
    if platform.os and platform.os not in ("linux",):
        base = (_by_python(python_version) if python_version else None) or DEFAULT
        return base, [Fidelity("platform os", platform.os, f"linux ({base.suite})", "approximated",
                               f"{platform.os} cannot run in a Linux container; closest Linux image used")]
    if distro == "debian" and platform.distro_version and platform.distro_version.split(".")[0] in _BY_VERSION:
        base = _BY_VERSION[platform.distro_version.split(".")[0]]
        rows = [Fidelity("platform distro", f"debian {platform.distro_version}", f"debian {base.version} ({base.suite})", "exact")]
        return base, rows + _libc_rows(platform, base)
    reason = ""
    if distros.distro_of(distro) is not None:
        wanted = distros.official(distro, platform.distro_version)
        reason = _unavailable(wanted, needs) if wanted else \
            f"no known official image for {distro} {platform.distro_version or ''}".strip()
        if wanted is not None and not reason:
            return wanted, _official_rows(platform, wanted)
    base, rows = _nearest_debian(platform, python_version, distro, reason)
    return base, rows + _libc_rows(platform, base)


def _unavailable(wanted: BaseImage, needs: Collection[str]) -> str:
    """"" when a registry serves this image and it can run what is needed, else why not."""
    if unrunnable := distros.unrunnable(wanted.family, needs):
        return unrunnable
    reg = distros.registry()
    if reg is None:
        return "REPLAY_REGISTRY=none: no registry is used"
    return distros.available(reg, wanted.image)


def _official_rows(platform: Platform, base: BaseImage) -> list[Fidelity]:
    recorded = f"{platform.distro} {platform.distro_version or ''}".strip()
    rows = [Fidelity("platform distro", recorded, f"{base.distro} {base.version} ({base.image})", "exact",
                     f"official image from {distros.registry()}; system layer with {base.family}")]
    libc = distros.DISTROS[base.distro].libc
    if platform.libc_version:
        exact = platform.libc_version == base.libc_version
        rows.append(Fidelity("platform libc", f"{platform.libc or libc} {platform.libc_version}", f"{libc} {base.libc_version}",
                             "exact" if exact else "approximated", "" if exact else f"{base.image} ships {libc} {base.libc_version}"))
    if base.family in distros.MISSING:
        rows.append(Fidelity("system layer", base.family, base.family, "approximated", distros.MISSING[base.family]))
    return rows


def _nearest_debian(platform: Platform, python_version: str | None, distro: str,
                    reason: str) -> tuple[BaseImage, list[Fidelity]]:
    because = f"{reason}; " if reason else ""
    if platform.libc == "musl":
        return DEFAULT, [Fidelity("platform distro", f"{distro or '?'} (musl)", f"debian {DEFAULT.suite} (glibc)", "approximated",
                                  f"{because}no musl base image is obtainable here")]
    if platform.libc_version:
        base = _nearest_glibc(platform.libc_version)
        recorded = f"{distro or 'unknown'} {platform.distro_version or ''}".strip()
        return base, [Fidelity("platform distro", recorded, f"debian {base.version} ({base.suite})", "approximated",
                               f"{because or (distro or 'this distro') + ' has no image here; '}nearest glibc family and version")]
    if python_version and _by_python(python_version):
        base = _by_python(python_version) or DEFAULT
        return base, [Fidelity("platform distro", "not recorded" if not distro else distro, f"debian {base.suite}", "approximated",
                               f"{because}no libc recorded; the suite whose Python matches {python_version}")]
    return DEFAULT, [Fidelity("platform distro", distro or "not recorded", f"debian {DEFAULT.suite}", "approximated",
                              f"{because}no distro and libc recorded; default base")]


def _libc_rows(platform: Platform, base: BaseImage) -> list[Fidelity]:
    if not platform.libc_version or platform.libc == "musl":
        return []
    exact = platform.libc_version == base.libc_version
    return [Fidelity("platform libc", f"glibc {platform.libc_version}", f"glibc {base.libc_version}",
                     "exact" if exact else "approximated", "" if exact else "nearest glibc a base offers")]


def base_ref(settings: Settings, base: BaseImage) -> str:
    """The local name of the base: `<base_repo>:<suite>` for Debian suites, the official
    image under the same namespace (replay-base/ubuntu:22.04) for the others."""
    if not base.image:
        return f"{settings.base_repo}:{base.suite}"
    space = settings.base_repo.rsplit("/", 1)[0] if "/" in settings.base_repo else settings.base_repo
    return f"{space}/{base.image}"


def sidecar_base_ref(engine: Engine, settings: Settings, base: BaseImage,
                     say: Callable[[str], None] = lambda s: None) -> str:
    """The base the HTTP replay sidecar builds on: it installs its few packages with apt, so an
    official image of another distro gives way to the default Debian suite (made to exist)."""
    return ensure_base(engine, settings, DEFAULT if base.image else base, say)


def ensure_base(engine: Engine, settings: Settings, base: BaseImage,
                say: Callable[[str], None] = lambda s: None) -> str:
    """Make the base exist: already there, pulled, or (Debian suites) bootstrapped."""
    ref = base_ref(settings, base)
    if engine.image_exists(ref):
        return ref
    if base.image:
        return _pull_official(engine, base, ref, say)
    if engine.try_pull(base.distro, base.suite):
        engine.tag(f"{base.distro}:{base.suite}", ref)
        return ref
    say(f"bootstrapping {ref} with debootstrap from {settings.debian_mirror} (once, ~30 s)")
    bootstrap(engine, settings, base, ref)
    return ref


def _pull_official(engine: Engine, base: BaseImage, ref: str, say: Callable[[str], None]) -> str:
    reg = distros.registry()
    if reg is None:
        raise SourceUnavailable(f"base image {base.image} is not here and REPLAY_REGISTRY=none; plan again to use Debian")
    repo, tag = distros.pull_ref(reg, base.image)
    say(f"pulling {repo}:{tag} (the recorded distro's official image)")
    if not engine.try_pull(repo, tag):
        raise SourceUnavailable(f"base image {base.image} could not be pulled from {reg}; "
                                "plan again (it falls back to the nearest Debian suite) or set REPLAY_REGISTRY")
    engine.tag(f"{repo}:{tag}", ref)
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
