"""Every study in the store: task, state, progress and the last activity. Enter opens one.

The table fits the window (`Table.fill`): at 80 columns the headers are short and the task may
go; the line under the table says everything about the selected study, its labels against
the plan in words. The relative times tick as the Study screen's do (`LiveScreen.keep_time`).
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header, Static

from annotate.errors import UserError
from annotate.protocol.progress import StudyOverview, studies_overview
from annotate.store.engine import HELD, is_held
from annotate.terminal_text import SafeText as Text
from annotate.tui.console.fmt import ago
from annotate.tui.console.screens.base import STORE_AWAY, LiveScreen
from annotate.tui.console.table import Column, Row, Table

NAME_CELLS = 12
"""A long study name is cut to no fewer cells than this (whole in the selected study's line)."""
COLUMNS = (
    Column("study", "Study", squeeze=NAME_CELLS),
    Column("task", "Task", drop=1),
    Column("state", "State"),
    Column("items", "Items complete", short="Items"),
    Column("labels", "Labels"),
    Column("last", "Last activity", short="Last label"),
)
"""The task is in the selected study's line; the rest must stay (a long name cut)."""


def study_detail(s: StudyOverview, now: Any) -> Text:
    """The selected study in full: its task and its test labels against the plan, in words."""
    text = Text(s.name, style="bold")
    text.append(f" · {s.task} · {s.state} · {s.tally.words('test labels')}")
    text.append(f" · last label {ago(s.last_activity, now)}")
    return text


class StudiesScreen(LiveScreen[list[StudyOverview]]):
    BINDINGS = [Binding("o", "open", "Open study"), Binding("enter", "open", "Open", show=False)]

    def __init__(self) -> None:
        super().__init__()
        self.studies: list[StudyOverview] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("Studies", style="bold"), classes="screen-title")
        yield Table(id="studies", cursor_type="row", zebra_stripes=True)
        yield Static("", id="study-detail", markup=False)
        yield Static("", id="studies-empty", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#studies", DataTable).focus()
        self.keep_time()

    def fetch(self, app: Any) -> list[StudyOverview]:
        return studies_overview(app.engine)

    def rows(self, now: Any) -> list[Row]:
        return [
            (
                s.name,
                [
                    Text(s.name),
                    Text(s.task),
                    Text(s.state),
                    Text(f"{s.items_complete}/{s.n_sample}"),
                    Text(s.tally.short),
                    Text(ago(s.last_activity, now)),
                ],
            )
            for s in self.studies
        ]

    def show(self, data: list[StudyOverview]) -> None:
        self.studies = data
        self.query_one("#studies", Table).fill(COLUMNS, self.rows(self.app.clock()))  # type: ignore[attr-defined]
        self.show_detail()
        self.query_one("#studies-empty", Static).update(
            "" if data else "No studies yet: `annotate study create` makes one."
        )

    def show_detail(self) -> None:
        """The line under the table follows its cursor."""
        table = self.query_one("#studies", DataTable)
        line = self.query_one("#study-detail", Static)
        if not self.studies or not table.row_count:
            line.update("")
            return
        chosen = self.studies[min(table.cursor_row, len(self.studies) - 1)]
        line.update(study_detail(chosen, self.app.clock()))  # type: ignore[attr-defined]

    def show_clocks(self) -> None:
        """Last activity at the app's "now", from what was read (no store read)."""
        table = self.query_one("#studies", DataTable)
        now = self.app.clock()  # type: ignore[attr-defined]
        for s in self.studies:
            if s.name in table.rows:
                table.update_cell(
                    s.name, "last", Text(ago(s.last_activity, now)), update_width=True
                )
        self.show_detail()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_detail()

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
        except HELD as exc:  # the store away: said, and the screen stays
            if not is_held(exc):
                raise
            self.app.notify_error(STORE_AWAY)  # type: ignore[attr-defined]
            return
        self.app.open_study(ctx)  # type: ignore[attr-defined]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()
