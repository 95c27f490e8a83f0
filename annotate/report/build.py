"""Build the human-ceiling report of a study as typed data (`schema.StudyReport`); `render`
turns it into a rich table or Markdown, `to_json()` into JSON.

    report = study_report(engine, "rte-2024", bootstrap=1000, seed=1)
    report.summary          # one line a paper can quote
    report.to_json()        # complete, stable keys

`build_report(data, ...)` does the same from already loaded `StudyData` (no store needed).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import Engine

from annotate.completion import Rule
from annotate.metric_registry import find_metric
from annotate.progress_hook import ProgressHook, Steps
from annotate.protocol import standing
from annotate.report.aggregation.latent import model_aggregation
from annotate.report.aggregation.majority import NO_LABELS, answer_of, votes_dict
from annotate.report.aggregation.study import Aggregated, final_aggregate, priority_for
from annotate.report.aggregation.wanting import items_wanting
from annotate.report.cells import pct
from annotate.report.data.coding import CodedStudy
from annotate.report.data.loading import StudyData, load_study_data
from annotate.report.model.schema import (
    Benchmark,
    Bootstrap,
    Confusion,
    Diagnostics,
    Estimate,
    Gate,
    GateDecisionRow,
    HeadlineInterval,
    RosterEntry,
    Sample,
    StudyReport,
    TiedUnit,
    Ties,
)
from annotate.report.sections.base import SectionInput
from annotate.report.sections.catch import catch_report
from annotate.report.sections.datasheet import build_datasheet
from annotate.report.sections.early_stop import adjust_agreement, early_stop_section
from annotate.report.sections.flags import build_flags_report
from annotate.report.sections.models import score_models
from annotate.report.sections.registry import SECTIONS
from annotate.report.sections.suspects import GOLD_SUSPECTS_LISTED, gold_suspects
from annotate.report.stats.agreement_summary import study_agreement
from annotate.report.stats.annotators import annotator_rows, individual_summary, majority_of_k
from annotate.report.stats.humans_interval import METHOD as HUMANS_METHOD
from annotate.report.stats.humans_interval import humans_interval
from annotate.scoring.benchmark import benchmark_summary
from annotate.scoring.caveats import score_caveats
from annotate.scoring.diagnostics import diagnostics as diagnostics_table
from annotate.scoring.intervals import (  # noqa: F401 (the methods: quoted by tests)
    BOOTSTRAP_METHOD,
    WILSON_METHOD,
    accuracy_wilson,
    quoted_interval,
    rng_for,
    shared_draws,
)
from annotate.scoring.metrics import Scorer, task_score
from annotate.scoring.model_sources import read_models
from annotate.scoring.predictions import ModelPredictions
from annotate.scoring.scorers import (
    HEADLINE_DRAWS,
    count_answers_scored,
    count_scored,
    gold_available,
    score_with_intervals,
    scorer_for,
)
from annotate.wording import count_of, fixed, plural

DEFAULT_BOOTSTRAP = 1000
NA = "n/a"
"""A score the summary line cannot give."""

REPORT_STEPS = 6
"""The steps `build_report` tells its progress hook: loading, scores, agreement, models,
the humans interval, the aggregation models."""


def study_report(
    engine: Engine,
    study_name: str,
    *,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int | None = None,
    model_files: Sequence[str | Path] = (),
    hourly_rate: float | None = None,
    progress: ProgressHook | None = None,
) -> StudyReport:
    """Load study `study_name` from the store and build its report, with the benchmark score
    over the store's studies, any model prediction files scored on the same items and the
    datasheet of the run (its cost estimated at `hourly_rate`, when given)."""
    if progress is not None:
        progress("report: loading the labels", 0, REPORT_STEPS)
    data = load_study_data(engine, study_name)
    models = [
        m
        for p in model_files
        for m in read_models(
            Path(p), data.spec, study_split=data.test_split, study_source=data.test_source
        )
    ]
    report = build_report(
        data, bootstrap=bootstrap, seed=seed, models=models, engine=engine, progress=progress
    )
    # Where the study stands in its benchmark, without loading any other study.
    summary = benchmark_summary(engine, data.name, data.spec, report.task_score.value)
    report.benchmark = Benchmark.of(summary)
    report.datasheet = build_datasheet(
        engine, report, hourly_rate=hourly_rate, test_labels=data.labels, members=data.members
    )
    report.flags = build_flags_report(engine, data, report, point_task_score)
    if report.flags.note:
        report.notes.append(report.flags.note)
    report.catch = catch_report(engine, study_name)
    return report


def point_task_score(data: StudyData) -> float | None:
    """A study's task score without intervals or anything else (for the benchmark score)."""
    coded, final = final_aggregate(data)
    return task_score(scorer_for(coded, final.pred).point())


