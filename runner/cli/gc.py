"""`replay gc`: remove what earlier replays left behind (containers, networks, iptables rules)."""
from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

import typer

from .. import gc
from ..engine import DockerEngine
from ..errors import Exit
from . import console


def register(app: typer.Typer) -> None:
    @app.command("gc")
    def gc_command(
        dry_run: Annotated[bool, typer.Option("--dry-run", help="List what would be removed; remove nothing.")] = False,
        label: Annotated[str | None, typer.Option("--label", help="Only what the replay labelled replay=LABEL made (e.g. farm-<night>).")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    ) -> None:
        """Remove the containers, networks and iptables rules that replays which are gone left behind
        (labelled `replay`, owned by a process no longer running here); never anything else.
        Exit 0 when nothing is left, 3 when something could not be removed."""
        engine = DockerEngine()
        found = gc.leftovers(engine.client, label)
        problems = [] if dry_run else gc.remove(engine.client, found)
        code = int(Exit.ENVIRONMENT if problems else Exit.OK)
        if as_json:
            console.print_result("gc", code, {"dry_run": dry_run, "leftovers": [asdict(f) for f in found],
                                              "problems": problems})
        else:
            verb = "would remove" if dry_run else "removed"
            for f in found:
                console.out.print(f"{verb} {f.kind} {f.name}: {f.why}", markup=False)
            for p in problems:
                console.error_line(p)
            console.out.print(f"{len(found)} leftover(s) {'found' if dry_run else 'cleaned'}", markup=False)
        raise typer.Exit(code)
