"""Where the shipped templates/ and images/ live: inside the wheel
(runner/templates, runner/images, force-included) or at the repository's top level."""
from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    for candidate in (_PKG / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"replay's {name}/ directory is missing from this installation")


def templates_dir() -> Path:
    return _find("templates")


def images_dir() -> Path:
    return _find("images")
