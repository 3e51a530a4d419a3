"""Text layout shared by the human views (run report, diff): tables that never split an
identifier, `key: value` records when a terminal is too narrow for the table, and plain
text (no box drawing, no trailing spaces) when stdout is not a terminal."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..textsafe import cell, escaped

_LONG_HEX = re.compile(r"\b([0-9a-f]{12})[0-9a-f]{28,52}\b")
GAP = 2  # between columns


def short(value: str) -> str:
    """Full commit ids and SHA-256 digests as their first 12 hex digits (the full ones are in --json)."""
    return _LONG_HEX.sub(r"\1", value)


class View:
    """One report's lines on one console; every line goes through `_emit`."""

    def __init__(self, console: Any) -> None:
        self.console = console
        self.width: int = int(console.width)
        self.plain = not bool(getattr(console, "is_terminal", False))

    def line(self, text: str, style: str = "", wrap: bool = True) -> None:
        """One line, wrapped at spaces; `wrap=False` for a command to copy or a path (never split)."""
        from rich.text import Text

        self._emit(Text(escaped(text, keep_lines=True), style=style if not self.plain else ""), wrap)

    def table(self, title: str, columns: Sequence[str], rows: Sequence[Sequence[str]],
              free: int | None = None) -> None:
        """A table whose cells are never split inside a word; only column `free` (prose)
        wraps, at spaces. Too narrow for that: one `first: column value, …` record per row."""
        # capsule text: no raw ESC, and a newline or line separator inside a cell never starts another row
        cells = [[short(cell(str(c))) for c in row] for row in rows]
        widths = [max([len(name), *(len(r[i]) for r in cells)]) for i, name in enumerate(columns)]
        fixed = sum(w for i, w in enumerate(widths) if i != free) + GAP * (len(columns) - 1)
        if fixed + (16 if free is not None else 0) > self.width:
            self._records(title, columns, cells)
            return
        self._emit(self._rich_table(title, columns, cells, widths, free))

    def _rich_table(self, title: str, columns: Sequence[str], cells: list[list[str]], widths: list[int],
                    free: int | None) -> Any:
        from rich import box
        from rich.table import Table
        from rich.text import Text

        table = Table(title=title or None, title_justify="left", title_style="" if self.plain else "bold",
                      box=None if self.plain else box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                      padding=(0, GAP // 2), header_style="" if self.plain else "bold")
        for i, name in enumerate(columns):
            if i == free:
                table.add_column(name, overflow="fold", ratio=1)
            else:  # an identifier or a short value: never wrapped, never folded
                table.add_column(name, no_wrap=True, min_width=widths[i], overflow="ellipsis")
        for row in cells:
            table.add_row(*(Text(c) for c in row))
        return table

    def _records(self, title: str, columns: Sequence[str], cells: list[list[str]]) -> None:
        """`key: value` lines, one block per row, values wrapping under themselves."""
        from rich.table import Table
        from rich.text import Text

        if title:
            self.line(title, "bold")
        label = max(len(name) for name in columns[1:]) + 1 if len(columns) > 1 else 0
        for row in cells:
            self.line(f"  {row[0]}")
            grid = Table.grid(padding=(0, 1), pad_edge=False)
            grid.add_column(no_wrap=True, min_width=label + 4, justify="right")
            grid.add_column(overflow="fold", ratio=1)
            for name, value in zip(columns[1:], row[1:]):
                if value:
                    grid.add_row(Text(f"{name}:"), Text(value))
            self._emit(grid)

    def _emit(self, renderable: Any, wrap: bool = True) -> None:
        if not self.plain:
            self.console.print(renderable, soft_wrap=not wrap)
            return
        with self.console.capture() as captured:
            self.console.print(renderable, soft_wrap=not wrap)
        text = "\n".join(line.rstrip() for line in captured.get().splitlines())
        self.console.file.write(text + "\n")
