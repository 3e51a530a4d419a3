"""The machine's upkeep: `replay doctor` (the engine, the builder, base images, cache, registries and
settings) and `replay gc` (remove what earlier replays left behind, and with --images / --cache old
images and caches)."""
from __future__ import annotations

from ..commands.answers import Collected, Diagnosed
from ..commands.arguments import DoctorArgs, GcArgs
from ..engine import DockerEngine
from ..errors import UsageError
from ..machine.cleanup import DEFAULT_AGE_S, DEFAULT_MAX_SIZE, collect
from ..machine.doctor import diagnose
from ..units import parse_size


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as exc:
        raise UsageError(f"--max-size {exc}") from None


def gc(a: GcArgs) -> Collected:
    if a.max_size is not None and not a.cache:
        raise UsageError("--max-size goes with --cache")
    age = (a.older_than if a.older_than is not None else DEFAULT_AGE_S) if a.images else None
    limit = _size(a.max_size or DEFAULT_MAX_SIZE) if a.cache else None  # bad input is exit 2 before anything goes
    return Collected(collect(DockerEngine().inventory(), a.label, age, limit, a.dry_run,
                             kept_older_than_s=a.older_than, all_users=a.all_users))


def doctor(a: DoctorArgs) -> Diagnosed:
    return Diagnosed(diagnose())
