"""The agreement section of a report: Krippendorff's α (at the task's level of measurement),
Fleiss' κ, pairwise Cohen's κ, the per-unit agreement histogram and scores on unanimous vs
split units; and the same statistics for any long-format label file (`annotate agreement`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from sqlalchemy.engine import Engine

from annotate.completion import Rule
from annotate.errors import UserError
from annotate.report.aggregation.majority import UnitVotes, unit_votes
from annotate.report.aggregation.study import Aggregated, final_aggregate
from annotate.report.aggregation.wanting import KAPPA_NOTE, decided_early, items_wanting
from annotate.report.data.coding import CodedStudy, code_study
from annotate.report.data.loading import load_study_data
from annotate.report.data.longformat import (
    PSEUDONYMS,
    LongLabels,
    numeric_labels,
    study_long_labels,
)
from annotate.report.model.schema import (
    Agreement,
    Coefficient,
    FileAgreement,
    PairKappa,
    PairSummary,
    PartScore,
)
from annotate.report.stats import agreement as agr
from annotate.report.stats.gwet import gwet_ac1
from annotate.scoring.intervals import Resampling, rng_for
from annotate.scoring.metrics import Scorer, task_score
from annotate.wording import count_of

ALPHA_DRAWS = "alpha"
"""The purpose (`rng_for`) of the agreement coefficients' bootstrap draws, the report's and
`annotate agreement`'s alike."""


def agreement_resampling(
    tables: list[np.ndarray], replicates: int, seed: int, cluster: np.ndarray | None = None
) -> Resampling | None:
    """The one resampling of the units that α, κ and AC1 share, made here for the report and
    for `annotate agreement`: the same units in the same order, the same seed and replicate
    count give the same intervals in both. None without replicates."""
    if replicates <= 0:
        return None
    return agr.unit_resampling(tables, replicates, rng_for(seed, ALPHA_DRAWS), cluster)


def _rating_codes(numbers: np.ndarray) -> np.ndarray:
    return np.unique(numbers, return_inverse=True)[1].astype(np.int64)


def _pairable(unit: np.ndarray, n_units: int) -> int:
    return int((np.bincount(unit, minlength=n_units) >= 2).sum())


def _not_computed(note: str) -> Coefficient:
    return Coefficient.model_construct(
        level=None,
        value=None,
        ci_low=None,
        ci_high=None,
        note=note,
        n_items=0,
        raters_per_item=None,
        kind="fleiss-skipped",
    )


def study_agreement(
    coded: CodedStudy,
    final: Aggregated,
    scorer: Scorer,
    k: int,
    replicates: int,
    seed: int,
    has_gold: bool,
) -> Agreement:
    """The agreement of a study's annotators over its units (MultiRC: candidate answers, whose
    question is resampled as a whole)."""
    unit, names = coded.label_unit, coded.annotators
    regression = coded.kind == "regression"
    codes = _rating_codes(coded.label_number) if regression else coded.label_code
    n_values = int(codes.max()) + 1 if len(codes) else 0
    cluster = coded.unit_item if coded.kind == "multi_answer" else None
    is_cb = (
        bool(coded.spec.answer_scale)
        and len(coded.label_number) > 0  # no label yet: no scale to resample
        and np.isfinite(coded.label_number).all()
    )
    level = "interval" if regression else ("ordinal" if is_cb else "nominal")
    numbers = coded.label_number if level != "nominal" else None
    table = None
    if not regression and coded.n_units * max(n_values, 1) <= agr.DENSE_LIMIT:
        table = agr.counts_table(unit, codes, coded.n_units, max(n_values, 1))
    # α, κ and AC1 share one resampling of the units (α's draws), from their label counts.
    resampling = None
    if table is not None and replicates > 0:
        tables = [table]
        if is_cb:
            scale = np.unique(coded.label_number, return_inverse=True)[1]
            tables.append(agr.counts_table(unit, scale, coded.n_units, int(scale.max()) + 1))
        resampling = agreement_resampling(tables, replicates, seed, cluster)
    # Without a table (too many distinct answers: ReCoRD) α draws its own, over its pairable
    # units; `annotate agreement` tabulates any file, so the two may differ there.
    alpha = agr.krippendorff_alpha(
        unit,
        codes,
        coded.n_units,
        level,
        numbers,
        replicates=replicates,
        rng=rng_for(seed, ALPHA_DRAWS),
        cluster=cluster,
        resampling=resampling,
    )
    collapsed = None
    if is_cb:
        nominal = agr.krippendorff_alpha(
            unit,
            codes,
            coded.n_units,
            "nominal",
            replicates=replicates,
            rng=rng_for(seed, "alpha-collapsed"),
            cluster=cluster,
            resampling=resampling,
        )
        collapsed = Coefficient.model_construct(
            level="nominal",
            value=nominal.value,
            ci_low=nominal.ci_low,
            ci_high=nominal.ci_high,
            note="on the 3 classes after collapsing the 7-point answers",
            kind="alpha-collapsed",
        )
    votes = unit_votes(unit, codes, coded.n_units) if regression else final.votes
    assert votes is not None
    if regression:
        fleiss = _not_computed("not computed for ratings (a nominal statistic); see interval α")
    elif table is None:
        fleiss = _not_computed("too many distinct answers for a table")
    else:
        fk, used, raters = agr.fleiss_kappa(
            table,
            k,
            replicates=replicates,
            rng=rng_for(seed, "fleiss"),
            cluster=cluster,
            resampling=resampling,
        )
        fleiss = Coefficient.fleiss(fk, used, raters)
    ac1 = _study_ac1(coded, unit, codes, replicates, seed, cluster, resampling)
    positions = coded.label_number if regression else None
    pairs = agr.pairwise_cohen_kappa(unit, coded.label_annotator, codes, names, positions)
    return Agreement.model_construct(
        unit="candidate answer" if coded.kind == "multi_answer" else "item",
        krippendorff_alpha=Coefficient.alpha(level, alpha, _pairable(unit, coded.n_units)),
        krippendorff_alpha_collapsed=collapsed,
        fleiss_kappa=fleiss,
        gwet_ac1=ac1,
        pairwise_cohen_kappa=[PairKappa.model_construct(**p) for p in pairs],
        pairwise_weights="quadratic" if regression else None,
        pairwise_summary=PairSummary.model_construct(**agr.summarise_pairs(pairs)),
        item_agreement_histogram=agr.item_agreement_histogram(votes.top, votes.n_labels),
        unanimous_vs_split=_unanimous_vs_split(coded, votes, scorer) if has_gold else None,
    )


