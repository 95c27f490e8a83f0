"""Agreement: Krippendorff's α, Fleiss' κ, Gwet's AC1, pairwise Cohen's κ (and its matrix)."""

from __future__ import annotations

from annotate.report.cells import (
    Section,
    coef,
    interval,
    pct,
)
from annotate.report.model.schema import (
    Agreement,
    Coefficient,
    StudyReport,
)
from annotate.report.sections.base import ReportSection
from annotate.report.stats.agreement import pairs_undefined
from annotate.wording import count_of, plural

PAIRWISE_MATRIX_UP_TO = 10
"""Annotators up to which the pairwise κ matrix is printed (else a summary)."""


def _agreement_section(a: Agreement) -> Section:
    rows = []
    alpha = a.krippendorff_alpha
    rows.append(
        [
            f"Krippendorff's α ({alpha.level})",
            coef(alpha.value),
            interval(alpha.ci_low, alpha.ci_high, 1, 3),
            f"{count_of(alpha.n_items, a.unit)} with 2+ labels" + note_suffix(alpha),
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
            detail + note_suffix(f) if detail else f.note or "",
        ]
    )
    g = a.gwet_ac1
    if g is not None:
        rows.append(
            [
                "Gwet's AC1",
                coef(g.value),
                interval(g.ci_low, g.ci_high, 1, 3),
                f"{g.n_items} {a.unit}s with 2+ labels" + note_suffix(g),
            ]
        )
    p = a.pairwise_summary
    weights = " (quadratic-weighted)" if a.pairwise_weights else ""
    rows.append(
        [
            f"Cohen's κ, pairwise{weights}",
            coef(p.mean),
            "",
            f"mean of {count_of(p.n_pairs, 'pair')}; median {coef(p.median)}, "
            f"min {coef(p.min)}, max {coef(p.max)}{pairs_undefined(p.n_pairs, p.mean)}",
        ]
    )
    uvs = a.unanimous_vs_split
    if uvs:
        for name in ("unanimous", "split"):
            part = uvs[name]
            rows.append([f"Score on {name} items", pct(part.task_score), "", f"n = {part.n}"])
    return "Agreement", ["Statistic", "Value", "95% CI", "Detail"], rows


def item_agreement_section(a: Agreement) -> Section | None:
    """The per-item agreement histogram (votes for the most chosen answer: "4/5"), its title
    and columns for every format (the terminal draws its counts as bars); None without one."""
    if not a.item_agreement_histogram:
        return None
    return (
        f"Per-{a.unit} agreement (votes for the most chosen answer)",
        ["Agreement", plural(2, a.unit).capitalize()],
        [[k, str(v)] for k, v in a.item_agreement_histogram.items()],
    )


def note_suffix(c: Coefficient) -> str:
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


def _tables(r: StudyReport) -> list[Section]:
    matrix = _pairwise_matrix(r.agreement, [a.name for a in r.annotators])
    return [_agreement_section(r.agreement), *([matrix] if matrix else [])]


SECTION = ReportSection("agreement", _tables)
