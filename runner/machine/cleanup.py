"""`replay gc`, the use case: the leftovers of replays that are gone, and with --images / --cache the
disk replay's images and caches take, found (and removed unless a dry run) in one pass."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from . import disk, gc
from ..config import settings as load_settings
from ..engine.inventory import Inventory
from ..errors import Exit

DEFAULT_AGE_S, DEFAULT_MAX_SIZE = 14 * 86400.0, "20G"


@dataclass(frozen=True)
class GcResult:
    dry_run: bool
    leftovers: tuple[gc.Leftover, ...]
    images: disk.Sweep | None
    cache: disk.Sweep | None
    problems: tuple[str, ...]

    @property
    def exit_code(self) -> int:
        return int(Exit.ENVIRONMENT if self.problems else Exit.OK)

    @property
    def freed(self) -> int:
        return sum(s.freed for s in (self.images, self.cache) if s is not None)


def own_mount_ids() -> set[str]:
    """The BuildKit cache mount ids replay's builds use (REPLAY_BUILD_CACHE's namespace)."""
    from ..build.render import cache_mounts

    return {m["id"] for m in cache_mounts("buildkit").values()}


def _disk(engine: Inventory, older_than_s: float | None, max_size: int | None) -> tuple[disk.Sweep | None, disk.Sweep | None]:
    s = load_settings()
    return (disk.images(engine, s, older_than_s) if older_than_s is not None else None,
            disk.caches(engine, s, max_size, own_mount_ids()) if max_size is not None else None)


def collect(engine: Inventory, label: str | None, older_than_s: float | None, max_size: int | None,
            dry_run: bool, kept_older_than_s: float | None = None, all_users: bool = False) -> GcResult:
    """Leftovers first, then (when asked: an age, a size) the disk: the images only the leftovers'
    containers held can go in the same run. kept_older_than_s: the kept containers (--keep) younger stay;
    all_users: other users' kept containers go too."""
    found = gc.leftovers(engine, label, kept_older_than_s, all_users)
    problems = [] if dry_run else gc.remove(engine, found)
    images, cache = _disk(engine, older_than_s, max_size)
    for sweep in (images, cache):
        if sweep is not None and not dry_run:
            problems += disk.remove(engine, load_settings(), sweep.removed)
    return GcResult(dry_run, tuple(found), images, cache, tuple(problems))


def after_night(say: Callable[[str], None]) -> list[str]:
    """`farm run --gc`: images and caches with the defaults, each said in a line; the problems."""
    from ..engine import DockerEngine
    from ..units import format_size, parse_size

    engine = DockerEngine().inventory()
    images, cache = _disk(engine, DEFAULT_AGE_S, parse_size(DEFAULT_MAX_SIZE))
    problems = []
    for title, sweep in (("images", images), ("cache", cache)):
        if sweep is not None:
            problems += disk.remove(engine, load_settings(), sweep.removed)
            say(f"gc {title}: {len(sweep.removed)} removed, {format_size(sweep.freed)} freed")
    return problems
