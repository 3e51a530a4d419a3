"""`replay gc`: remove what earlier replays left behind (containers, networks, iptables rules),
and with --images / --cache the disk replay's images and caches take."""
from __future__ import annotations

from typing import Annotated, Any

import typer

from ..machine import gc
from ..machine import disk as gcdisk
from ..codec import encode
from ..config import settings as load_settings
from ..durations import HELP as DURATION_HELP
from ..durations import parse_duration
from ..engine import DockerEngine
from ..errors import Exit, UsageError
from ..sizes import HELP as SIZE_HELP
from ..sizes import format_size, parse_size
from . import console

DEFAULT_AGE, DEFAULT_MAX_SIZE = "14d", "20G"


def _age(text: str) -> float:
    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        raise UsageError(f"--older-than {exc}") from None
    if seconds < 0:
        raise UsageError(f"--older-than {text!r}: not a negative age")
    return seconds


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as exc:
        raise UsageError(f"--max-size {exc}") from None


def own_mount_ids() -> set[str]:
    """The BuildKit cache mount ids replay's builds use (REPLAY_BUILD_CACHE's namespace)."""
    from ..build.render import cache_mounts

    return {m["id"] for m in cache_mounts("buildkit").values()}


def sweep_disk(client: Any, images: bool, cache: bool, older_than: str = DEFAULT_AGE,
               max_size: str = DEFAULT_MAX_SIZE) -> tuple[gcdisk.Sweep | None, gcdisk.Sweep | None]:
    s = load_settings()
    age, limit = _age(older_than), _size(max_size)  # both checked before anything is listed
    return (gcdisk.images(client, s, age) if images else None,
            gcdisk.caches(client, s, limit, own_mount_ids()) if cache else None)


def show_sweep(title: str, sweep: gcdisk.Sweep, dry_run: bool) -> None:
    verb = "would remove" if dry_run else "removed"
    for i in sweep.removed:
        console.out.print(f"{verb} {i.kind} {i.name} ({format_size(i.size)}): {i.why}", markup=False)
    for i in sweep.kept:
        console.out.print(f"kept {i.kind} {i.name} ({format_size(i.size)}): {i.why}", markup=False)
    for note in sweep.notes:
        console.out.print(f"note: {note}", markup=False)
    console.out.print(f"{title}: {len(sweep.removed)} {'would go' if dry_run else 'removed'}, "
                      f"{format_size(sweep.freed)}{' would be' if dry_run else ''} freed", markup=False)


def after_night() -> list[str]:
    """`farm run --gc`: images and caches with the defaults, reported on stderr; the problems."""
    engine = DockerEngine()
    images, cache = sweep_disk(engine.client, True, True)
    problems = []
    for title, sweep in (("images", images), ("cache", cache)):
        if sweep is not None:
            problems += gcdisk.remove(engine.client, load_settings(), sweep.removed)
            console.err.print(f"gc {title}: {len(sweep.removed)} removed, {format_size(sweep.freed)} freed",
                              markup=False)
    for p in problems:
        console.error_line(p)
    return problems


def register(app: typer.Typer) -> None:
    @app.command("gc")
    def gc_command(
        images: Annotated[bool, typer.Option("--images", help="Also remove replay's own images not used within --older-than.")] = False,
        older_than: Annotated[str | None, typer.Option("--older-than", metavar="DURATION",
                                                       help=f"With --images: the age ({DURATION_HELP}; default {DEFAULT_AGE}).")] = None,
        cache: Annotated[bool, typer.Option("--cache", help="Also shrink the download cache and replay's BuildKit cache mounts, least recently used first.")] = False,
        max_size: Annotated[str | None, typer.Option("--max-size", metavar="SIZE",
                                                     help=f"With --cache: what may stay ({SIZE_HELP}; default {DEFAULT_MAX_SIZE}).")] = None,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="List what would be removed, with sizes; remove nothing.")] = False,
        label: Annotated[str | None, typer.Option("--label", help="Only the leftovers the replay labelled replay=LABEL made (e.g. farm-<night>).")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    ) -> None:
        """Remove the containers, networks and iptables rules that replays which are gone left behind
        (labelled `replay`, owned by a process no longer running here); with --images, replay's own images
        not used within the age and held by no running replay; with --cache, download-cache entries and
        replay's BuildKit cache mounts down to the max size. Never anything replay did not make.
        Exit 0 when done, 2 bad usage, 3 when something could not be removed."""
        if older_than is not None and not images:
            raise UsageError("--older-than goes with --images")
        if max_size is not None and not cache:
            raise UsageError("--max-size goes with --cache")
        age, limit = older_than or DEFAULT_AGE, max_size or DEFAULT_MAX_SIZE
        _age(age), _size(limit)  # bad input is exit 2 before anything is removed
        engine = DockerEngine()
        found = gc.leftovers(engine.client, label)
        problems = [] if dry_run else gc.remove(engine.client, found)
        # after the leftovers: the images only their containers held can go in the same run
        disk = sweep_disk(engine.client, images, cache, age, limit)
        for sweep in disk:
            if sweep is not None and not dry_run:
                problems += gcdisk.remove(engine.client, load_settings(), sweep.removed)
        code = int(Exit.ENVIRONMENT if problems else Exit.OK)
        if as_json:
            console.print_result("gc", code, {
                "dry_run": dry_run, "leftovers": [encode(f) for f in found], "problems": problems,
                "images": encode(disk[0]), "cache": encode(disk[1]),
                "freed": sum(s.freed for s in disk if s is not None)})
        else:
            verb = "would remove" if dry_run else "removed"
            for f in found:
                console.out.print(f"{verb} {f.kind} {f.name}: {f.why}", markup=False)
            for title, sweep in zip(("images", "cache"), disk):
                if sweep is not None:
                    show_sweep(title, sweep, dry_run)
            for p in problems:
                console.error_line(p)
            console.out.print(f"{len(found)} leftover(s) {'found' if dry_run else 'cleaned'}", markup=False)
        raise typer.Exit(code)
