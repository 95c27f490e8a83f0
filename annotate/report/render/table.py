"""Render a report: rich tables for the terminal, Markdown for papers. Both read the typed
report (`schema.StudyReport`) through the same sections, so every view shows the same numbers
(JSON is `StudyReport.to_json()`).

Text that comes from data or people (study, item ids, labels, annotator names, tags) is never
parsed as markup: every cell and title is a `rich.text.Text`.

Scores are shown x100 with one decimal, as the papers do; agreement coefficients as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from annotate.report.aggregation.latent import model_aggregation_sections
from annotate.report.model.schema import (
    Agreement,
    Coefficient,
    FileAgreement,
    LabelSuspect,
    PhenomenonScore,
    QuestionSuspect,
    RatingSuspect,
    StudyReport,
)
from annotate.report.sections.catch import catch_sections
from annotate.report.sections.datasheet import datasheet_sections
from annotate.report.sections.early_stop import early_stop_table
from annotate.report.sections.flags import flags_sections
from annotate.terminal_text import SafeText as Text
from annotate.wording import count_of

SUSPECTS_SHOWN = 10
TIES_SHOWN = 10
PAIRWISE_MATRIX_UP_TO = 10
"""Annotators up to which the pairwise κ matrix is printed (else a summary)."""
BAR_WIDTH = 40

METRIC_NAMES = {
    "accuracy": "Accuracy",
    "f1": "F1",
    "macro_f1": "Macro-F1",
    "mcc": "MCC",
    "r3": "R3",
    "pearson": "Pearson",
    "spearman": "Spearman",
    "f1a": "F1a",
    "em": "EM",
    "record_f1": "F1",
    "record_em": "EM",
    "gender_parity": "Gender parity",
}


def pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f}"


def coef(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def interval(low: float | None, high: float | None, scale: float = 100, digits: int = 1) -> str:
    if low is None or high is None:
        return ""
    return f"[{low * scale:.{digits}f}, {high * scale:.{digits}f}]"


def seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def share(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def votes_text(votes: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in votes.items())


# --- sections as (title, headers, rows) shared by both renderers ----------------------------

Section = tuple[str, list[str], list[list[str]]]


def _scores_section(r: StudyReport) -> Section:
    rows = []
    for metric in r.metrics:
        s = r.scores[metric]
        rows.append(
            [
                METRIC_NAMES.get(metric, metric),
                pct(s.value),
                interval(s.ci_low, s.ci_high),
                interval(s.wilson_low, s.wilson_high),
            ]
        )
    t = r.task_score
    rows.append(["Task score (mean)", pct(t.value), interval(t.ci_low, t.ci_high), ""])
    headers = ["Metric", "Value", "95% CI (bootstrap)", "95% CI (Wilson)"]
    if "accuracy" not in r.metrics:
        headers, rows = headers[:3], [row[:3] for row in rows]
    return "Scores of the human aggregate (x100)", headers, rows


def _confusion_section(r: StudyReport) -> Section | None:
    cm = r.confusion_matrix
    if not cm:
        return None
    headers = ["gold \\ human", *cm.predicted]
    rows = [[g, *(str(v) for v in row)] for g, row in zip(cm.gold, cm.matrix, strict=True)]
    return f"Confusion matrix (per {cm.unit})", headers, rows


def _annotator_section(r: StudyReport) -> Section:
    metrics = r.metrics
    headers = ["Annotator", "n", *(METRIC_NAMES.get(m, m) for m in metrics)]
    if len(metrics) > 1:
        headers.append("Task score")
    votes = r.kind != "regression"  # ratings are averaged, not voted on
    headers += ["Agrees with majority"] * votes + ["s/item (median)"]
    rows = []
    for a in r.annotators:
        name = a.name + (" (synthetic)" if a.synthetic else "")
        row = [name, str(a.n), *(pct(a.scores.get(m)) for m in metrics)]
        if len(metrics) > 1:
            row.append(pct(a.task_score))
        row += [share(a.agrees_with_majority)] * votes + [seconds(a.seconds_per_item)]
        rows.append(row)
    spread = r.individual.task_score
    for label in ("mean", "median", "sd", "min", "max"):
        row = [label, "", *(pct(getattr(r.individual.metrics[m], label)) for m in metrics)]
        if len(metrics) > 1:
            row.append(pct(getattr(spread, label)))
        row += [""] * votes + [""]
        rows.append(row)
    return "Individual annotators (x100; own items)", headers, rows


def _curve_section(r: StudyReport) -> Section | None:
    if not r.majority_of_k:
        return None
    rows = [
        [
            str(c.k),
            str(c.n_items),
            str(c.draws),
            pct(c.task_score),
            "" if c.task_score_sd is None else f"± {c.task_score_sd * 100:.1f}",
        ]
        for c in r.majority_of_k
    ]
    return (
        "Majority of k (labels of each item drawn at random)",
        ["k", "Items", "Draws", "Score", "SD over draws"],
        rows,
    )


def _agreement_section(a: Agreement) -> Section:
    rows = []
    alpha = a.krippendorff_alpha
    rows.append(
        [
            f"Krippendorff's α ({alpha.level})",
            coef(alpha.value),
            interval(alpha.ci_low, alpha.ci_high, 1, 3),
            f"{count_of(alpha.n_items, a.unit)} with 2+ labels" + _note(alpha),
        ]
    )
    c = a.krippendorff_alpha_collapsed
    if c is not None:
        rows.append(
            [
                "Krippendorff's α (nominal, collapsed)",
                coef(c.value),
                interval(c.ci_low, c.ci_high, 1, 3),
                c.note or "",
            ]
        )
    f = a.fleiss_kappa
    detail = f"{f.n_items} complete {a.unit}s x {f.raters_per_item} raters" if f.n_items else ""
    rows.append(
        [
            "Fleiss' κ",
            coef(f.value),
            interval(f.ci_low, f.ci_high, 1, 3),
            detail + _note(f),
        ]
    )
    g = a.gwet_ac1
    if g is not None:
        rows.append(
            [
                "Gwet's AC1",
                coef(g.value),
                interval(g.ci_low, g.ci_high, 1, 3),
                f"{g.n_items} {a.unit}s with 2+ labels" + _note(g),
            ]
        )
    p = a.pairwise_summary
    weights = " (quadratic-weighted)" if a.pairwise_weights else ""
    rows.append(
        [
            f"Cohen's κ, pairwise{weights}",
            coef(p.mean),
            "",
            f"mean of {p.n_pairs} pairs; median {coef(p.median)}, "
            f"min {coef(p.min)}, max {coef(p.max)}",
        ]
    )
    uvs = a.unanimous_vs_split
    if uvs:
        for name in ("unanimous", "split"):
            part = uvs[name]
            rows.append([f"Score on {name} items", pct(part.task_score), "", f"n = {part.n}"])
    return "Agreement", ["Statistic", "Value", "95% CI", "Detail"], rows


def _note(c: Coefficient) -> str:
    return f" ({c.note})" if c.note else ""


def _pairwise_matrix(a: Agreement, names: list[str]) -> Section | None:
    if not a.pairwise_cohen_kappa or len(names) > PAIRWISE_MATRIX_UP_TO:
        return None
    value = {(p.a, p.b): p.kappa for p in a.pairwise_cohen_kappa}
    rows = []
    for x in names:
        row = [x]
        for y in names:
            v = value.get((x, y), value.get((y, x)))
            row.append("" if x == y else coef(v, 2) if (x, y) in value or (y, x) in value else "·")
        rows.append(row)
    return "Pairwise Cohen's κ", ["", *names], rows


def _ties_section(r: StudyReport) -> Section:
    t = r.ties
    rows = [["Tie rule", t.rule]]
    if not t.applies:
        rows.append(["", t.note or ""])
        return "Ties", ["", ""], rows
    rows += [
        [f"Tied {t.unit}s", str(t.n_tied)],
        ["Resolved at random (study seed)", str(t.resolved_at_random)],
        ["Resolved by dev majority class", str(t.resolved_by_dev_majority_class)],
        ["Abstained (counted wrong)", str(t.abstained_counted_wrong)],
        ["Open, awaiting an extra annotator (counted wrong)", str(t.open_counted_wrong)],
        [
            f"{t.unit.capitalize()}s with more than k labels",
            str(t.units_with_more_than_k_labels),
        ],
    ]
    if t.note:
        rows.append(["Note", t.note])
    for item in t.items[:TIES_SHOWN]:
        rows.append(
            [
                f"  {item.item}",
                f"{votes_text(item.votes)} -> {item.result or 'no answer'} ({item.resolution})",
            ]
        )
    if len(t.items) > TIES_SHOWN:
        rows.append(["", f"… {len(t.items) - TIES_SHOWN} more (see --format json)"])
    return "Ties", ["", ""], rows


def _diagnostics_section(r: StudyReport) -> Section | None:
    d = r.diagnostics
    if not d:
        return None
    models = [m.name for m in r.models]
    metric = METRIC_NAMES.get(d.metric, d.metric)
    headers = ["Category", "Phenomenon", "n", f"Human {metric}", "95% CI", *models]

    def row(cat: str, tag: str, e: PhenomenonScore) -> list[str]:
        per_model = e.models or {}
        return [
            cat,
            tag,
            str(e.n),
            coef(e.value, 2),
            interval(e.ci_low, e.ci_high, 1, 2),
            *(coef(per_model[m].value, 2) for m in models),
        ]

    rows = [row("All tagged items", "", d.all_tagged)]
    for cat, e in d.coarse.items():
        rows.append(row(cat, "(any)", e))
        for tag, f in d.fine.get(cat, {}).items():
            rows.append(row("", tag, f))
    return f"Diagnostics by phenomenon ({metric}). {d.note}", headers, rows


def _models_section(r: StudyReport) -> Section | None:
    if not r.models:
        return None
    metrics = r.metrics
    headers = [
        "Model",
        "n",
        *(METRIC_NAMES.get(m, m) for m in metrics),
        "Task score",
        "95% CI",
        "Paired (McNemar)",
    ]
    rows = []
    for m in r.models:
        if m.scores is None or m.task_score is None:
            rows.append([m.name, str(m.n), *("–" for _ in metrics), "–", "", ""])
            continue
        paired = m.paired
        test = ""
        if paired:
            test = (
                f"human only right {paired.human_only_right}, model only right "
                f"{paired.model_only_right}, p = {coef(paired.mcnemar_p)}"
            )
        t = m.task_score
        rows.append(
            [
                m.name,
                str(m.n),
                *(pct(m.scores[x].value) for x in metrics),
                pct(t.value),
                interval(t.ci_low, t.ci_high),
                test,
            ]
        )
    return "Models on the same items (x100)", headers, rows


def _suspects_section(r: StudyReport) -> Section | None:
    s = r.gold_suspects
    if not s:
        return None
    shown = s[:SUSPECTS_SHOWN]
    total = max(r.n_gold_suspects, len(s))
    title = f"Gold suspects: the human answer disagrees with gold ({total}; strongest first)"
    # A report's suspects are all of one kind (the task's).
    ratings = [x for x in shown if isinstance(x, RatingSuspect)]
    questions = [x for x in shown if isinstance(x, QuestionSuspect)]
    labels = [x for x in shown if isinstance(x, LabelSuspect)]
    if ratings:
        rows = [
            [x.item, f"{x.gold:g}", f"{x.human:.2f}", ", ".join(f"{v:g}" for v in x.ratings)]
            for x in ratings
        ]
        return title, ["Item", "Gold", "Human", "Ratings"], rows
    if questions:
        rows = [
            [
                x.item,
                "; ".join(
                    f"{a.answer}: gold {a.gold}, votes {votes_text(a.votes)}" for a in x.answers
                ),
                share(x.against_gold),
            ]
            for x in questions
        ]
        return title, ["Question", "Answers judged against gold", "Against gold"], rows
    rows = []
    for x in labels:
        gold = x.gold if isinstance(x.gold, str) else " / ".join(x.gold)
        votes = votes_text(x.votes)
        if x.answers:
            votes += f" (scale: {votes_text(x.answers)})"
        rows.append([x.item, gold, x.majority, votes, share(x.against_gold)])
    return title, ["Item", "Gold", "Majority", "Votes", "Against gold"], rows


def _gate_section(r: StudyReport) -> Section:
    g = r.gate
    rows = [
        [
            d.annotator,
            "admitted" if d.admitted else "refused",
            d.rule,
            "–" if d.threshold is None else f"{d.threshold:.3f}",
            "–" if d.score is None else f"{d.score:.3f}",
            str(d.n_items),
            d.decided_by,
            d.decided_at,
            d.reason or "not recorded",
        ]
        for d in g.decisions
    ]
    if not rows:
        rows = [["(no gate decisions recorded)", "", "", "", "", "", "", "", ""]]
    title = f"Gate decisions: {len(g.admitted)} admitted, {len(g.refused)} refused"
    headers = ["Annotator", "Decision", "Rule", "Threshold", "Score", "Items", "By", "At"]
    return title, [*headers, "Reason"], rows


def _benchmark_section(r: StudyReport) -> Section | None:
    b = r.benchmark
    if not b or b.n_tasks_covered < 2:
        return None
    rows = [[t.task, t.study, pct(t.task_score)] for t in b.tasks]
    label = "partial" if b.partial else "complete"
    rows.append(
        [
            f"{b.benchmark} score ({label}, {b.n_tasks_covered} of {b.n_tasks} tasks)",
            "",
            pct(b.score),
        ]
    )
    if b.note:
        rows.append([b.note, "", ""])
    return f"Benchmark: {b.benchmark}", ["Task", "Study", "Task score"], rows


def _protocol_section(r: StudyReport) -> Section:
    p = r.protocol
    rows = [
        [k, _value(v)]
        for k, v in p.items()
        if k not in {"assumptions", "task_overrides", "description"}
    ]
    for a in p.get("assumptions", []) or []:
        rows.append(["assumption", a])
    return "Effective protocol", ["Setting", "Value"], rows


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, dict | list):
        return (
            ", ".join(f"{a}={b}" for a, b in v.items())
            if isinstance(v, dict)
            else ", ".join(map(str, v))
        )
    return str(v)


def _sample_rows(r: StudyReport) -> list[list[str]]:
    s = r.sample
    per = ", ".join(f"{n} labels: {c}" for n, c in s.labels_per_item.items())
    b = r.bootstrap
    return [
        ["Study", f"{r.study} ({r.state})"],
        ["Task", f"{r.task}: {r.task_title}"],
        [
            "Protocol",
            f"{r.protocol.get('name', '')}; tie rule {r.protocol.get('tie_rule')}; "
            f"k = {s.annotators_per_item}; seed {r.protocol.get('seed')}",
        ],
        [
            "Sample",
            f"{count_of(s.n_sample, 'test item')}; {s.n_items_labelled} labelled, "
            f"{s.n_items_complete} complete, {s.n_items_scored} scored",
        ],
        ["Labels", f"{s.n_labels} from {count_of(r.n_annotators, 'annotator')} ({per})"],
        ["Bootstrap", f"{b.replicates} replicates, seed {b.seed}" if b.replicates else "off"],
    ]


def sections(r: StudyReport) -> list[Section]:
    found: list[Section | None] = [
        ("Study", ["", ""], _sample_rows(r)),
        _scores_section(r) if r.has_gold else None,
        _confusion_section(r),
        _annotator_section(r),
        _curve_section(r),
        _agreement_section(r.agreement),
        _pairwise_matrix(r.agreement, [a.name for a in r.annotators]),
        *model_aggregation_sections(r.model_aggregation),
        *catch_sections(r.catch),
        _ties_section(r),
        early_stop_table(r.early_stop),
        _diagnostics_section(r),
        _models_section(r),
        _suspects_section(r),
        _gate_section(r),
        _benchmark_section(r),
        _protocol_section(r),
        *(datasheet_sections(r.datasheet) if r.datasheet else []),
        *(flags_sections(r.flags) if r.flags else []),
    ]
    return [s for s in found if s is not None]


# --- rich ------------------------------------------------------------------------------------


def _table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> Table:
    show_header = any(headers)
    table = Table(title=Text(title, style="bold"), title_justify="left", show_header=show_header)
    for heading in headers:
        table.add_column(Text(heading), overflow="fold")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


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
            hist = report.agreement.item_agreement_histogram
            if hist:
                unit = report.agreement.unit
                console.print(
                    Text(f"Per-{unit} agreement (votes for the most chosen answer)", style="bold")
                )
                for key, bar, count in histogram_bars(hist):
                    console.print(Text(f"  {key:>7} {bar} {count}"))
                console.print()
    for note in report.notes:
        console.print(Text(f"note: {note}"))


def render_agreement_table(result: FileAgreement, console: Console) -> None:
    """The view of `annotate agreement FILE`."""
    alpha, fleiss, pairs = result.krippendorff_alpha, result.fleiss_kappa, result.pairwise_summary
    rows = [
        ["File", result.file],
        [
            "Labels",
            f"{result.n_labels} ({result.n_missing} missing) on {count_of(result.n_items, 'item')} "
            f"by {count_of(result.n_annotators, 'annotator')}",
        ],
        [
            f"Krippendorff's α ({alpha.level})",
            f"{coef(alpha.value)} {interval(alpha.ci_low, alpha.ci_high, 1, 3)}{_note(alpha)}",
        ],
        [
            "Fleiss' κ",
            f"{coef(fleiss.value)} {interval(fleiss.ci_low, fleiss.ci_high, 1, 3)}"
            f" ({count_of(fleiss.n_items, 'item')} x {fleiss.raters_per_item} raters)"
            f"{_note(fleiss)}",
        ],
        [
            "Cohen's κ, pairwise" + (" (quadratic-weighted)" if result.pairwise_weights else ""),
            f"mean {coef(pairs.mean)} over {pairs.n_pairs} pairs "
            f"(min {coef(pairs.min)}, max {coef(pairs.max)})",
        ],
    ]
    g = result.gwet_ac1
    if g is not None:
        rows.append(
            [
                "Gwet's AC1",
                f"{coef(g.value)} {interval(g.ci_low, g.ci_high, 1, 3)}"
                f" ({g.n_items} items with 2+ labels){_note(g)}",
            ]
        )
    console.print(_table("Agreement", ["", ""], rows))
    for key, bar, count in histogram_bars(result.item_agreement_histogram):
        console.print(Text(f"  {key:>7} {bar} {count}"))


# --- Markdown --------------------------------------------------------------------------------


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace("\n", " ")


def _md_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    heads = [_md_cell(h) or " " for h in headers]
    lines = ["| " + " | ".join(heads) + " |", "|" + "|".join("---" for _ in heads) + "|"]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return lines


def render_markdown(report: StudyReport) -> str:
    """The report for a paper or a README: a heading, the quotable line, then pipe tables."""
    lines = [f"# Human performance: {_md_cell(report.study)} ({_md_cell(report.task)})", ""]
    lines += [f"> {_md_cell(report.summary)}", ""]
    lines += [_md_cell(line) + "  " for line in interval_lines(report)]
    lines += [""] if report.headline_interval or report.humans_interval else []
    histogram = report.agreement.item_agreement_histogram
    for title, headers, rows in sections(report):
        lines += [f"## {_md_cell(title)}", ""]
        lines += _md_table(headers, rows)
        lines.append("")
        if title == "Agreement" and histogram:
            lines += ["Per-item agreement (votes for the most chosen answer):", ""]
            lines += _md_table(["Agreement", "Items"], [[k, str(v)] for k, v in histogram.items()])
            lines.append("")
    if report.notes:
        lines += ["## Notes", ""] + [f"- {_md_cell(n)}" for n in report.notes] + [""]
    return "\n".join(lines)
