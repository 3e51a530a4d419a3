"""Distros other than Debian: their official images, releases and package managers.

A capsule recorded on Ubuntu, Fedora, Arch or Alpine replays on that distro's own
official image when a registry serves it (Docker Hub, or the mirror named by
REPLAY_REGISTRY); the system layer is then written for the family's package manager.
The table holds what each release ships (glibc or musl, python3), read from the
distro's own package lists; a release not in it is not guessed at.
"""
from __future__ import annotations

import json
import os
import re
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache

from ...plan import BaseImage

FAMILIES = ("apt", "dnf", "pacman", "apk")
HUB = "registry-1.docker.io"
_MANIFESTS = ", ".join((
    "application/vnd.oci.image.index.v1+json", "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.docker.distribution.manifest.v2+json"))


@dataclass(frozen=True)
class Distro:
    name: str  # the official image's name on Docker Hub (library/NAME)
    family: str  # apt | dnf | pacman | apk
    libc: str  # glibc | musl
    # recorded release -> (image tag, libc version, python3 version)
    releases: dict[str, tuple[str, str, str]]


DISTROS: dict[str, Distro] = {d.name: d for d in (
    Distro("ubuntu", "apt", "glibc", {
        "20.04": ("20.04", "2.31", "3.8.10"), "22.04": ("22.04", "2.35", "3.10.12"),
        "24.04": ("24.04", "2.39", "3.12.3"), "24.10": ("24.10", "2.40", "3.12.7"),
    }),
    Distro("fedora", "dnf", "glibc", {
        "39": ("39", "2.38", "3.12.7"), "40": ("40", "2.39", "3.12.8"), "41": ("41", "2.40", "3.13.1"),
        "42": ("42", "2.41", "3.13.3"),
    }),
    # Arch is rolling: every recorded version is today's `base` image
    Distro("archlinux", "pacman", "glibc", {"rolling": ("base", "2.41", "3.13.3")}),
    Distro("alpine", "apk", "musl", {
        "3.18": ("3.18", "1.2.4", "3.11.11"), "3.19": ("3.19", "1.2.4", "3.11.11"),
        "3.20": ("3.20", "1.2.5", "3.12.8"), "3.21": ("3.21", "1.2.5", "3.12.9"),
    }),
)}
ALIASES = {"arch": "archlinux", "archlinux": "archlinux"}

# What each family's system layer installs, and what it cannot (reported in the fidelity table).
PYTHON_PACKAGES = {"apt": ("python3", "python3-venv", "python3-pip"), "dnf": ("python3", "python3-pip"),
                   "pacman": ("python", "python-pip"), "apk": ("python3", "py3-pip")}
LOCALE_PACKAGES = {"apt": ("locales",), "dnf": ("glibc-locale-source",), "pacman": (), "apk": ()}
FAKETIME_PACKAGES = {"apt": ("faketime",), "dnf": ("libfaketime",), "pacman": ("libfaketime",), "apk": ()}
# where the family puts libfaketime: linked to Debian's path, the one LD_PRELOAD names (clock.py)
FAKETIME_LIB = {"dnf": "/usr/lib64/faketime/libfaketime.so.1", "pacman": "/usr/lib/faketime/libfaketime.so.1"}
MISSING = {
    "apk": ("musl has no locales (LANG/LC_* are set, not generated); "
            "no libfaketime is installed (no musl build of it is verified here): the recorded clock is not applied"),
}


# Runtimes replay installs from glibc builds (nodejs.org, npm's platform packages): they do not
# run on musl. Go's toolchain is static, Python comes from the family's own packages.
GLIBC_BUILDS = ("node", "bun", "deno")


def unrunnable(family: str, needs: Collection[str]) -> str:
    """Why this family's image cannot run a runtime the capsule needs, "" when it can."""
    glibc = sorted(n for n in needs if n in GLIBC_BUILDS)
    if family == "apk" and glibc:
        return f"the {', '.join(glibc)} builds replay installs need glibc (Alpine has musl)"
    return ""


def distro_of(name: str) -> Distro | None:
    return DISTROS.get(ALIASES.get(name, name))


def official(distro: str, version: str | None) -> BaseImage | None:
    """The official image for this distro release, None when the table does not know it."""
    d = distro_of(distro)
    if d is None:
        return None
    if d.family == "pacman":
        release = "rolling"
    else:
        parts = (version or "").split(".")
        release = ".".join(parts[:1] if d.family == "dnf" else parts[:2])
    if release not in d.releases:
        return None
    tag, libc, python = d.releases[release]
    return BaseImage(d.name, tag, release, libc, python, family=d.family, image=f"{d.name}:{tag}")


def registry() -> str | None:
    """Where official images come from: REPLAY_REGISTRY (host[:port] of a mirror, "none" for
    no registry at all), else Docker Hub."""
    value = os.environ.get("REPLAY_REGISTRY", "").strip().rstrip("/")
    if value.lower() == "none":
        return None
    return value or HUB


def pull_ref(reg: str, image: str) -> tuple[str, str]:
    """(repository, tag) as the engine pulls it: Docker Hub's own names, a mirror's library/ path."""
    name, tag = image.split(":", 1)
    if reg == HUB:
        return name, tag
    host = re.sub(r"^https?://", "", reg)
    return f"{host}/library/{name}", tag


def _url(reg: str, path: str) -> str:
    if reg.startswith(("http://", "https://")):
        return reg + path
    local = reg.split(":")[0] in ("localhost", "127.0.0.1", "::1")
    return f"{'http' if local else 'https'}://{reg}{path}"


def _bearer(challenge: str, timeout: float, ctx: ssl.SSLContext) -> str | None:
    """An anonymous pull token, for registries (Docker Hub) that answer 401 with a Bearer realm."""
    fields = dict(re.findall(r'(\w+)="([^"]*)"', challenge))
    if "realm" not in fields:
        return None
    query = urllib.parse.urlencode({k: v for k, v in fields.items() if k in ("service", "scope")})
    with urllib.request.urlopen(f"{fields['realm']}?{query}", timeout=timeout, context=ctx) as resp:
        token = json.loads(resp.read()).get("token")
    return str(token) if token else None


@cache
def available(reg: str, image: str, timeout: float = 8.0) -> str:
    """"" when the registry serves this image (its manifest answers), else why not: a probe
    over the registry's HTTP API, once per process, so planning stays quick where no
    registry is reachable."""
    repo, tag = pull_ref(reg, image)
    path = f"/v2/{repo.split('/', 1)[1] if reg != HUB else 'library/' + repo}/manifests/{tag}"
    ctx = ssl.create_default_context()
    headers = {"Accept": _MANIFESTS}
    for _ in range(2):
        req = urllib.request.Request(_url(reg, path), method="HEAD", headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=ctx):
                return ""
        except urllib.error.HTTPError as exc:
            challenge = exc.headers.get("WWW-Authenticate", "")
            if exc.code != 401 or "Authorization" in headers or not challenge.lower().startswith("bearer"):
                return f"{image} is not served by {reg} (HTTP {exc.code})"
            try:
                token = _bearer(challenge, timeout, ctx)
            except (OSError, ValueError) as err:
                return f"{reg} gave no pull token for {image} ({err})"
            if token is None:
                return f"{reg} gave no pull token for {image}"
            headers["Authorization"] = f"Bearer {token}"
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            return f"registry {reg} is not reachable ({reason})"
    return f"{image} is not served by {reg}"
