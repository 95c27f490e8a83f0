"""Every study in the store: task, state, progress and the last activity. Enter opens one."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header, Static

from annotate.errors import UserError
from annotate.protocol.progress import StudyOverview, studies_overview
from annotate.terminal_text import SafeText as Text
from annotate.tui.console.fmt import ago, share
from annotate.tui.console.screens.base import LiveScreen
from annotate.tui.console.table import Table


class StudiesScreen(LiveScreen[list[StudyOverview]]):
    BINDINGS = [Binding("o", "open", "Open study"), Binding("enter", "open", "Open", show=False)]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("Studies", style="bold"), classes="screen-title")
        yield Table(id="studies", cursor_type="row", zebra_stripes=True)
        yield Static("", id="studies-empty", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#studies", DataTable)
        table.add_columns("Study", "Task", "State", "Items complete", "Labels", "Last activity")
        self.query_one("#studies", DataTable).focus()

    def fetch(self, app: Any) -> list[StudyOverview]:
        return studies_overview(app.engine)

    def show(self, data: list[StudyOverview]) -> None:
        table = self.query_one("#studies", DataTable)
        row = table.cursor_row
        table.clear()
        now = self.app.clock()  # type: ignore[attr-defined]
        for s in data:
            table.add_row(
                Text(s.name),
                Text(s.task),
                Text(s.state),
                Text(f"{s.items_complete}/{s.n_sample}"),
                Text(f"{s.labels_total}/{s.k * s.n_sample} ({share(s.share_done)})"),
                Text(ago(s.last_activity, now)),
                key=s.name,
            )
        if data:
            table.move_cursor(row=min(row, len(data) - 1))
        self.query_one("#studies-empty", Static).update(
            "" if data else "No studies yet: `annotate study create` makes one."
        )

    def action_open(self) -> None:
        table = self.query_one("#studies", DataTable)
        if not table.row_count:
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        assert key is not None
        try:
            ctx = self.app.load(key)  # type: ignore[attr-defined]
        except UserError as exc:  # deleted meanwhile, or its task spec is gone: stay here
            self.app.notify_error(str(exc))  # type: ignore[attr-defined]
            return
        self.app.open_study(ctx)  # type: ignore[attr-defined]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()
