"""Every flagged item of the study: who flagged it, their comment and the item's text, all
verbatim (through the sanitiser, never as markup). The researcher marks a flag resolved, or
excludes the item from scoring (or includes it again), each with a reason that is stored with
who and when.

The table fits the window (`Table.fill`): a long comment, then a long annotator name or item
id, end in "…" there; the panel under it has the selected flag whole."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Header, Static

from annotate.protocol import flags
from annotate.protocol.answers import describe
from annotate.protocol.flags import FlagRow
from annotate.protocol.studies import StudyContext
from annotate.report.sections.flags import item_fields
from annotate.specs import TaskSpec
from annotate.terminal_text import SafeText as Text
from annotate.tui.console.fmt import DASH
from annotate.tui.console.screens.base import LiveScreen
from annotate.tui.console.screens.confirm import ConfirmScreen
from annotate.tui.console.table import Column, Row, Table, cut

STATE_STYLE = {flags.OPEN: "bold yellow", flags.RESOLVED: "green", flags.EXCLUDED: "red"}
COMMENT_WIDTH = 40
"""The most cells a comment takes in the table (it is whole in the panel)…"""
COMMENT_CELLS = 24
"""…and the fewest it is cut to when the window is narrow, before a long name is cut."""
NAME_CELLS = 12
"""A long annotator name or item id is cut to no fewer cells than this."""
COLUMNS = (
    Column("state", "State"),
    Column("item", "Item", squeeze=NAME_CELLS),
    Column("phase", "Phase"),
    Column("annotator", "Annotator", squeeze=NAME_CELLS),
    Column("comment", "Comment", squeeze=COMMENT_CELLS, cut_first=True),
)
"""Everything a cut cell held is in the selected flag's panel, whole."""


def field_text(value: Any) -> str:
    """An item field as text: strings as they are, anything else (lists, numbers) as JSON-ish
    Python text."""
    return value if isinstance(value, str) else repr(value)


def detail_text(flag: FlagRow, spec: TaskSpec) -> Text:
    """Everything about one flag, verbatim: what the annotator answered (in the task's words,
    as they read it), the comment and every field of the item."""
    text = Text()
    text.append(f"{flag.annotator}", style="bold")
    if flag.synthetic:
        text.append(" (synthetic)", style="dim")
    text.append(f" flagged {flag.phase} item {flag.source_id} at ")
    when = flag.answered_at  # None: imported from a file without times
    text.append(when.strftime("%Y-%m-%d %H:%M") if when else "an unknown time")
    text.append("\nAnswered: ", style="bold")
    text.append(describe(spec, flag.value))
    text.append("\nComment: ", style="bold")
    text.append(flag.comment or "(no comment)")
    text.append("\n")
    for name, value in item_fields(spec, flag.fields):  # as `annotate flags` names them
        text.append(f"{name}: ", style="bold")
        text.append(field_text(value))
        text.append("\n")
    text.append("State: ", style="bold")
    text.append(flag.state, style=STATE_STYLE.get(flag.state, ""))
    if flag.by:
        at = f" at {flag.at:%Y-%m-%d %H:%M}" if flag.at else ""
        text.append(f" by {flag.by}{at}: {flag.reason or DASH}")
    return text


def one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def flag_cells(f: FlagRow) -> list[Text]:
    """One flag's row; cut only once terminal-safe (the comment to COMMENT_WIDTH)."""
    return [
        Text(f.state, style=STATE_STYLE.get(f.state, "")),
        Text(f.source_id),
        Text(f.phase),
        Text(f.annotator),
        cut(Text(one_line(f.comment)), COMMENT_WIDTH),
    ]


class FlagsScreen(LiveScreen[list[FlagRow]]):
    BINDINGS = [
        Binding("v", "resolve", "Resolve"),
        Binding("x", "exclude", "Exclude item"),
        Binding("i", "include", "Include item"),
        Binding("escape,backspace", "back", "Back"),
    ]

    def __init__(self, ctx: StudyContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.rows: list[FlagRow] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text(f"Flags · {self.ctx.study.name}", style="bold"), classes="screen-title")
        yield Table(id="flags-table", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="flag-detail"):
            yield Static("", id="flag-text")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#flags-table", DataTable).focus()

    def fetch(self, app: Any) -> list[FlagRow]:
        return flags.list_flags(app.engine, self.ctx.id)

    def show(self, data: list[FlagRow]) -> None:
        self.rows = data
        rows: list[Row] = [(str(f.label_id), flag_cells(f)) for f in data]
        self.query_one("#flags-table", Table).fill(COLUMNS, rows)
        self._show_detail()
        self.refresh_bindings()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()
        self.refresh_bindings()  # exclude/include apply to some flags only

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer only what applies to the chosen flag: exclusion acts on test items (only
        they are scored); exclude an included item, include an excluded one."""
        if action not in ("exclude", "include"):
            return True
        flag = self.chosen(quiet=True)
        if flag is None or not flag.on_test_item:
            return False
        return (flag.state == "excluded") == (action == "include")

    def _show_detail(self) -> None:
        flag = self.chosen(quiet=True)
        detail = self.query_one("#flag-text", Static)
        if flag is None:
            detail.update(Text("No flagged items in this study.", style="dim"))
        else:
            detail.update(detail_text(flag, self.ctx.spec))

    def chosen(self, *, quiet: bool = False) -> FlagRow | None:
        table = self.query_one("#flags-table", DataTable)
        if not self.rows or not table.row_count:
            if not quiet:
                self.app.notify("There is no flag to choose.", markup=False)
            return None
        return self.rows[min(table.cursor_row, len(self.rows) - 1)]

    # --- actions ------------------------------------------------------------------------------
    def action_resolve(self) -> None:
        flag = self.chosen()
        if flag is None:
            return
        engine, ctx, by = self.app.engine, self.ctx, self.app.researcher  # type: ignore[attr-defined]

        def act(reason: str, _force: bool) -> str:
            flags.resolve_flag(engine, ctx, flag.label_id, by=by, reason=reason)
            return f"Flag of {flag.annotator} on item {flag.source_id} resolved."

        self._confirm("Mark this flag resolved", flag, act)

    def action_exclude(self) -> None:
        self._exclusion(exclude=True)

    def action_include(self) -> None:
        self._exclusion(exclude=False)

    def _exclusion(self, *, exclude: bool) -> None:
        flag = self.chosen()
        if flag is None:
            return
        engine, ctx, by = self.app.engine, self.ctx, self.app.researcher  # type: ignore[attr-defined]
        change = flags.exclude_item if exclude else flags.include_item

        def act(reason: str, _force: bool) -> str:
            change(engine, ctx, flag.item_id, by=by, reason=reason)
            done = "excluded from" if exclude else "included in"
            return f"Item {flag.source_id} {done} scoring."

        title = (
            f"Exclude item {flag.source_id} from scoring (every label of it)"
            if exclude
            else f"Include item {flag.source_id} in scoring again"
        )
        self._confirm(title, flag, act)

    def _confirm(self, title: str, flag: FlagRow, act) -> None:  # type: ignore[no-untyped-def]
        self.app.push_screen(
            ConfirmScreen(title, detail_text(flag, self.ctx.spec), act, can_force=False),
            self._after,
        )

    def _after(self, done: bool | None) -> None:
        if done:
            self.reload()

    def action_back(self) -> None:
        self.dismiss()