def build_report(
    data: StudyData,
    *,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int | None = None,
    models: Sequence[ModelPredictions] = (),
    aggregation_models: bool = True,
    engine: Engine | None = None,
    progress: ProgressHook | None = None,
) -> StudyReport:
    """The report of a loaded study. `bootstrap` replicates (0: no intervals) are drawn with
    `seed` (default: the study's seed); ties are broken with the study's seed.
    `aggregation_models=False` leaves out Dawid–Skene and MACE (the report's slowest part,
    about a second per 100 items), for callers that need only the scores. The registry's
    computed sections get `engine` (None: the report is built from the loaded data alone).
    `progress` is told each step as it starts (the bootstraps and the aggregation models are
    the long ones)."""
    with shared_draws():  # the paired bootstraps below draw the same weights: once
        return _build_report(data, bootstrap, seed, models, aggregation_models, engine, progress)


def _build_report(
    data: StudyData,
    bootstrap: int,
    seed: int | None,
    models: Sequence[ModelPredictions],
    aggregation_models: bool,
    engine: Engine | None,
    progress: ProgressHook | None,
) -> StudyReport:
    steps = Steps(progress, "report", REPORT_STEPS)
    steps.next("loading the labels")
    spec, protocol = data.spec, data.protocol
    seed = protocol.seed if seed is None else seed
    bootstrap = max(0, int(bootstrap))
    coded, final = final_aggregate(data)
    notes = list(coded.notes)
    k = protocol.annotators_per_item
    priority = priority_for(coded, data.dev_class_counts)
    has_gold = gold_available(coded)
    metrics = list(spec.metrics)

    scorer = scorer_for(coded, final.pred)
    n_scored = count_scored(coded, final.pred)
    steps.next(f"scores ({bootstrap} bootstrap replicates)")
    shared: list[np.ndarray] = []  # the headline's task-score replicates, reused below
    collapsed: list[str] = []
    if has_gold:
        raw_scores, raw_total = score_with_intervals(
            scorer, metrics, bootstrap, seed, HEADLINE_DRAWS, shared, collapsed
        )
        scores = {m: Estimate.of(e) for m, e in raw_scores.items()}
        total = Estimate.of(raw_total)
        accuracy = scores.get("accuracy")
        if accuracy is not None:  # Wilson's bounds where the one rule gives them
            accuracy.wilson_low, accuracy.wilson_high = accuracy_wilson(
                coded.kind, coded.item_pair is not None, accuracy.value, n_scored
            )
        if collapsed:
            notes.append(_collapsed_note(collapsed, coded, scorer.n_units))
        notes.extend(score_caveats(coded, final.pred, "the human answers"))
    else:
        scores = {m: Estimate.model_construct(value=None) for m in metrics}
        total = Estimate.model_construct(value=None)
        notes.append(
            "The test items have no gold labels: scores are omitted; agreement is computed."
        )

    annotators = annotator_rows(coded, final.pred, has_gold)
    for row in annotators:
        row.synthetic = row.name in data.synthetic
        if has_gold and "accuracy" in metrics:  # each one's accuracy over their own answers
            row.wilson_low, row.wilson_high = accuracy_wilson(
                coded.kind, coded.item_pair is not None, row.scores.get("accuracy"), row.n
            )
    if data.excluded:
        notes.append(
            f"{count_of(len(data.excluded), 'test item')} excluded from scoring and agreement "
            "by the researcher (see the excluded items: the score with them is given there)."
        )
    individual = individual_summary(annotators, metrics)
    curve = (
        majority_of_k(
            coded,
            protocol.tie_rule,
            protocol.regression_aggregation,
            priority,
            rng_for(seed, "k-curve"),
            study_k=k,
            study_pred=final.pred,
        )
        if has_gold
        else []
    )
    rule = Rule.of(protocol.model_dump())
    wanted = items_wanting(coded, final, rule)
    early_stop = early_stop_section(coded, wanted, rule)
    steps.next("agreement (bootstrap)")
    agreement = adjust_agreement(
        study_agreement(coded, final, scorer, k, bootstrap, seed, has_gold), early_stop
    )
    ties = _ties(
        coded, final, protocol.tie_rule, k, data.dev_class_counts, protocol.regression_aggregation
    )
    steps.next("models and diagnostics")
    model_rows, model_preds = score_models(coded, models, final, bootstrap, seed, has_gold, notes)
    diag = None
    if coded.kind == "classification" and has_gold:
        table = diagnostics_table(
            list(coded.items["tags"]),
            coded.gold_code,
            final.pred,
            model_preds,
            len(coded.classes),
            replicates=bootstrap,
            seed=seed,
            category_order=list(spec.source.tag_columns),
        )
        diag = None if table is None else Diagnostics.of(table)
    sample = _sample(coded, k, n_scored, wanted)
    if sample.n_items_labelled < sample.n_sample:
        notes.append(
            f"{sample.n_sample - sample.n_items_labelled} of {sample.n_sample} sampled "
            "test items have no labels yet and are left out."
        )
    per_item = np.bincount(coded.row_item, minlength=coded.n_items)
    short = int(((per_item > 0) & (per_item < k) & (wanted > 0)).sum())
    if short:
        notes.append(
            f"{count_of(short, 'item')} {plural(short, 'has')} fewer than "
            f"k = {k} labels (the study is not finished)."
        )
    if sample.n_items_complete < sample.n_items_labelled - short:
        tied = sample.n_items_labelled - short - sample.n_items_complete
        notes.append(
            f"{count_of(tied, 'tied item')} {plural(tied, 'waits')} for "
            "an extra annotator (tie_rule extra-annotator; the study is not finished)."
        )
    suspects = gold_suspects(coded, final) if has_gold else []
    alike = bool(metrics) and set(metrics) <= set(collapsed)  # the mean's resamples too
    headline = _headline_interval(coded, scorer, final.pred, metrics, total, n_scored, alike)
    steps.next("humans interval (annotators drawn afresh)")
    humans = _humans_interval(
        coded,
        data,
        priority,
        bootstrap,
        seed,
        has_gold,
        final.pred,
        shared[0] if shared else None,
        headline,
    )
    steps.next("Dawid–Skene and MACE")
    latent = (
        model_aggregation(coded, final, metrics, bootstrap, seed, has_gold)
        if aggregation_models
        else None
    )
    if len(suspects) > GOLD_SUSPECTS_LISTED:
        notes.append(
            f"{len(suspects):,} gold suspects: the strongest {GOLD_SUSPECTS_LISTED:,} are listed."
        )
    report = StudyReport.model_construct(
        study=data.name,
        task=spec.name,
        task_title=spec.title,
        kind=spec.kind,
        summary="",
        state=data.state,
        protocol=dict(data.settings),
        n_items=sample.n_items_labelled,
        n_annotators=len(coded.annotators),
        n_labels=sample.n_labels,
        sample=sample,
        has_gold=has_gold,
        metrics=metrics,
        scores=scores,
        task_score=total,
        confusion_matrix=_confusion(coded, final.pred) if has_gold else None,
        annotators=annotators,
        individual=individual,
        majority_of_k=curve,
        agreement=agreement,
        ties=ties,
        diagnostics=diag,
        models=model_rows,
        gold_suspects=suspects[:GOLD_SUSPECTS_LISTED],
        gate=_gate(data.gate_decisions, data.roster, data.gate_closure),
        bootstrap=Bootstrap.model_construct(
            replicates=bootstrap,
            seed=seed,
            method="percentile interval, 95%; test items resampled with replacement"
            + ("; AX-g minimal pairs resampled together" if "gender_parity" in metrics else ""),
        ),
        notes=notes,
        headline_interval=headline,
        humans_interval=humans,
        early_stop=early_stop,
        model_aggregation=latent,
    )
    report.n_gold_suspects = len(suspects)
    report.summary = summary_line(report)
    for section in SECTIONS:
        if section.compute is not None:
            inputs = SectionInput(data, coded, final, report, engine)
            report.extra_sections[section.name] = section.compute(inputs)
    steps.done()
    return report


