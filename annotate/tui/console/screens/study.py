"""One study, live: labels per item, items complete, labelling rate, ETA, every annotator, the
warnings `annotate status` gives and, on a study with catch items, each annotator's catch
accuracy and the drift warnings.

Redrawn whenever the app's change check sees a new label or decision (within 2 s of it). The
stalled-annotator warning depends on the time as well: the warnings are worked out again from
the progress already read every WARNINGS_SECONDS, without reading the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Footer, Header, Static

from annotate.protocol.progress import AnnotatorProgress, ProgressTracker, StudyProgress
from annotate.protocol.status import progress_warnings
from annotate.protocol.studies import StudyContext
from annotate.report.sections.catch import CATCH_HEADERS, CatchReport, catch_report, catch_sections
from annotate.terminal_text import SafeText as Text
from annotate.tui.console.fmt import DASH, ago, duration, number, share
from annotate.tui.console.screens.base import LiveScreen

BAR_WIDTH = 24
WARNINGS_SECONDS = 30.0
"""How often the warnings are worked out again with nothing new in the store (the stalled
rule: 30 minutes without a label)."""

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


@dataclass(frozen=True)
class StudyData:
    """What one change check reads for the screen."""

    progress: StudyProgress
    catch: CatchReport | None
    """None on a study without catch items (catch_rate 0: not even read)."""


def warnings_text(warnings: list[str]) -> Text:
    """One line per warning; the words carry names, so they stay plain text (SafeText)."""
    text = Text()
    for n, warning in enumerate(warnings):
        text.append("\n" if n else "")
        text.append("warning: ", style="bold yellow")
        text.append(warning)
    return text


def catch_title(c: CatchReport) -> Text:
    return Text(
        f"Catch items: rate {c.catch_rate:g}, action {c.catch_action} · recent = last "
        f"{c.window} catch answers (judged from {c.min_answers}) · {c.pool}",
        style="bold",
    )


class StudyScreen(LiveScreen[StudyData]):
    warnings_seconds = WARNINGS_SECONDS
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
        self.catch: CatchReport | None = None
        self.warnings: list[str] = []
        """What the warnings line shows: the status rules, then the catch drift warnings."""

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
            yield Static("", id="study-warnings", markup=False)
            yield DataTable(id="annotators", cursor_type="row", zebra_stripes=True)
            yield Static("", id="catch-title", markup=False)
            yield DataTable(id="catch", cursor_type="none", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.app.sub_title = self.ctx.study.name
        self.query_one("#annotators", DataTable).add_columns(*COLUMNS)
        self.query_one("#annotators", DataTable).focus()
        self.query_one("#study-warnings").display = False
        # Shown from the start on a study that serves catch items: a DataTable made visible
        # in the same update that fills it was sometimes never drawn.
        serves_catch = self.ctx.protocol.catch_rate > 0
        self.query_one("#catch-title").display = serves_catch
        catch = self.query_one("#catch", DataTable)
        catch.display = serves_catch
        catch.add_columns(*CATCH_HEADERS)
        self.set_interval(self.warnings_seconds, self.show_warnings, name="warnings")

    def fetch(self, app: Any) -> StudyData:
        progress = self.tracker.refresh(app.engine, now=app.clock())
        # Catch answers are a few in a hundred labels: read afresh at each change, only when
        # the study serves catch items at all.
        catch = catch_report(app.engine, self.ctx) if self.ctx.protocol.catch_rate > 0 else None
        return StudyData(progress, catch)

    def show(self, study: StudyData) -> None:
        data = self.progress = study.progress
        self.catch = study.catch
        self.show_warnings()
        self.show_catch()
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

    def show_warnings(self) -> None:
        """The status warnings at the app's "now" (from the progress already read), then the
        catch drift warnings; the line is hidden when there are none."""
        if self.progress is None:
            return
        found = progress_warnings(self.ctx, self.progress, self.app.clock())
        found += self.catch.warnings if self.catch is not None else []
        self.warnings = found
        line = self.query_one("#study-warnings", Static)
        line.update(warnings_text(found))
        line.display = bool(found)

    def show_catch(self) -> None:
        sections = catch_sections(self.catch)
        if self.catch is None or not sections:
            return
        _, _, rows = sections[0]
        self.query_one("#catch-title", Static).update(catch_title(self.catch))
        table = self.query_one("#catch", DataTable)
        table.clear()
        for row, a in zip(rows, self.catch.annotators, strict=True):
            cells = [Text(cell) for cell in row]
            cells[5].stylize("bold red" if a.drifting else ("yellow" if a.first_drift_at else ""))
            table.add_row(*cells)

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
