"""The console's tables: Textual's DataTable, drawn afresh whenever its column widths change.

A DataTable measures the cells it was given on its next idle, and caches every cell and line it
draws under an update count that this measuring leaves as it was. A frame drawn between filling
the table and that idle (the terminal draws when it likes) kept the header at the widths of the
labels alone while the rows drawn later took the cells' widths: "Acc." sat over "6/6" until
something else redrew the table, such as a resize of the window. Here new widths count as an
update, as a resize does, so every cached cell and line is drawn again at them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.widgets import DataTable
from textual.widgets.data_table import RowKey


class Table(DataTable[Any]):
    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        before = self._widths()
        super()._update_dimensions(new_rows)
        if self._widths() != before:
            self._update_count += 1  # the key of every cache: nothing drawn before is reused
            self.refresh()

    def _widths(self) -> list[int]:
        widths = [column.get_render_width(self) for column in self.ordered_columns]
        return [self._row_label_column_width, *widths]
