"""The study's report (the same builder as `annotate report`) with its charts drawn in the
terminal: the majority-of-k curve, each annotator's accuracy with its interval, the confusion
matrix and, for diagnostic sets, R3 per category for the humans and any models.

Building a report resamples every item, so it is not redone on every new label: the screen
says when labels came in since, and `u` builds it again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Static
from textual_plotext import PlotextPlot

from annotate.protocol.studies import StudyContext
from annotate.report.build import study_report
from annotate.report.model.schema import StudyReport
from annotate.terminal_text import SafeText as Text
from annotate.tui.console.charts import (
    ReportCharts,
    confusion_text,
    draw_annotators,
    draw_curve,
    draw_r3,
    report_charts,
)
from annotate.tui.console.screens.base import LiveScreen
from annotate.wording import fixed

REPORT_BOOTSTRAP = 200
"""Bootstrap replicates for the console's intervals (`annotate report` draws 1000: use it for
the numbers a paper quotes)."""


@dataclass(frozen=True)
class ReportView:
    report: StudyReport
    charts: ReportCharts


def score(value: float | None) -> str:
    return "–" if value is None else fixed(100 * value, 1)


def flags_text(report: StudyReport) -> Text:
    """The report's flags section in short: counts, the excluded items and their effect."""
    flags = report.flags
    if flags is None or (not flags.n_flags and not flags.excluded_items):
        return Text("")
    text = Text("Flags", style="bold")
    text.append(
        f": {flags.n_flags} raised ({flags.open} open, {flags.resolved} resolved, "
        f"{flags.excluded} on excluded items) · the Flags screen lists each\n"
    )
    for item in flags.excluded_items:
        text.append(f"  excluded item {item.source_id} ({item.n_labels} labels) by {item.by}: ")
        text.append(f"{item.reason}\n")
    if flags.excluded_items:
        text.append(
            f"  task score without the excluded items {score(flags.task_score_without_excluded)}"
            f", with them {score(flags.task_score_with_excluded)}\n"
        )
    if flags.note:
        text.append(f"  {flags.note}\n", style="dim")
    return text


class ReportScreen(LiveScreen[ReportView]):
    BINDINGS = [
        Binding("u", "rebuild", "Update report"),
        Binding("escape,backspace", "back", "Back"),
    ]

    def __init__(self, ctx: StudyContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.view: ReportView | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text(f"Report · {self.ctx.study.name}", style="bold"), classes="screen-title")
        with VerticalScroll(id="report-body"):
            yield Static(Text("Building the report…", style="dim"), id="report-summary")
            yield PlotextPlot(id="chart-curve", classes="chart")
            yield PlotextPlot(id="chart-annotators", classes="chart")
            yield Static("", id="report-confusion")
            yield Static("", id="report-flags")
            yield PlotextPlot(id="chart-r3", classes="chart")
            yield Static("", id="report-notes")
        yield Footer()

    def on_screen_resume(self) -> None:
        # New labels do not rebuild the report (it is costly): they are announced instead.
        if not self.loaded:
            self.reload()
        elif self.stale:
            self._announce_new_labels()

    def reload(self) -> None:
        if self.loaded:  # the change check saw new labels: announce them, do not rebuild
            self._announce_new_labels()
            return
        super().reload()

    def action_rebuild(self) -> None:
        self.query_one("#report-summary", Static).update(
            Text("Building the report again…", style="dim")
        )
        super().reload()

    def _announce_new_labels(self) -> None:
        self.stale = True
        summary = self._summary()
        summary.append(
            "\nNew labels came in since this report: press u to update it.", style="bold yellow"
        )
        self.query_one("#report-summary", Static).update(summary)

    def fetch(self, app: Any) -> ReportView:
        report = study_report(
            app.engine,
            self.ctx.study.name,
            bootstrap=REPORT_BOOTSTRAP,
        )
        return ReportView(report, report_charts(report))

    def _summary(self) -> Text:
        if self.view is None:
            return Text("")
        r = self.view.report
        text = Text(r.summary, style="bold")
        text.append(
            f"\n{r.n_items} items with labels, {r.n_annotators} annotators, {r.n_labels} "
            f"labels · intervals from {REPORT_BOOTSTRAP} bootstrap replicates"
        )
        return text

    def show(self, data: ReportView) -> None:
        self.view = data
        self.stale = False
        self.query_one("#report-summary", Static).update(self._summary())
        charts = data.charts
        for chart_id, draw, wanted in (
            ("#chart-curve", draw_curve, True),
            ("#chart-annotators", draw_annotators, bool(charts.annotators)),
            ("#chart-r3", draw_r3, bool(charts.r3_series)),
        ):
            plot = self.query_one(chart_id, PlotextPlot)
            plot.display = wanted
            if wanted:
                draw(plot.plt, charts)
                plot.refresh()
        confusion = self.query_one("#report-confusion", Static)
        confusion.display = charts.confusion is not None
        if charts.confusion is not None:
            confusion.update(confusion_text(charts))
        self.query_one("#report-flags", Static).update(flags_text(data.report))
        notes = Text()
        for note in data.report.notes:
            notes.append(f"note: {note}\n", style="dim")
        self.query_one("#report-notes", Static).update(notes)

    def action_back(self) -> None:
        self.dismiss()
