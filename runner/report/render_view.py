"""`replay render`'s text: the Dockerfile on stdout (or, with -o, the two by-hand lines); notes on stderr."""
from __future__ import annotations

from rich.console import Console

from ..outcome.runreport import Rendered
from ..textsafe import escaped


def show_rendered(r: Rendered, out: Console, err: Console) -> None:
    if r.build_line is None or r.run_line is None:
        out.print(r.dockerfile, markup=False, highlight=False)
        for note in r.notes:
            err.print(f"replay: {escaped(note)}", markup=False)
        return
    for note in r.notes:
        err.print(f"replay: {escaped(note)}", markup=False)
    err.print("replay: to replay by hand:", markup=False)
    out.print(r.build_line, markup=False, highlight=False)
    out.print(r.run_line, markup=False, highlight=False, soft_wrap=True)
    if r.caveat:
        err.print(f"replay: {r.caveat}", markup=False)
