"""`replay gc`: remove what earlier replays left behind, and with --images / --cache old images and caches."""
from __future__ import annotations

from ..commands.spec import Args
from ..engine import DockerEngine
from ..errors import UsageError
from ..machine.sweep import DEFAULT_AGE_S, DEFAULT_MAX_SIZE, collect
from ..report.gc import gc_data, show_gc
from ..units import parse_size
from . import console


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as exc:
        raise UsageError(f"--max-size {exc}") from None


def gc(a: Args) -> int:
    if a.max_size is not None and not a.cache:
        raise UsageError("--max-size goes with --cache")
    age = (a.older_than if a.older_than is not None else DEFAULT_AGE_S) if a.images else None
    limit = _size(a.max_size or DEFAULT_MAX_SIZE) if a.cache else None  # bad input is exit 2 before anything goes
    result = collect(DockerEngine().inventory(), a.label, age, limit, a.dry_run, kept_older_than_s=a.older_than,
                     all_users=a.all_users)
    if a.json:
        console.print_result("gc", result.exit_code, gc_data(result))
    else:
        show_gc(result, console.out)
        for p in result.problems:
            console.error_line(p)
    return result.exit_code
