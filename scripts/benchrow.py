"""One row of scripts/bench's table: what was measured, the figure, the target, ok or MISSED."""
from __future__ import annotations


def row(name: str, value: str, target: str, ok: bool | None) -> None:
    mark = {True: "ok", False: "MISSED", None: "-"}[ok]
    print(f"{name:<44} {value:<44} {target:<22} {mark}", flush=True)
