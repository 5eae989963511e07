"""Tables that fit the terminal without breaking what a person pastes into the next command.

An id, a node's name, a time or a number is *whole*: never wrapped or cut. Prose (a
reason, a change, an outcome) wraps between words. When the whole columns and the longest
word of each prose column cannot fit side by side, the rows are printed one after another
as ``name  value`` lines instead (psql's expanded display): narrower than a table, and
nothing broken. Piped, a table is as wide as its cells (see ``render.console``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.table import Table
from rich.text import Text

_BORDER = 3  # a cell's padding and the rule before it
_LONGEST_WORD = 24  # a prose column may break a word longer than this, no other


@dataclass
class Rows:
    """A titled table whose columns named in ``whole`` are never broken."""

    title: str
    header: Sequence[str]
    whole: Collection[str] = ()
    rows: list[Sequence[Text]] = field(default_factory=list)

    def add_row(self, *cells: str | Text) -> None:
        """Cells are plain text (never read as markup: a node's name may hold brackets) or
        a styled ``Text``."""
        self.rows.append([cell if isinstance(cell, Text) else Text(cell) for cell in cells])

    def _least(self, column: int) -> int:
        """The narrowest the column can be without breaking what must stay whole."""
        name = self.header[column]
        cells = [name, *(row[column].plain for row in self.rows)]
        if name in self.whole:
            return max(len(line) for cell in cells for line in cell.splitlines() or [""])
        words = [len(word) for cell in cells for word in cell.split()]
        return min(max(words, default=1), _LONGEST_WORD)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        least = sum(self._least(c) + _BORDER for c in range(len(self.header))) + 1
        yield self._table() if least <= options.max_width else self._records()

    def _table(self) -> Table:
        table = Table(title=Text(self.title))
        for column, name in enumerate(self.header):
            if name in self.whole:
                table.add_column(name, no_wrap=True, min_width=self._least(column))
            else:
                table.add_column(name, overflow="fold", min_width=self._least(column))
        for row in self.rows:
            table.add_row(*row)
        return table

    def _records(self) -> Group:
        width = max((len(name) for name in self.header), default=0)
        parts: list[Text] = [Text(self.title, style="bold")]
        for number, row in enumerate(self.rows, 1):
            parts.append(Text(f"── {number} of {len(self.rows)} ──", style="dim"))
            for name, cell in zip(self.header, row, strict=True):
                lines = cell.split("\n") or [Text("")]
                parts.append(Text(f"{name.ljust(width)}  ").append_text(lines[0]))
                parts.extend(Text(" " * (width + 2)).append_text(line) for line in lines[1:])
        return Group(*parts)
