"""The optional parts of replay and what they need: `replay[workers]` (Celery over Redis: the
farm past one machine) and `replay[postgres]` (a history shared by several farm hosts).
A missing one is one line naming the extra to install (exit 3), never an ImportError."""
from __future__ import annotations

import importlib

from .errors import MissingExtra

# the modules each extra brings (kombu's Redis transport imports `packaging` when it connects)
EXTRAS: dict[str, tuple[str, ...]] = {
    "workers": ("celery", "redis", "kombu.transport.redis"),
    "postgres": ("psycopg",),
}


def require(extra: str, what: str) -> None:
    """MissingExtra unless every module of `extra` imports."""
    for module in EXTRAS[extra]:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise MissingExtra(f"{what} needs replay's {extra!r} extra ({exc.name or module} is not installed): "
                               f"pip install 'replay-runner[{extra}]'") from None
