"""One study, live: labels per item, items complete, labelling rate, ETA and every annotator.

Redrawn whenever the app's change check sees a new label or decision (within 2 s of it).
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Footer, Header, Static

from annotate.protocol.progress import AnnotatorProgress, ProgressTracker, StudyProgress
from annotate.protocol.studies import StudyContext
from annotate.terminal_text import SafeText as Text
from annotate.tui.console.fmt import DASH, ago, duration, number, share
from annotate.tui.console.screens.base import LiveScreen

BAR_WIDTH = 24

COLUMNS = (
    "Annotator",
    "Phase",
    "Training",
    "Acc.",
    "Gate",
    "Reason",
    "Test",
    "Med. s",
    "Last activity",
    "Agree",
    "Flags",
)


def histogram_text(progress: StudyProgress) -> Text:
    """One bar per number of labels (0..k): how many test items have that many."""
    text = Text()
    top = max(progress.histogram.values(), default=0) or 1
    for n, items in progress.histogram.items():
        bar = "█" * round(BAR_WIDTH * items / top)
        text.append(f"{n} label{'s' if n != 1 else ' '} ", style="bold" if n == progress.k else "")
        text.append(f"{bar:<{BAR_WIDTH}}", style="green" if n == progress.k else "cyan")
        text.append(f" {items}\n")
    return text


def summary_text(progress: StudyProgress) -> Text:
    done = progress.items_complete / progress.n_sample if progress.n_sample else None
    text = Text()
    text.append(f"{progress.items_complete} of {progress.n_sample}", style="bold")
    text.append(f" items complete ({share(done)}) · k = {progress.k} · state ")
    text.append(progress.state, style="bold")
    text.append(f"\n{progress.labels_total} test labels, {progress.labels_needed} to go")
    text.append(f"\nLabels/hour: {number(progress.rate_recent)} (last 15 min) · ")
    text.append(f"{number(progress.rate_overall)} (whole study)")
    text.append("\nETA: ")
    eta = "complete" if progress.complete else duration(progress.eta)
    text.append(eta, style="bold")
    if progress.computed_at is not None:
        text.append(f" · last label {ago(progress.last_activity, progress.computed_at)}")
    return text


def annotator_cells(a: AnnotatorProgress, now) -> list[Text]:  # type: ignore[no-untyped-def]
    name = Text(a.name)
    if a.synthetic:
        name.append(" (synthetic)", style="dim")
    return [
        name,
        Text(a.phase),
        Text(f"{a.training_done}/{a.training_quota}"),
        Text(share(a.training_accuracy)),
        Text(a.gate, style={"admitted": "green", "rejected": "red"}.get(a.gate, "")),
        Text(a.gate_reason or DASH),
        Text(str(a.test_done)),
        Text(number(a.median_seconds)),
        Text(ago(a.last_activity, now)),
        Text(share(a.agreement)),
        Text(str(a.flags), style="bold yellow" if a.flags else ""),
    ]


class StudyScreen(LiveScreen[StudyProgress]):
    BINDINGS = [
        Binding("g", "gate", "Gate"),
        Binding("f", "flags", "Flags"),
        Binding("r", "report", "Report"),
        Binding("escape,backspace", "back", "Studies"),
    ]

    def __init__(self, ctx: StudyContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.tracker = ProgressTracker(ctx)
        """Reads only the labels added since the last refresh."""
        self.progress: StudyProgress | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(
            Text(f"Study {self.ctx.study.name} · {self.ctx.spec.title}", style="bold"),
            classes="screen-title",
        )
        with VerticalScroll(id="study-body"):
            with Horizontal(id="study-top"):
                yield Static("", id="study-summary")
                yield Static("", id="study-histogram")
            yield DataTable(id="annotators", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.app.sub_title = self.ctx.study.name
        self.query_one("#annotators", DataTable).add_columns(*COLUMNS)
        self.query_one("#annotators", DataTable).focus()

    def fetch(self, app: Any) -> StudyProgress:
        return self.tracker.refresh(app.engine, now=app.clock())

    def show(self, data: StudyProgress) -> None:
        self.progress = data
        self.query_one("#study-summary", Static).update(summary_text(data))
        histogram = Text("Labels per item\n", style="bold")
        histogram.append(histogram_text(data))
        self.query_one("#study-histogram", Static).update(histogram)
        table = self.query_one("#annotators", DataTable)
        row = table.cursor_row
        table.clear()
        for a in data.annotators:
            table.add_row(*annotator_cells(a, data.computed_at), key=a.name)
        if data.annotators:
            table.move_cursor(row=min(row, len(data.annotators) - 1))

    def action_back(self) -> None:
        self.app.sub_title = "researcher"
        self.dismiss()

    def action_gate(self) -> None:
        from annotate.tui.console.screens.gate import GateScreen

        self.app.push_screen(GateScreen(self.ctx))

    def action_flags(self) -> None:
        from annotate.tui.console.screens.flags import FlagsScreen

        self.app.push_screen(FlagsScreen(self.ctx))

    def action_report(self) -> None:
        from annotate.tui.console.screens.report import ReportScreen

        self.app.push_screen(ReportScreen(self.ctx))