def _study_ac1(
    coded: CodedStudy,
    unit: np.ndarray,
    codes: np.ndarray,
    replicates: int,
    seed: int,
    cluster: np.ndarray | None,
    resampling: Resampling | None,
) -> Coefficient | None:
    """Gwet's AC1 over the task's classes (Q counts classes nobody chose); not for ratings or
    ReCoRD, whose answers are not a fixed set of classes."""
    if coded.kind not in {"classification", "multi_answer"}:
        return None
    n_classes = len(coded.classes)
    table = agr.counts_table(unit, codes, coded.n_units, max(n_classes, 1))
    e, n_pairable = gwet_ac1(
        table,
        n_classes,
        replicates=replicates,
        rng=rng_for(seed, "gwet-ac1"),
        cluster=cluster,
        resampling=resampling,
    )
    return ac1_coefficient(e, n_pairable)


def _unanimous_vs_split(
    coded: CodedStudy, votes: UnitVotes, scorer: Scorer
) -> dict[str, PartScore]:
    """Scores on units where every annotator gave the same answer vs the rest (units with at
    least two labels; MultiRC: questions whose answers were all unanimous)."""
    n_labels = votes.n_labels
    unanimous = (votes.top == n_labels) & (n_labels >= 2)
    multi = n_labels >= 2
    if coded.kind == "multi_answer":
        split_items = (
            np.bincount(coded.unit_item, weights=multi & ~unanimous, minlength=coded.n_items) > 0
        )
        multi_items = np.bincount(coded.unit_item, weights=multi, minlength=coded.n_items) > 0
        unanimous = (multi_items & ~split_items)[coded.unit_item]
        multi = multi_items[coded.unit_item]
    out = {}
    for name, mask in (("unanimous", unanimous), ("split", multi & ~unanimous)):
        part = scorer.subset(mask)
        point = part.point()
        out[name] = PartScore.model_construct(
            n=part.n_units, scores=point, task_score=task_score(point)
        )
    return out