def _humans_interval(
    coded: CodedStudy,
    data: StudyData,
    priority: np.ndarray | None,
    bootstrap: int,
    seed: int,
    has_gold: bool,
    pred: np.ndarray,
    item_replicates: np.ndarray | None,
    headline: HeadlineInterval | None,
) -> HeadlineInterval | None:
    if not has_gold or bootstrap <= 0:
        return None
    protocol = data.protocol
    fixed = None if headline is None else (headline.low, headline.high)
    low, high = humans_interval(
        coded,
        protocol.tie_rule,
        protocol.regression_aggregation,
        priority,
        min(bootstrap, 1000),
        rng_for(seed, "humans"),
        pred,
        item_replicates,
        fixed,
    )
    return (
        None
        if low is None
        else HeadlineInterval.model_construct(low=low, high=high, method=HUMANS_METHOD)
    )


def _collapsed_note(metrics: list[str], coded: CodedStudy, n_units: int) -> str:
    names = ", ".join(_metric_name(m) for m in metrics)
    unit = {"multi_answer": "question", "entity_choice": "query"}.get(coded.kind, "item")
    if coded.item_pair is not None:
        unit = "minimal pair"
    return (
        f"Every bootstrap resample gave the same {names}: its interval is the score-type "
        f"(Wilson) interval over the {count_of(n_units, unit)} resampled, not a zero width."
    )


