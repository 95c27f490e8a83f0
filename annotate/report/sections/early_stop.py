"""The report's section on `stop_when_decided` (which items are complete, by the engine's rule:
aggregation/wanting.py): the labels it saved, why the majority is the one full k would give,
and what it means for the agreement statistics.

The engine stops an item once no labels up to k can change its majority, so for every item
the recorded majority is the full-k majority by construction (the rule compares the leader
with the runner-up plus every label still to come, and counts a possible tie as undecided).
What changes is how many labels the agreement statistics see: Krippendorff's α takes units
with any number (≥ 2) of values, so it uses every label collected; Fleiss' κ needs the same
number of raters per item, and the items that reached k are the contested ones (the others
stopped early), so κ over them would describe a biased subset: it is not computed."""

from __future__ import annotations

import numpy as np

from annotate import completion
from annotate.report.aggregation.wanting import KAPPA_NOTE, decided_early
from annotate.report.data.coding import CodedStudy
from annotate.report.model.schema import (
    Agreement,
    Coefficient,
    EarlyStop,
)
from annotate.report.sections.base import ReportSection, single

ALPHA_NOTE = (
    "Krippendorff's α accepts missing values: it uses every label collected, each item with "
    "the labels it got (items that stopped early contribute their fewer, agreeing labels)"
)
CURVE_NOTE = (
    "the majority-of-k curve below the study's k draws from the items with at least that many "
    "labels; items that stopped early have fewer, so the rows between the stop and k lean to "
    "contested items"
)


def early_stop_section(
    coded: CodedStudy, wanted: np.ndarray, rule: completion.Rule
) -> EarlyStop | None:
    """The report's section, for a study that used the option (None otherwise)."""
    if not rule.stop_when_decided:
        return None
    n = np.bincount(coded.row_item, minlength=coded.n_items)
    done = (n > 0) & (wanted == 0)
    full = int(np.where(done, np.maximum(n, rule.k), 0).sum())
    collected = int(n[done].sum())
    saved = full - collected
    return EarlyStop.model_construct(
        enabled=True,
        labels_collected=int(n.sum()),
        labels_full_k=full,
        labels_saved=saved,
        saved_share=round(saved / full, 6) if full else None,
        items_decided_early=decided_early(coded, wanted, rule),
        majority_equals_full_k=True,
        alpha=ALPHA_NOTE,
        kappa=KAPPA_NOTE,
        curve=CURVE_NOTE,
    )


def adjust_agreement(agreement: Agreement, section: EarlyStop | None) -> Agreement:
    """κ skipped (and α's note) when items stopped early; unchanged otherwise."""
    if section is None or section.items_decided_early == 0:
        return agreement
    skipped = Coefficient.model_construct(
        level=None,
        value=None,
        ci_low=None,
        ci_high=None,
        note=KAPPA_NOTE,
        n_items=0,
        raters_per_item=None,
        kind="fleiss-skipped",
    )
    alpha = agreement.krippendorff_alpha
    alpha = alpha.model_copy(update={"note": alpha.note or ALPHA_NOTE})
    return agreement.model_copy(update={"fleiss_kappa": skipped, "krippendorff_alpha": alpha})


def early_stop_table(section: EarlyStop | None) -> tuple[str, list[str], list[list[str]]] | None:
    """The section as the report's (title, headers, rows), for the table and Markdown."""
    if section is None:
        return None
    share = "n/a" if section.saved_share is None else f"{section.saved_share * 100:.1f}%"
    return (
        "Early stop (stop_when_decided)",
        ["", ""],
        [
            ["Labels collected", str(section.labels_collected)],
            ["Labels with full k", str(section.labels_full_k)],
            ["Labels saved", f"{section.labels_saved} ({share})"],
            ["Items decided before k", str(section.items_decided_early)],
            [
                "Majority",
                "equals what full k would give: an item stops only when no labels up to k "
                "can change it (a possible tie counts as undecided)",
            ],
            ["Krippendorff's α", section.alpha],
            ["Fleiss' κ", section.kappa],
            ["Majority-of-k curve", section.curve],
        ],
    )


SECTION = ReportSection("early_stop", single(lambda r: early_stop_table(r.early_stop)))