def study_agreement_report(
    engine: Engine,
    study: str,
    level: str = "nominal",
    *,
    bootstrap: int = 1000,
    seed: int | None = None,
    raw: bool = False,
) -> FileAgreement:
    """`agreement_report` of a study's test labels (`raw`: the answers as imported), drawn as
    the study's report draws its α: over the report's units in the report's order (MultiRC:
    whole questions; the items it scores, so none excluded or outside the sample), with the
    study's seed unless `seed` is given."""
    labels = study_long_labels(engine, study, raw=raw)
    data = load_study_data(engine, study)
    coded = code_study(data)
    # The report's units only: an item the researcher excluded, or one outside the sample,
    # is in neither its α nor, here, anything else.
    keep = np.isin(np.asarray(labels.item, dtype=str), np.asarray(coded.unit_name, dtype=str))
    if not keep.any():
        raise UserError(
            f"study {study!r} has no test labels its report scores (their items are excluded "
            "or outside its sample)"
        )
    if not keep.all():
        labels = replace(
            labels,
            item=labels.item[keep],
            annotator=labels.annotator[keep],
            label=labels.label[keep],
            line=labels.line[keep],
        )
    # Fleiss' κ as the report computes it: on the items with the study's k labels (a study
    # under way: its complete items), and none once stop_when_decided stopped an item early.
    k = data.protocol.annotators_per_item
    rule = Rule.of(data.protocol.model_dump())
    skipped = None
    if not raw and rule.stop_when_decided:
        final = final_aggregate(data)[1]
        if decided_early(coded, items_wanting(coded, final, rule), rule):
            skipped = KAPPA_NOTE
    return agreement_report(
        labels,
        level,
        bootstrap=bootstrap,
        seed=data.protocol.seed if seed is None else seed,
        units=coded.unit_name,
        cluster=coded.unit_item if coded.kind == "multi_answer" else None,
        fleiss_raters=None if raw else k,
        fleiss_skipped=skipped,
    )


