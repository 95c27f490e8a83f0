"""The console's tables: Textual's DataTable, drawn afresh whenever its column widths change,
and filled with the columns that fit its width.

A DataTable measures the cells it was given on its next idle, and caches every cell and line it
draws under an update count that this measuring leaves as it was. A frame drawn between filling
the table and that idle (the terminal draws when it likes) kept the header at the widths of the
labels alone while the rows drawn later took the cells' widths: "Acc." sat over "6/6" until
something else redrew the table, such as a resize of the window. Here new widths count as an
update, as a resize does, so every cached cell and line is drawn again at them.

A table wider than its window hides its last columns behind a sideways scroll nobody finds (at
80 columns the Study table's Gate and Reason were off screen). `fill` therefore shows, of the
columns it is given, as many as fit: the full headers, else the short ones, and drops the
columns that may go (what they hold is shown in full elsewhere, in the line about the
selected row) before any header is cut. When even that is too wide (a 60-character study or
annotator name), the columns that may be cut (`Column.squeeze`: names, whole in that line too)
end in "…" at the width that fits. Cells are cut after they were made terminal-safe (SafeText):
the width cut is the width drawn, and a name is never parsed as markup.

The relative times ("12 s ago") are redrawn every second in place, one cell per row. For each
updated cell narrower than its column, DataTable measures every cell of the column again: with
200 annotators, 40,000 measures a second, which kept the console busy and its keys slow. Here a
column is measured again at most once per idle, whatever number of its cells changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.render import measure
from textual.widgets import DataTable
from textual.widgets.data_table import CellKey, ColumnKey, RowKey


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    short: str | None = None
    """The header when the full ones do not fit."""
    drop: int | None = None
    """May be left out when the table does not fit, lowest first (None: always shown). What
    it holds must be on the screen elsewhere."""
    squeeze: int | None = None
    """May be cut with "…" down to this many cells (but not below its header) when the table
    does not fit with every droppable column gone (None: never cut). What it holds must be
    on the screen whole elsewhere."""
    cut_first: bool = False
    """Cut (down to `squeeze`) before the other squeezable columns, which go in column order:
    a comment before the name that says whose it is."""


Row = tuple[str, Sequence[Text]]
"""A row's key and its cells, one per column given to `fill`."""


@dataclass(frozen=True)
class Layout:
    labels: list[str]
    """The header of each column given ("" for a column left out)."""
    caps: dict[int, int]
    """Column index -> the most cells its cells take (cut with "…"), for squeezed columns."""


def content_widths(columns: Sequence[Column], rows: Sequence[Row]) -> list[int]:
    return [
        max((cell_len(cells[n].plain) for _, cells in rows), default=0) for n in range(len(columns))
    ]


def layout(columns: Sequence[Column], rows: Sequence[Row], width: int, pad: int = 1) -> Layout:
    """The headers (`fitting`), then, if the table is still wider than `width`, how far
    each squeezable column is cut (those cut first, then in column order) to make it fit."""
    labels = fitting(columns, rows, width, pad)
    widths = content_widths(columns, rows)
    shown = [n for n, label in enumerate(labels) if label]
    need = sum(max(widths[n], cell_len(labels[n])) + 2 * pad for n in shown)
    caps: dict[int, int] = {}
    for n in sorted(shown, key=lambda n: not columns[n].cut_first):
        least = columns[n].squeeze
        if need <= width or least is None:
            continue
        cap = max(least, cell_len(labels[n]), widths[n] - (need - width))
        if cap < widths[n]:
            caps[n] = cap
            need -= widths[n] - cap
    return Layout(labels, caps)


def cut(cell: Text, cells: int | None) -> Text:
    """`cell` in at most `cells` cells, ending in "…" when cut (a copy: `cell` is kept)."""
    if cells is None or cell.cell_len <= cells:
        return cell
    short = cell.copy()
    short.truncate(cells, overflow="ellipsis")
    return short


