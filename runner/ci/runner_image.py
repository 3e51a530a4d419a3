"""The runner image: replay itself as an image (the top-level Dockerfile), built with the
CA certificates replay's own builds trust.

A plain `docker build .` cannot verify PyPI behind a TLS-intercepting proxy: the build
must trust the proxy's CA, which lives on the host (REPLAY_CA_CERTS, by default
/usr/local/share/ca-certificates/*.crt). So the context is prepared: a copy of the
sources with those certificates in ci/image/ca-certificates/, which the Dockerfile
copies into the system store (update-ca-certificates). Where no registry answers, the
image is built FROM the local base (replay-base/debian:bookworm).

    replay ci image --tag replay:latest [--base IMAGE] [--context-only DIR]
"""
from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path


from ..config import Settings
from ..engine import LABEL, Engine
from ..errors import ReplayError, UsageError

DEFAULT_BASE = "python:3.11-slim-bookworm"
CA_DIR = Path("ci/image/ca-certificates")
# What the Dockerfile copies; tests, examples and the git history stay out of the context.
SOURCES = ("Dockerfile", ".dockerignore", "pyproject.toml", "README.md", "runner", "templates", "images", "ci")
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@-]{0,254}$")


def source_root() -> Path:
    """The replay checkout the image is built from (sources, not a wheel): the one this replay
    runs from, else the current directory (an installed replay, run inside a checkout)."""
    for root in (Path(__file__).resolve().parents[2], Path.cwd()):
        if _is_checkout(root):
            return root
    raise UsageError(f"{Path.cwd()}: not a replay checkout (no Dockerfile and pyproject.toml of replay-runner); "
                     "run `replay ci image` from the repository")


def _is_checkout(root: Path) -> bool:
    project = root / "pyproject.toml"
    return (root / "Dockerfile").is_file() and project.is_file() and 'name = "replay-runner"' in project.read_text()


def prepare_context(source: Path, dest: Path, ca_files: Sequence[Path], base: str | None = None) -> Path:
    """Copy the sources into dest, the CA certificates into its ci/image/ca-certificates/, and
    make `base` the default of the Dockerfile's ARG BASE (the engine interface takes no build args)."""
    if base is not None and not _REF.match(base):
        raise UsageError(f"--base {base!r}: not a valid image name")
    dest.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".mypy_cache", ".ruff_cache")
    for name in SOURCES:
        src = source / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore, dirs_exist_ok=True)
        elif src.is_file():
            shutil.copy2(src, dest / name)
    certs = dest / CA_DIR
    certs.mkdir(parents=True, exist_ok=True)
    for old in certs.glob("*.crt"):  # only the certificates asked for now
        old.unlink()
    for i, ca in enumerate(ca_files):
        data = ca.read_bytes()
        if b"-----BEGIN CERTIFICATE-----" not in data:
            raise UsageError(f"{ca}: not a PEM certificate (REPLAY_CA_CERTS)")
        # update-ca-certificates reads *.crt only; numbered names cannot collide or escape the directory
        (certs / f"replay-ca-{i:02d}.crt").write_bytes(data)
    if base is not None:
        dockerfile = dest / "Dockerfile"
        text, n = re.subn(r"(?m)^ARG BASE=.*$", f"ARG BASE={base}", dockerfile.read_text())
        if n != 1:
            raise ReplayError(f"{dockerfile}: no `ARG BASE=` line to set the base image in")
        dockerfile.write_text(text)
    return dest


def choose_base(engine: Engine, settings: Settings, base: str | None) -> str:
    """The official Python image when a registry answers (or it is here), else the local Debian base."""
    if base:
        return base
    repo, tag = DEFAULT_BASE.rsplit(":", 1)
    if engine.image_exists(DEFAULT_BASE) or engine.try_pull(repo, tag):
        return DEFAULT_BASE
    local = f"{settings.base_repo}:bookworm"
    if not engine.image_exists(local):
        raise ReplayError(f"no registry answers for {DEFAULT_BASE} and the local base {local} is missing: "
                          "run scripts/setup (or pass --base)")
    return local


def build(engine: Engine, settings: Settings, tag: str, base: str | None = None,
          say: Callable[[str], None] = lambda s: None) -> str:
    """Build the runner image; returns its tag."""
    if not _REF.match(tag):
        raise UsageError(f"--tag {tag!r}: not a valid image name")
    chosen = choose_base(engine, settings, base)
    say(f"building {tag} FROM {chosen} with {len(settings.ca_files)} extra CA certificate(s)")
    with tempfile.TemporaryDirectory(prefix="replay-runner-image-") as tmp:
        ctx = prepare_context(source_root(), Path(tmp) / "ctx", settings.ca_files, chosen)
        for event in engine.build(ctx, tag, {LABEL: "runner-image"}, timeout_s=settings.build_timeout_s):
            if event.kind == "log":
                say(event.text)
    return tag
