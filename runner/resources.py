"""Where the shipped templates/ and images/ live: inside the wheel
(runner/templates, runner/images, force-included) or at the repository's top level."""
from __future__ import annotations

from functools import cache
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import jinja2

_PKG = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    for candidate in (_PKG / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"replay's {name}/ directory is missing from this installation")


def templates_dir() -> Path:
    return _find("templates")


@cache
def template_loader() -> jinja2.FileSystemLoader:
    """The one loader of templates/: the reports' environment (runner.report.templates) and
    the Dockerfile renderer's read the same files."""
    import jinja2

    return jinja2.FileSystemLoader(str(templates_dir()))


def images_dir() -> Path:
    return _find("images")


def source_checkout() -> bool:
    """Running from a clone of replay (scripts/setup is at hand), not a pip install."""
    return (_PKG.parent / "scripts" / "setup").is_file() and (_PKG.parent / "pyproject.toml").is_file()


def engine_fix() -> str:
    """How to get a Docker engine: scripts/setup only where there is one (a clone), not in a pip install."""
    where = "; scripts/setup installs and starts one" if source_checkout() else ""
    return f"start a Docker engine (`dockerd &` as root, or `systemctl start docker`), or point DOCKER_HOST at a running one{where}"


def exports(package: str, where: dict[str, str]) -> Callable[[str], object]:
    """A package's `__getattr__` (PEP 562) that loads each exported name from its module when first
    used, so importing one light module of a package does not load all of its heavy ones."""
    import importlib
    import sys

    def load(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value
    return load
