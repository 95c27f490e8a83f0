"""The terminal view of a report: one rich table per section, in the registry's order
(`sections.registry`); Markdown (`markdown`), HTML and LaTeX read the same sections, so every
view shows the same numbers (JSON is `StudyReport.to_json()`).

Text that comes from data or people (study, item ids, labels, annotator names, tags) is never
parsed as markup: every cell and title is a `rich.text.Text`.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from annotate.report.cells import Section, coef, interval, pct
from annotate.report.model.schema import FileAgreement, StudyReport
from annotate.report.sections.agreement import item_agreement_section
from annotate.report.sections.agreement import note_suffix as _note
from annotate.report.sections.registry import SECTIONS
from annotate.report.stats.agreement import pairs_undefined
from annotate.terminal_text import SafeText as Text
from annotate.wording import count_of

BAR_WIDTH = 40


# --- rich ------------------------------------------------------------------------------------


def _table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> Table:
    show_header = any(headers)
    table = Table(title=Text(title, style="bold"), title_justify="left", show_header=show_header)
    for heading in headers:
        table.add_column(Text(heading), overflow="fold")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def sections(r: StudyReport) -> list[Section]:
    """Every section's tables, in the registry's order (empty sections left out)."""
    return [t for section in SECTIONS for t in section.tables(r)]


def histogram_bars(histogram: dict[str, int], width: int = BAR_WIDTH) -> list[tuple[str, str, int]]:
    """(key, bar, count) per histogram entry, bars scaled to the largest count."""
    top = max(histogram.values(), default=0)
    return [(k, "█" * (round(v / top * width) if top else 0), v) for k, v in histogram.items()]


def interval_lines(report: StudyReport) -> list[str]:
    """What the quotable line's interval holds fixed, and the wider one that does not."""
    lines = []
    if report.headline_interval is not None:
        lines.append(f"Interval: {report.headline_interval.method}.")
    humans = report.humans_interval
    if humans is not None and report.task_score.value is not None:
        lines.append(
            f"Annotators like these, not only these: {pct(report.task_score.value)} "
            f"{interval(humans.low, humans.high)} ({humans.method})."
        )
    return lines


def render_table(report: StudyReport, console: Console) -> None:
    """The terminal view: the quotable summary, then one table per section."""
    console.print(Text(report.summary, style="bold"))
    for line in interval_lines(report):
        console.print(Text(line))
    console.print()
    for title, headers, rows in sections(report):
        console.print(_table(title, headers, rows))
        if title == "Agreement":
            histogram = item_agreement_section(report.agreement)
            if histogram:
                console.print(Text(histogram[0], style="bold"))
                hist = report.agreement.item_agreement_histogram or {}
                for key, bar, count in histogram_bars(hist):
                    console.print(Text(f"  {key:>7} {bar} {count}"))
                console.print()
    for note in report.notes:
        console.print(Text(f"note: {note}"))


def render_agreement_table(result: FileAgreement, console: Console) -> None:
    """The view of `annotate agreement FILE`."""
    alpha, fleiss, pairs = result.krippendorff_alpha, result.fleiss_kappa, result.pairwise_summary
    on = result.computed_on or {}

    def where(key: str) -> str:
        return f"; on {on[key]}" if key in on else ""

    fleiss_text = (
        f"{coef(fleiss.value)} {interval(fleiss.ci_low, fleiss.ci_high, 1, 3)}"
        f" ({count_of(fleiss.n_items, 'item')} x {fleiss.raters_per_item} raters)"
        f"{_note(fleiss)}"
        if fleiss.kind == "fleiss"
        else f"–{_note(fleiss)}"
    )
    rows = [
        ["File", result.file],
        [
            "Labels",
            f"{result.n_labels} ({result.n_missing} missing) on {count_of(result.n_items, 'item')} "
            f"by {count_of(result.n_annotators, 'annotator')}",
        ],
        [
            f"Krippendorff's α ({alpha.level})",
            f"{coef(alpha.value)} {interval(alpha.ci_low, alpha.ci_high, 1, 3)}{_note(alpha)}"
            f"{where('krippendorff_alpha')}",
        ],
        ["Fleiss' κ (nominal)", fleiss_text],
        [
            "Cohen's κ, pairwise" + (" (quadratic-weighted)" if result.pairwise_weights else ""),
            f"mean {coef(pairs.mean)} over {count_of(pairs.n_pairs, 'pair')} "
            f"(min {coef(pairs.min)}, max {coef(pairs.max)})"
            f"{pairs_undefined(pairs.n_pairs, pairs.mean)}{where('pairwise_cohen_kappa')}",
        ],
    ]
    g = result.gwet_ac1
    if g is not None:
        rows.append(
            [
                "Gwet's AC1",
                f"{coef(g.value)} {interval(g.ci_low, g.ci_high, 1, 3)}"
                f" ({count_of(g.n_items, 'item')} with 2+ labels){_note(g)}{where('gwet_ac1')}",
            ]
        )
    console.print(_table("Agreement", ["", ""], rows))
    if result.item_agreement_histogram is None:
        return
    console.print(Text("Per-item agreement (nominal: votes for the most chosen value)"))
    for key, bar, count in histogram_bars(result.item_agreement_histogram):
        console.print(Text(f"  {key:>7} {bar} {count}"))
