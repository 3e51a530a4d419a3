"""Every table a command prints, and the lines around it: one view for the run report,
diff, inspect, verify, doctor, bisect and the farm.

Tables never split an identifier (a commit id, a signature, a fact key, a path): only the
one prose column (`free`) wraps, at spaces, and a word longer than its column runs past it
whole. A table too wide for the console becomes `key: value` records, one block per row.
When stdout is not a terminal (a pipe, a CI log, a file) the text is plain: no box
drawing, no styles, no trailing spaces; a terminal gets rich's ruled tables and colours.
"""
from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from typing import Any, NamedTuple

from ..textsafe import cell, escaped

_LONG_HEX = re.compile(r"\b([0-9a-f]{12})[0-9a-f]{28,52}\b")
GAP = 2  # between columns
FREE_MIN = 16  # the prose column's least width before the table becomes records
RICH_ROWS = 500  # rich lays a table out in time that grows faster than its rows: past this, plain lines


def short(value: str) -> str:
    """Full commit ids and SHA-256 digests as their first 12 hex digits (the full ones are in --json)."""
    return _LONG_HEX.sub(r"\1", value)


class Styled(NamedTuple):
    """A cell with a style: the colour a terminal shows (plain text drops it)."""

    text: str
    style: str = ""


Cell = str | Styled


def _wrap(text: str, width: int) -> list[str]:
    """Lines of at most `width`, broken at spaces only: a word is never split."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:  # the common case, and 50,000 rows of `inspect --all` stay fast
            out.append(line)
            continue
        indent = line[:len(line) - len(line.lstrip(" "))]
        out += textwrap.wrap(line, max(width, 1), subsequent_indent=indent, break_long_words=False,
                             break_on_hyphens=False) or [""]
    return out


class View:
    """One command's lines on one console."""

    def __init__(self, console: Any) -> None:
        self.console = console
        self.width: int = int(console.width)
        self.plain = not bool(getattr(console, "is_terminal", False))

    def line(self, text: str, style: str = "", wrap: bool = True) -> None:
        """One line, wrapped at spaces; `wrap=False` for a command to copy or a path (never split)."""
        text = escaped(text, keep_lines=True)
        if self.plain:
            self._write(_wrap(text, self.width) if wrap else text.split("\n"))
            return
        from rich.text import Text

        self.console.print(Text(text, style=style), soft_wrap=not wrap)

    def sentence(self, text: str, style: str = "") -> None:
        """A sentence read whole (the verdict): one line when it fits, else broken only between its
        clauses (after "; "), never inside one; a clause wider than the console runs past it."""
        lines: list[str] = []
        for clause in escaped(text).split("; "):
            if lines and len(lines[-1]) + 2 + len(clause) <= self.width:
                lines[-1] += "; " + clause
            else:
                lines[-1:] = [lines[-1] + ";"] if lines else []
                lines.append(clause)
        if self.plain:
            self._write(lines)
            return
        from rich.text import Text

        for line in lines:
            self.console.print(Text(line, style=style), soft_wrap=True)

    def table(self, title: str, columns: Sequence[str], rows: Sequence[Sequence[Cell]], free: int | None = None,
              header: bool = True, shorten: bool = True, indent: int = 0) -> None:
        """A table whose cells are never split inside a word; only column `free` (prose)
        wraps, at spaces. Too narrow for that: one `first: column value, …` record per row.
        `shorten`: full commit ids and digests as 12 hex digits (the full ones are in --json);
        `indent`: the rows (not the title) start that many spaces in."""
        # capsule text: no raw ESC, and a newline or line separator inside a cell never starts another row
        cells = [[_text(c, shorten) for c in row] for row in rows]
        styles = [[c.style if isinstance(c, Styled) else "" for c in row] for row in rows]
        widths = [max([len(name) if header else 0, *(len(r[i]) for r in cells)]) for i, name in enumerate(columns)]
        fixed = sum(w for i, w in enumerate(widths) if i != free) + GAP * (len(columns) - 1)
        if fixed + indent + (FREE_MIN if free is not None else 0) > self.width:
            self._records(title, columns, cells)
        elif self.plain or len(cells) > RICH_ROWS:
            self._plain_table(title, columns if header else None, cells, widths, free, indent)
        else:
            from rich.padding import Padding

            table = self._rich_table(title, columns, cells, styles, widths, free, header)
            self.console.print(Padding(table, (0, 0, 0, indent)) if indent else table)

    def _plain_table(self, title: str, columns: Sequence[str] | None, cells: list[list[str]], widths: list[int],
                     free: int | None, indent: int = 0) -> None:
        lines = [title] if title else []
        if free is not None:  # the prose column takes what the others leave
            widths = [*widths]
            widths[free] = min(widths[free], self.width - indent - sum(widths) + widths[free] - GAP * (len(widths) - 1))
        for row in ([list(columns)] if columns else []) + cells:
            parts = [_wrap(c, widths[i]) if i == free else [c] for i, c in enumerate(row)]
            for n in range(max(len(p) for p in parts)):
                lines.append(" " * indent + (" " * GAP).join((p[n] if n < len(p) else "").ljust(widths[i])
                                              for i, p in enumerate(parts)).rstrip())
        self._write(lines)

    def _rich_table(self, title: str, columns: Sequence[str], cells: list[list[str]], styles: list[list[str]],
                    widths: list[int], free: int | None, header: bool) -> Any:
        from rich import box
        from rich.table import Table
        from rich.text import Text

        table = Table(title=title or None, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD,
                      show_edge=False, pad_edge=False, padding=(0, GAP // 2), header_style="bold", show_header=header)
        for i, name in enumerate(columns):
            if i == free:
                table.add_column(name, overflow="fold", ratio=1)
            else:  # an identifier or a short value: never wrapped, never folded
                table.add_column(name, no_wrap=True, min_width=widths[i], overflow="ellipsis")
        for row, style in zip(cells, styles):
            table.add_row(*(Text(c, style) for c, style in zip(row, style)))
        return table

    def _records(self, title: str, columns: Sequence[str], cells: list[list[str]]) -> None:
        """`key: value` lines, one block per row, values wrapping under themselves (at spaces)."""
        lines = [title] if title else []
        label = max(len(name) for name in columns[1:]) + 1 if len(columns) > 1 else 0
        for row in cells:
            if row[0]:  # a row with no first cell continues the one above
                lines.append(f"  {row[0]}")
            for name, value in zip(columns[1:], row[1:]):
                if value:
                    head = f"{name}:".rjust(label + 4) + " "
                    body = _wrap(value, self.width - len(head))
                    lines += [head + body[0]] + [" " * len(head) + more for more in body[1:]]
        if self.plain:
            self._write(lines)
            return
        from rich.text import Text

        for n, line in enumerate(lines):
            self.console.print(Text(line, "bold" if n == 0 and title else ""), soft_wrap=True)

    def _write(self, lines: Sequence[str]) -> None:
        self.console.file.write("".join(line.rstrip() + "\n" for line in lines))


def _text(value: Cell, shorten: bool) -> str:
    text = cell(str(value.text if isinstance(value, Styled) else value))
    return short(text) if shorten else text