def _headline_interval(
    coded: CodedStudy,
    scorer: Scorer,
    pred: np.ndarray,
    metrics: list[str],
    total: Estimate,
    n_scored: int,
    alike: bool,
) -> HeadlineInterval | None:
    """The quotable line's interval: the one rule, scoring.intervals.quoted_interval. `alike`:
    every bootstrap resample gave the same score (the rule's score-type branch; the
    estimate's bounds are already that interval, which the rule would take for the
    bootstrap's)."""
    low, high = (total.value, total.value) if alike else (total.ci_low, total.ci_high)
    quoted = quoted_interval(
        metrics,
        coded.kind,
        coded.item_pair is not None,
        total.value,
        n_scored,
        low,
        high,
        n_units=scorer.n_units,
        n_obs=count_answers_scored(coded, pred),
    )
    return (
        None
        if quoted is None
        else HeadlineInterval.model_construct(
            low=quoted.low, high=quoted.high, method=quoted.method
        )
    )


def _sample(coded: CodedStudy, k: int, n_scored: int, wanted: np.ndarray) -> Sample:
    per_item = np.bincount(coded.row_item, minlength=coded.n_items)
    sizes, counts = np.unique(per_item[per_item > 0], return_counts=True)
    return Sample.model_construct(
        n_sample=coded.n_items,
        n_items_labelled=int((per_item > 0).sum()),
        n_items_complete=int(standing.item_complete(per_item, wanted).sum()),
        n_items_scored=n_scored,
        n_labels=len(coded.row_item),
        labels_per_item={
            str(int(s)): int(c) for s, c in zip(sizes[::-1], counts[::-1], strict=True)
        },
        annotators_per_item=k,
        unit="candidate answer" if coded.kind == "multi_answer" else "item",
    )


