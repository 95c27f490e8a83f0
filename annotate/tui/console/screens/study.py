"""One study, live: labels per item, items complete, labelling rate, ETA, every annotator, the
warnings `annotate status` gives and, on a study with catch items, each annotator's catch
accuracy and the drift warnings.

Redrawn whenever the app's change check sees a new label or decision (within 2 s of it). The
relative times ("last label 12 s ago", Last activity) are redrawn every second from what was
read, and the stalled-annotator warning (it depends on the time too) every WARNINGS_SECONDS,
neither reading the store.

"Agree" is the report's "agrees with majority" (report/stats/annotators.py): each answer against
the study's aggregated answer, unit by unit. It aggregates the whole study, so on a big study
whose aggregation takes a while it is worked out again at most every AGREE_SECONDS; a change
skipped for that is worked out once the wait is over, even if no label comes after it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Header, Static

from annotate.presentation.crowd_exits import exit_lines
from annotate.protocol.progress import AnnotatorProgress, ProgressTracker, StudyProgress
from annotate.protocol.status import change_marker, crowd_counts, progress_warnings
from annotate.protocol.studies import StudyContext
from annotate.report.sections.catch import CATCH_HEADERS, CatchReport, catch_report, catch_sections
from annotate.terminal_text import SafeText as Text
from annotate.text import terminal_safe
from annotate.tui.console.fmt import DASH, ago, number, share
from annotate.tui.console.screens.base import LiveScreen
from annotate.tui.console.table import Column, Table, cut
from annotate.wording import eta

BAR_WIDTH = 24
AGREE_BUDGET = 0.25
"""Seconds of aggregation that may run at every change; a slower one runs at most every
AGREE_SECONDS."""
AGREE_SECONDS = 30.0
WARNINGS_SECONDS = 30.0
"""How often the warnings are worked out again with nothing new in the store (the stalled
rule: 30 minutes without a label)."""

NAME_CELLS = 12
"""A long annotator name is cut to no fewer cells than this (whole in the detail line)."""
COLUMNS = (
    Column("annotator", "Annotator", squeeze=NAME_CELLS),
    Column("phase", "Phase"),
    Column("training", "Training"),
    Column("accuracy", "Acc."),
    Column("test", "Test"),
    Column("seconds", "Test s", drop=3),
    Column("agree", "Agree"),
    Column("flags", "Flags"),
    Column("last", "Last activity", short="Last label"),
    Column("gate", "Gate", drop=2),
    Column("reason", "Reason", drop=1),
)
"""The counts first; the gate's reason (a sentence) last, cut to REASON_WIDTH. What may go
when the window is narrow (the reason, the gate, which the phase implies, and the median
seconds) is in the detail line of the selected annotator, in full."""
REASON_WIDTH = 18


def histogram_text(progress: StudyProgress) -> Text:
    """One bar per number of labels (0..k): how many test items have that many."""
    text = Text()
    top = max(progress.histogram.values(), default=0) or 1
    past = progress.tally.past_k
    for n, items in progress.histogram.items():
        bar = "█" * round(BAR_WIDTH * items / top)
        # Past k: items whose tie took extra annotators (tie_rule extra-annotator), or as an
        # imported file had them (the tally's word).
        style = "green" if n == progress.k else "yellow" if n > progress.k else "cyan"
        text.append(f"{n} label{'s' if n != 1 else ' '} ", style="bold" if n >= progress.k else "")
        text.append(f"{bar:<{BAR_WIDTH}}", style=style)
        text.append(f" {items}" + (f" ({past})" if n > progress.k else "") + "\n")
    return text


def summary_text(progress: StudyProgress, now: datetime | None = None) -> Text:
    """`now`: the moment "last label … ago" is counted to (default: when it was read)."""
    done = progress.items_complete / progress.n_sample if progress.n_sample else None
    text = Text()
    text.append(f"{progress.items_complete} of {progress.n_sample}", style="bold")
    text.append(f" items complete ({share(done)}) · k = {progress.k} · state ")
    text.append(progress.state, style="bold")
    text.append(f"\n{progress.tally.words('test labels')}")
    text.append(f"\nLabels/hour: {rate_text(progress)}")
    text.append("\nETA: ")
    text.append(eta_text(progress), style="bold")
    now = now or progress.computed_at
    if now is not None:
        text.append(f" · last label {ago(progress.last_activity, now)}")
    return text


def rate_text(progress: StudyProgress) -> str:
    """The labelling rates; a finished study's is one, over its test phase (a recent rate
    would be of the minutes before its last label)."""
    if progress.complete:
        return f"{number(progress.rate_overall)} over the test phase (complete)"
    window = progress.recent_window
    minutes = "15" if window is None else str(max(1, round(window.total_seconds() / 60)))
    recent = f"{number(progress.rate_recent)} (last {minutes} min)"
    return f"{recent} · {number(progress.rate_overall)} (whole study)"


def eta_text(progress: StudyProgress) -> str:
    """The ETA, or why there is none: a finished study, a stuck one, imported labels (nothing
    here collects more), too little to go on."""
    if progress.complete:
        return "complete"
    if progress.stuck:
        return "none while no item can complete"
    if progress.imported:  # what the items lack, nothing here collects (the tally says why)
        return "none (imported labels)"
    if progress.eta is None:
        return "not yet (too few labels for a rate)"
    return eta(progress.eta)  # the one wording of an ETA


def annotator_cells(
    a: AnnotatorProgress, now: datetime | None, agreement: float | None = None
) -> list[Text]:
    name = Text(a.name)
    if a.synthetic:
        name.append(" (synthetic)", style="dim")
    return [
        name,
        Text(a.phase),
        Text(f"{a.training_done}/{a.training_quota}"),
        Text(share(a.training_accuracy)),
        Text(str(a.test_done)),
        Text(number(a.median_seconds)),
        Text(share(agreement)),
        Text(str(a.flags), style="bold yellow" if a.flags else ""),
        Text(ago(a.last_activity, now) if now is not None else DASH),
        Text(a.gate, style={"admitted": "green", "rejected": "red"}.get(a.gate, "")),
        cut(Text(a.gate_reason or DASH), REASON_WIDTH),  # cut once terminal-safe
    ]


def annotator_detail(a: AnnotatorProgress) -> Text:
    """The selected annotator in full: the name and the gate's reason uncut (the table may
    cut both), and the median seconds per answer of each phase, labelled (the table's "Test
    s" is the report's: test answers)."""
    text = Text(a.name, style="bold")
    if a.synthetic:  # said in the table too, unless a long name was cut there
        text.append(" (synthetic)", style="dim")
    text.append(f" · gate {a.gate}")
    if a.gate_reason:
        text.append(f": {a.gate_reason}")
    text.append(
        f" · median seconds per answer: training {number(a.median_training_seconds)}, "
        f"test {number(a.median_seconds)}"
    )
    return text


@dataclass(frozen=True)
class StudyData:
    """What one change check reads for the screen."""

    progress: StudyProgress
    catch: CatchReport | None
    """None on a study without catch items (catch_rate 0: not even read)."""
    agreement: dict[str, float | None] = field(default_factory=dict)
    """Annotator -> agrees with the majority (report.stats.annotators.agreement_with_majority)."""
    crowd: dict[str, Any] | None = None
    """A crowd study's exits per platform study and code (protocol.status.crowd_counts)."""


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
        self.agreement: dict[str, float | None] = {}
        self._agreed_at: tuple[Any, ...] | None = None
        """The study's change marker and the tracker's revision the agreement was worked out
        at: a refusal (labels set aside) or an exclusion changes it with no new label."""
        self._agree_cost = 0.0
        self._agree_when = 0.0
        self._agree_due: float | None = None
        """Seconds until a skipped agreement may be worked out (None: nothing skipped)."""
        self._agree_timer: Timer | None = None

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
            yield Static("", id="study-crowd", markup=False)
            yield Table(id="annotators", cursor_type="row", zebra_stripes=True)
            yield Static("", id="annotator-detail", markup=False)
            yield Static("", id="catch-title", markup=False)
            yield Table(id="catch", cursor_type="none", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        # Textual writes the title to the terminal's own title too: never raw
        self.app.sub_title = terminal_safe(self.ctx.study.name)
        self.query_one("#annotators", DataTable).focus()
        self.query_one("#study-warnings").display = False
        self.query_one("#study-crowd").display = self.ctx.study.crowd is not None
        # Shown from the start on a study that serves catch items: a DataTable made visible
        # in the same update that fills it was sometimes never drawn.
        serves_catch = self.ctx.protocol.catch_rate > 0
        self.query_one("#catch-title").display = serves_catch
        catch = self.query_one("#catch", DataTable)
        catch.display = serves_catch
        catch.add_columns(*CATCH_HEADERS)
        self.set_interval(self.warnings_seconds, self.show_warnings, name="warnings")
        self.keep_time()

    def fetch(self, app: Any) -> StudyData:
        progress = self.tracker.refresh(app.engine, now=app.clock())
        # Catch answers are a few in a hundred labels: read afresh at each change, only when
        # the study serves catch items at all.
        catch = catch_report(app.engine, self.ctx) if self.ctx.protocol.catch_rate > 0 else None
        crowd = None
        if self.ctx.study.crowd is not None:
            crowd = crowd_counts(app.engine, self.ctx, app.clock())
        return StudyData(progress, catch, self._agreement(app), crowd)

    def _agreement(self, app: Any) -> dict[str, float | None]:
        """The report's agreement with the majority, again when labels, gate decisions or
        exclusions changed (on a big study, at most every AGREE_SECONDS)."""
        from annotate.report.data.loading import load_study_data
        from annotate.report.stats.annotators import agreement_with_majority

        at = (change_marker(app.engine, self.ctx.id), self.tracker.revision)
        if at == self._agreed_at:
            return self.agreement
        started = time.monotonic()
        if self._agree_cost > AGREE_BUDGET and started - self._agree_when < AGREE_SECONDS:
            # the last labels of a study may come within the wait: read again after it
            self._agree_due = AGREE_SECONDS - (started - self._agree_when)
            return self.agreement
        agreement = agreement_with_majority(load_study_data(app.engine, self.ctx.study.name))
        self._agreed_at, self._agree_when, self._agree_due = at, started, None
        self._agree_cost = time.monotonic() - started
        return agreement

    def show(self, study: StudyData) -> None:
        data = self.progress = study.progress
        self.catch = study.catch
        self.agreement = study.agreement
        self._schedule_agreement()
        self.show_warnings()
        self.show_catch()
        now = self.app.clock()
        self.query_one("#study-summary", Static).update(summary_text(data, now))
        if study.crowd is not None:
            lines = "\n".join(exit_lines(study.crowd))
            self.query_one("#study-crowd", Static).update(Text(f"Crowd exits\n{lines}"))
        histogram = Text("Labels per item\n", style="bold")
        histogram.append(histogram_text(data))
        self.query_one("#study-histogram", Static).update(histogram)
        self.query_one("#annotators", Table).fill(
            COLUMNS,
            [
                (a.name, annotator_cells(a, now, self.agreement.get(a.name)))
                for a in data.annotators
            ],
        )
        self.show_detail()

    def _schedule_agreement(self) -> None:
        """A reload once a skipped agreement may be worked out (one pending at a time)."""
        if self._agree_timer is not None:
            self._agree_timer.stop()
            self._agree_timer = None
        if self._agree_due is not None:
            self._agree_timer = self.set_timer(
                self._agree_due + 0.05, self.reload, name="agreement"
            )

    def show_detail(self) -> None:
        """The detail line follows the table's cursor."""
        detail = self.query_one("#annotator-detail", Static)
        table = self.query_one("#annotators", DataTable)
        people = self.progress.annotators if self.progress is not None else []
        if not people or not table.row_count:
            detail.update("")
            return
        detail.update(annotator_detail(people[min(table.cursor_row, len(people) - 1)]))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "annotators":
            self.show_detail()

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

    def show_clocks(self) -> None:
        """Redraw the relative times at the app's "now", from what was read (no store read)."""
        data = self.progress
        if data is None:
            return
        now = self.app.clock()
        self.query_one("#study-summary", Static).update(summary_text(data, now))
        table = self.query_one("#annotators", DataTable)
        for a in data.annotators:
            if a.name in table.rows:
                table.update_cell(
                    a.name, "last", Text(ago(a.last_activity, now)), update_width=True
                )

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
