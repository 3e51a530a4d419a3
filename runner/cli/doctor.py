"""`replay doctor`: the engine, the builder, base images, cache, registries and
settings; exit 3 when something every replay needs is missing."""
from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.text import Text

from ..codec import encode
from ..machine.doctor import Diagnosis, diagnose
from ..envelope import envelope
from ..errors import Exit
from ..report.layout import Cell, Styled, View
from . import console

_STYLE = {"ok": "green", "warn": "yellow", "fail": "bold red"}


def _checks(view: View, d: Diagnosis) -> None:
    rows: list[tuple[Cell, ...]] = []
    for c in d.checks:
        rows.append((Styled(c.status, _STYLE[c.status]), c.name, c.detail))
        if c.fix:  # the fix on a row of its own, under the detail
            rows.append(("", "", Styled(f"fix: {c.fix}", "bold" if c.status == "fail" else "dim")))
    view.table("checks", ("status", "check", "detail"), rows, free=2, header=False, shorten=False, indent=2)


def _settings(view: View, d: Diagnosis) -> None:
    view.table("settings", ("variable", "value", "from"),
               [(o.variable, o.value, Styled(o.source, "dim" if o.source == "default" else "")) for o in d.settings],
               free=1, shorten=False, indent=2)


def _show(d: Diagnosis) -> None:
    out = console.out
    out.print(Text(", ".join(f"{k} {v}" for k, v in d.versions.items() if v)))
    view = View(out)
    _checks(view, d)
    _settings(view, d)
    failed = [c for c in d.checks if c.status == "fail"]
    if failed:
        out.print(Text(f"not ready: {', '.join(c.name for c in failed)} (see fix above)", "bold red"))
    else:
        warned = sum(c.status == "warn" for c in d.checks)
        out.print(Text("ready to replay" + (f" ({warned} warning(s))" if warned else ""), "bold green"))


def _data(d: Diagnosis) -> dict[str, Any]:
    return {"ready": d.ready, "versions": d.versions, "checks": [encode(c) for c in d.checks],
            "settings": [encode(o) for o in d.settings]}


def register(app: typer.Typer) -> None:
    @app.command("doctor")
    def doctor_command(
        as_json: Annotated[bool, typer.Option("--json", help="Print the checks as JSON.")] = False,
    ) -> None:
        """Check this machine: engine and versions, builder, base images, cache, registries, settings.

        Exit 0 ready (warnings allowed), 3 when something every replay needs is missing.
        """
        d = diagnose()
        code = int(Exit.OK if d.ready else Exit.ENVIRONMENT)
        problem = _problem(d)
        if as_json:  # as every command: on exit 3 no result, the error names each failed check and its fix
            error = {"kind": "environment", "message": problem, "file": None} if problem else None
            console.print_json(envelope("doctor", code, None if problem else _data(d), error))
        else:
            _show(d)
        if problem:
            console.error_line(problem)
        raise typer.Exit(code)


def _problem(d: Diagnosis) -> str | None:
    failed = [c for c in d.checks if c.status == "fail"]
    if not failed:
        return None
    return "not ready: " + "; ".join(f"{c.name}: {c.fix or c.detail}" for c in failed)