def committee(report: StudyReport) -> str:
    """The aggregate the scores come from, as the headline and the LaTeX table name it:
    "majority of 5", "mean of 3", "majority of 5 per answer". While items lack their k labels,
    the committee the data has ("majority of 3", "majority of 3–5"), never a k it does not
    have."""
    how = report.protocol.get("regression_aggregation", "mean")
    k = committee_size(report.sample)
    return {
        "regression": f"{how} of {k}",
        "multi_answer": f"majority of {k} per answer",
    }.get(report.kind, f"majority of {k}")


def committee_size(sample: Sample) -> str:
    """The k of `committee`: the protocol's once every item is complete (or before any label:
    the k it will have), else the labels the data has per item ("3", "3–5")."""
    short = unfinished_prefix(sample) is not None and sample.n_items_labelled
    return labels_on_items(sample) if short else str(sample.annotators_per_item)


def data_committee_size(coded: CodedStudy, final: Aggregated, protocol: Any) -> str:
    """`committee_size` of a study's data outside a report (an export's description of the
    aggregation), by the same completeness rule."""
    wanted = items_wanting(coded, final, Rule.of(protocol.model_dump()))
    return committee_size(_sample(coded, protocol.annotators_per_item, 0, wanted))


def summary_line(report: StudyReport) -> str:
    """E.g. `Human, majority of 5 (n=100): 93.0 [88.0, 97.0]; mean single annotator 87.4;
    Krippendorff's α 0.71`."""
    unfinished = unfinished_prefix(report.sample)
    kind_name = committee(report)
    n = report.sample.n_items_scored if report.has_gold else report.n_items
    parts = []
    total = report.task_score
    if report.has_gold and total.value is not None:
        text = f"Human, {kind_name} (n={n}): {fixed(total.value * 100, 1)}"
        interval = report.headline_interval
        if interval is not None and interval.low is not None and interval.high is not None:
            text += f" [{fixed(interval.low * 100, 1)}, {fixed(interval.high * 100, 1)}]"
        if len(report.metrics) > 1:
            text += (
                " ("
                + ", ".join(
                    f"{_metric_name(m)} {pct(report.scores[m].value, 'n/a')}"
                    for m in report.metrics
                )
                + ")"
            )
        parts.append(text)
        single = report.individual.task_score.mean
        if single is not None:
            parts.append(f"mean single annotator {fixed(single * 100, 1)}")
    elif report.n_items == 0:
        parts.append(f"Human, {kind_name}: no labels yet")
    elif report.has_gold:
        values = ", ".join(
            f"{_metric_name(m)} {pct(report.scores[m].value, 'n/a')}" for m in report.metrics
        )
        parts.append(f"Human, {kind_name} (n={n}): score undefined ({values})")
    else:
        parts.append(f"Human, {kind_name} (n={n}): no gold labels, scores omitted")
    alpha = report.agreement.krippendorff_alpha
    if alpha.value is not None:
        level = "" if alpha.level == "nominal" else f" ({alpha.level})"
        parts.append(f"Krippendorff's α{level} {fixed(alpha.value, 2)}")
    if unfinished is not None and report.n_items:
        parts.insert(0, unfinished)
    return "; ".join(parts)


def labels_on_items(sample: Sample) -> str:
    """The labels per labelled item: "3", or "3–5" when items differ."""
    counts = [int(n) for n, items in sample.labels_per_item.items() if items]
    if not counts:
        return "0"
    low, high = min(counts), max(counts)
    return str(low) if low == high else f"{low}–{high}"