def _unit_index(
    items: np.ndarray, units: Sequence[str] | None, cluster: Sequence[int] | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The units in the order they are drawn, each label's unit and each unit's cluster: the
    item names sorted; or, for a study, its report's units in their order (those without
    labels too, since the report draws over all of them), then any other item sorted, each a
    cluster of its own."""
    if units is None:
        names, unit = np.unique(items, return_inverse=True)
        return names, unit, None
    index = {str(u): i for i, u in enumerate(units)}
    others = sorted({str(i) for i in items} - index.keys())
    index.update((name, len(units) + i) for i, name in enumerate(others))
    names = np.asarray([*map(str, units), *others], dtype=object)
    unit = np.asarray([index[str(i)] for i in items], dtype=np.int64)
    if cluster is None:
        return names, unit, None
    first = int(max(cluster, default=-1)) + 1
    extra = np.arange(first, first + len(others), dtype=np.int64)
    return names, unit, np.concatenate([np.asarray(cluster, dtype=np.int64), extra])


def agreement_report(
    labels: LongLabels,
    level: str = "nominal",
    *,
    bootstrap: int = 1000,
    seed: int | None = None,
    units: Sequence[str] | None = None,
    cluster: Sequence[int] | None = None,
    fleiss_raters: int | None = None,
    fleiss_skipped: str | None = None,
) -> FileAgreement:
    """Agreement statistics of a long-format label file (no study needed), by the study
    report's rules: Fleiss' κ only at nominal level and only when every item has the same
    number of raters (it is undefined otherwise; Krippendorff's α, which allows any number,
    is the coefficient for ragged files); no nominal statistics (κ, AC1, the modal-share
    histogram) at ordinal, interval or ratio level. `computed_on` says, for each coefficient,
    which items and raters it used. The bootstrap resamples the items (seed 0 unless given);
    a study's labels (`study_agreement_report`) pass its `units`, in the order its report
    draws them, and their `cluster`s (MultiRC's questions), and their k as `fleiss_raters`:
    Fleiss' κ then rests on the items with k labels, as in the study's report, or is not
    computed for the reason `fleiss_skipped` gives."""
    if level not in agr.LEVELS:
        # Checked first: an unknown level read the labels as numbers and blamed the first one.
        raise UserError(f"unknown level {level!r}: one of {', '.join(agr.LEVELS)}")
    seed = 0 if seed is None else seed
    item_names, unit, clusters = _unit_index(labels.item, units, cluster)
    ann_names, annotator = np.unique(labels.annotator, return_inverse=True)
    numbers = numeric_labels(labels) if level != "nominal" else None
    if numbers is not None:
        values, codes = np.unique(numbers, return_inverse=True)
        value_names = [f"{v:g}" for v in values]
    else:
        value_names_arr, codes = np.unique(labels.label.astype(str), return_inverse=True)
        value_names = [str(v) for v in value_names_arr]
    n_units = len(item_names)
    per_item = np.bincount(unit, minlength=n_units)
    labelled = per_item[per_item > 0]  # a study's units without labels are drawn, not counted
    table = agr.counts_table(unit, codes, n_units, len(value_names))
    resampling = agreement_resampling([table], bootstrap, seed, clusters)
    alpha = agr.krippendorff_alpha(
        unit,
        codes,
        n_units,
        level,
        numbers,
        replicates=bootstrap,
        rng=rng_for(seed, ALPHA_DRAWS),
        cluster=clusters,
        resampling=resampling,
    )
    if numbers is not None:
        fleiss = _not_computed(
            f"not computed at {level} level: Fleiss' κ treats the values as unordered "
            "categories; Krippendorff's α uses their "
            + ("order" if level == "ordinal" else "distances")
        )
    elif fleiss_skipped is not None:
        fleiss = _not_computed(fleiss_skipped)
    elif fleiss_raters is None and labelled.min() != labelled.max():
        fleiss = _not_computed(
            f"not computed: items have {labelled.min()} to {labelled.max()} labels, and "
            "Fleiss' κ needs the same number of raters on every item (Krippendorff's α, "
            "which allows any number, is the coefficient for this file)"
        )
    else:
        fk, used, raters = agr.fleiss_kappa(
            table,
            int(per_item.max()) if fleiss_raters is None else fleiss_raters,
            replicates=bootstrap,
            rng=rng_for(seed, "fleiss"),
            cluster=clusters,
            resampling=resampling,
        )
        fleiss = Coefficient.fleiss(fk, used, raters)
    pairs = agr.pairwise_cohen_kappa(unit, annotator, codes, [str(a) for a in ann_names], numbers)
    votes = unit_votes(unit, codes, n_units)
    ac1 = None
    if numbers is None:
        e, n_pairable = gwet_ac1(
            table,
            len(value_names),
            replicates=bootstrap,
            rng=rng_for(seed, "gwet-ac1"),
            cluster=clusters,
            resampling=resampling,
        )
        ac1 = ac1_coefficient(e, n_pairable)
    pairable = per_item >= 2
    summary = PairSummary.model_construct(**agr.summarise_pairs(pairs))
    raters_of = _raters_text(per_item[pairable])
    on = {
        "krippendorff_alpha": f"{int(pairable.sum())} of {len(labelled)} items (those with 2+ "
        f"labels), {int(per_item[pairable].sum())} labels by {count_of(len(ann_names), 'rater')}, "
        f"{raters_of}",
        "fleiss_kappa": (
            f"{fleiss.n_items} items x {fleiss.raters_per_item} raters ("
            + ("every item" if fleiss.n_items == len(labelled) else "the items with that many")
            + ")"
            if fleiss.kind == "fleiss"
            else "not computed"
        ),
        "pairwise_cohen_kappa": f"{count_of(summary.n_pairs, 'pair')} of raters, each on the "
        "items both labelled" + (" (quadratic weights)" if numbers is not None else ""),
    }
    if ac1 is not None:
        on["gwet_ac1"] = f"{count_of(ac1.n_items, 'item')} with 2+ labels, {raters_of}"
    return FileAgreement.model_construct(
        file=labels.path,
        level=level,
        n_items=len(labelled),
        n_annotators=len(ann_names),
        n_labels=len(labels.label),
        n_missing=labels.n_missing,
        values=value_names,
        krippendorff_alpha=Coefficient.alpha(level, alpha, int(pairable.sum())),
        fleiss_kappa=fleiss,
        pairwise_cohen_kappa=[PairKappa.model_construct(**p) for p in pairs],
        pairwise_weights=None if numbers is None else "quadratic",
        pairwise_summary=summary,
        item_agreement_histogram=(
            agr.item_agreement_histogram(votes.top, votes.n_labels) if numbers is None else None
        ),
        bootstrap={"replicates": bootstrap, "seed": seed},
        gwet_ac1=ac1,
        computed_on=on,
        annotator_names=f"pseudonyms: {PSEUDONYMS}" if labels.pseudonymous else None,
    )


def _raters_text(counts: np.ndarray) -> str:
    if not len(counts):
        return "no item with 2+ raters"
    low, high = int(counts.min()), int(counts.max())
    return f"{low} raters per item" if low == high else f"{low} to {high} raters per item"


def ac1_coefficient(e: Any, n_pairable: int) -> Coefficient:
    """Gwet's AC1 as the report shows it, from its estimate over the pairable items."""
    return Coefficient.model_construct(
        level=None,
        value=e.value,
        ci_low=e.ci_low,
        ci_high=e.ci_high,
        note=e.note,
        n_items=n_pairable,
        raters_per_item=None,
        kind="ac1",
    )
