"""`replay gc`'s text and JSON: what was (or would be) removed and kept, and why."""
from __future__ import annotations

from typing import Any

from rich.console import Console

from ..codec import encode
from ..machine.disk import Sweep
from ..machine.cleanup import GcResult
from ..units import format_size


def show_sweep(title: str, sweep: Sweep, dry_run: bool, out: Console) -> None:
    verb = "would remove" if dry_run else "removed"
    for i in sweep.removed:
        out.print(f"{verb} {i.kind} {i.name} ({format_size(i.size)}): {i.why}", markup=False)
    for i in sweep.kept:
        out.print(f"kept {i.kind} {i.name} ({format_size(i.size)}): {i.why}", markup=False)
    for note in sweep.notes:
        out.print(f"note: {note}", markup=False)
    out.print(f"{title}: {len(sweep.removed)} {'would go' if dry_run else 'removed'}, "
              f"{format_size(sweep.freed)}{' would be' if dry_run else ''} freed", markup=False)


def show_gc(r: GcResult, out: Console) -> None:
    verb = "would remove" if r.dry_run else "removed"
    for f in r.leftovers:
        out.print(f"{verb} {f.kind} {f.name}: {f.why}", markup=False)
    for title, sweep in (("images", r.images), ("cache", r.cache)):
        if sweep is not None:
            show_sweep(title, sweep, r.dry_run, out)
    out.print(f"{len(r.leftovers)} leftover(s) {'found' if r.dry_run else 'cleaned'}", markup=False)


def gc_data(r: GcResult) -> dict[str, Any]:
    return {"dry_run": r.dry_run, "leftovers": [encode(f) for f in r.leftovers], "problems": list(r.problems),
            "images": encode(r.images), "cache": encode(r.cache), "freed": r.freed}
