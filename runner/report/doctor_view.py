"""`replay doctor`'s text and JSON: the versions, every check with its fix, the settings, and the answer."""
from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from ..codec import encode
from ..machine.doctor import Diagnosis
from .layout import Cell, Styled, View

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
               [(o.variable, _listed(o.value), Styled(o.source, "dim" if o.source == "default" else ""))
                for o in d.settings],
               free=1, shorten=False, indent=2)


def _listed(value: str) -> str:
    """A colon-separated list of paths with a blank after each colon, so the table may wrap the list
    between its paths (a path itself is never split); a URL stays as it is."""
    return value if "://" in value else value.replace(":/", ": /")


def show_doctor(d: Diagnosis, out: Console) -> None:
    view = View(out)
    view.line(", ".join(f"{k} {v}" for k, v in d.versions.items() if v))
    _checks(view, d)
    _settings(view, d)
    failed = [c for c in d.checks if c.status == "fail"]
    if failed:
        out.print(Text(f"not ready: {', '.join(c.name for c in failed)} (see fix above)", "bold red"))
    else:
        warned = sum(c.status == "warn" for c in d.checks)
        out.print(Text("ready to replay" + (f" ({warned} warning(s))" if warned else ""), "bold green"))


def doctor_data(d: Diagnosis) -> dict[str, Any]:
    return {"ready": d.ready, "versions": d.versions, "checks": [encode(c) for c in d.checks],
            "settings": [encode(o) for o in d.settings]}