def fitting(columns: Sequence[Column], rows: Sequence[Row], width: int, pad: int = 1) -> list[str]:
    """The headers to show for `width` cells (empty strings for the columns left out): every
    column with full headers if they fit, else short ones, leaving out fewer columns first."""
    widths = content_widths(columns, rows)
    droppable = sorted((c.drop, n) for n, c in enumerate(columns) if c.drop is not None)
    gone: set[int] = set()
    for step in range(len(droppable) + 1):
        if step:
            gone.add(droppable[step - 1][1])
        for use_short in (False, True):
            labels = [
                "" if n in gone else (c.short or c.label) if use_short else c.label
                for n, c in enumerate(columns)
            ]
            need = sum(
                max(widths[n], cell_len(label)) + 2 * pad
                for n, label in enumerate(labels)
                if n not in gone
            )
            if need <= width:
                return labels
    return labels  # the fewest columns, short headers: the table scrolls sideways


class Table(DataTable[Any]):
    _spec: tuple[Column, ...] = ()
    _filled: Sequence[Row] = ()
    _shown: Layout | None = None

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        before = self._widths()
        super()._update_dimensions(new_rows)
        if self._widths() != before:
            self._update_count += 1  # the key of every cache: nothing drawn before is reused
            self.refresh()

    def _update_column_widths(self, updated_cells: set[CellKey]) -> None:
        """DataTable's rule (a column as wide as its widest cell or its label), measuring the
        whole column once per idle instead of once per updated cell narrower than it."""
        changed: dict[ColumnKey, list[int]] = {}
        for row_key, column_key in updated_cells:
            if column_key in self.columns and row_key in self.rows:
                changed.setdefault(column_key, []).append(self._cell_width(row_key, column_key))
        for column_key, widths in changed.items():
            column = self.columns[column_key]
            if min(widths) < column.content_width:  # it may have narrowed: measure it all
                widths = [self._cell_width(row.key, column_key) for row in self.ordered_rows]
            column.content_width = max([*widths, measure(self.app.console, column.label, 1)])
        self._require_update_dimensions = True  # as DataTable's: the widths changed the size

    def _cell_width(self, row_key: RowKey, column_key: ColumnKey) -> int:
        # Every cell is a Text (`Row`), which DataTable draws as it is: measured so here too.
        return measure(self.app.console, self._data[row_key][column_key], 1)

    def _widths(self) -> list[int]:
        widths = [column.get_render_width(self) for column in self.ordered_columns]
        return [self._row_label_column_width, *widths]

    def _room(self) -> int:
        """Cells the table has across (the window's before its first layout)."""
        return self.scrollable_content_region.width or self.app.size.width

    def fill(self, columns: Sequence[Column], rows: Sequence[Row]) -> None:
        """Show `rows` under the `columns` that fit (`layout`), the cursor kept on its row."""
        self._spec, self._filled = tuple(columns), list(rows)
        row = self.cursor_row
        shown = layout(columns, rows, self._room(), self.cell_padding)
        if shown != self._shown:  # new headers or cuts: new columns (clear keeps old widths)
            self.clear(columns=True)
            for column, label in zip(columns, shown.labels, strict=True):
                if label:
                    self.add_column(label, key=column.key)
            self._shown = shown
        else:
            self.clear()
        for key, cells in rows:
            self.add_row(
                *(cut(c, shown.caps.get(n)) for n, c in enumerate(cells) if shown.labels[n]),
                key=key,
            )
        if rows:
            self.move_cursor(row=min(row, len(rows) - 1))

    def shows(self, key: str) -> bool:
        """The column `key` is on screen."""
        return any(str(k.value) == key for k in self.columns)

    def on_resize(self, event: events.Resize) -> None:
        if self._spec and layout(self._spec, self._filled, self._room(), self.cell_padding) != (
            self._shown
        ):
            self.fill(self._spec, self._filled)