def unfinished_prefix(sample: Sample) -> str | None:
    """E.g. "UNFINISHED: 3 of 5 labels on 20 of 20 items" while any sampled item lacks its k
    labels; None when every item is complete."""
    if sample.n_items_complete >= sample.n_sample:
        return None
    k = sample.annotators_per_item
    return (
        f"UNFINISHED: {labels_on_items(sample)} of {k} labels on {sample.n_items_labelled} "
        f"of {sample.n_sample} items"
    )


def _metric_name(name: str) -> str:
    found = find_metric(name)
    return name if found is None else found.inline_name


# --- ties, confusion, gate ------------------------------------------------------------------


def _ties(
    coded: CodedStudy,
    final: Aggregated,
    rule: str,
    k: int,
    dev_counts: dict[str, int] | None,
    how: str,
) -> Ties:
    if coded.kind == "regression" or final.result is None or final.votes is None:
        return Ties.model_construct(
            rule=rule,
            applies=False,
            note=f"ratings are aggregated with the {how}; there are no ties",
        )
    result, votes = final.result, final.votes
    resolution = result.resolution
    tied = np.flatnonzero(result.tied)
    note = None
    if rule == "dev-majority-class":
        if not dev_counts:
            note = "no dev gold counts: ties go to the first class in the task's label order"
        if coded.kind == "entity_choice":
            note = "ReCoRD has no fixed classes: ties go to the first entity chosen"
    if rule == "extra-annotator":
        note = (
            "a tied item stays open for one more annotator; until then it has no answer and "
            "scores as wrong"
        )
    cands, counts = votes.candidates[tied].tolist(), votes.counts[tied].tolist()
    return Ties.model_construct(
        rule=rule,
        applies=True,
        unit="candidate answer" if coded.kind == "multi_answer" else "item",
        n_tied=len(tied),
        resolved_at_random=int((resolution == "random").sum()),
        resolved_by_dev_majority_class=int((resolution == "dev-majority-class").sum()),
        abstained_counted_wrong=int((resolution == "abstain").sum()),
        open_counted_wrong=int((resolution == "open").sum()),
        units_with_more_than_k_labels=int((votes.n_labels > k).sum()),
        dev_class_counts=dev_counts,
        note=note,
        items=[
            TiedUnit.model_construct(
                item=str(coded.unit_name[u]),
                votes=votes_dict(c, n, coded.classes),
                resolution=str(resolution[u]),
                result=answer_of(coded.classes, int(result.pred[u])),
            )
            for u, c, n in zip(tied.tolist(), cands, counts, strict=True)
        ],
    )


def _confusion(coded: CodedStudy, pred: np.ndarray) -> Confusion | None:
    if coded.kind not in {"classification", "multi_answer"}:
        return None
    c = len(coded.classes)
    scored = (coded.gold_code >= 0) & (pred != NO_LABELS)
    cols = np.where(pred[scored] >= 0, pred[scored], c)
    matrix = np.bincount(coded.gold_code[scored] * (c + 1) + cols, minlength=c * (c + 1)).reshape(
        c, c + 1
    )
    columns = [*coded.classes, "(no answer)"]
    if matrix[:, c].sum() == 0:
        matrix, columns = matrix[:, :c], coded.classes
    return Confusion.model_construct(
        gold=list(coded.classes),
        predicted=list(columns),
        matrix=matrix.tolist(),
        unit="candidate answer" if coded.kind == "multi_answer" else "item",
    )


def _gate(
    decisions: list[dict[str, Any]],
    roster: list[dict[str, str]],
    closure: dict[str, Any] | None,
) -> Gate:
    latest: dict[str, dict[str, Any]] = {}
    for d in decisions:
        latest[d["annotator"]] = d
    return Gate.model_construct(
        decisions=[GateDecisionRow.model_construct(**d) for d in decisions],
        admitted=sorted(n for n, d in latest.items() if d["admitted"]),
        refused=sorted(n for n, d in latest.items() if not d["admitted"]),
        rules=sorted({d["rule"] for d in decisions}),
        roster=[RosterEntry.model_construct(**m) for m in roster],
        closure=closure,
    )
