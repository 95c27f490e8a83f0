"""Build the human-ceiling report of a study as data (a JSON-ready dataclass); `render` turns it
into a rich table, Markdown or JSON.

    report = study_report(engine, "rte-2024", bootstrap=1000, seed=1)
    report.summary          # one line a paper can quote
    report.to_json()        # complete, stable keys

`build_report(data, ...)` does the same from already loaded `StudyData` (no store needed), and
`agreement_report(labels, ...)` the agreement part for any long-format label file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import Engine

from annotate.report import agreement as agr
from annotate.report.aggregate import NO_LABELS, UnitVotes, answer_of, unit_votes, votes_dict
from annotate.report.annotators import annotator_rows, individual_summary, majority_of_k
from annotate.report.coding import CodedStudy, code_study
from annotate.report.data import StudyData, load_study_data
from annotate.report.longformat import LongLabels, numeric_labels
from annotate.report.model_rows import score_models
from annotate.report.study_aggregate import Aggregated, aggregate, priority_for
from annotate.report.suspects import gold_suspects
from annotate.scoring.benchmark import benchmark_summary
from annotate.scoring.diagnostics import diagnostics as diagnostics_table
from annotate.scoring.intervals import rng_for, wilson_interval
from annotate.scoring.metrics import Scorer, task_score
from annotate.scoring.predictions import ModelPredictions, read_predictions
from annotate.scoring.scorers import (
    count_scored,
    gold_available,
    score_with_intervals,
    scorer_for,
)

DEFAULT_BOOTSTRAP = 1000


@dataclass
class StudyReport:
    """Everything `annotate report` shows. Metric values are fractions (0..1)."""

    study: str
    task: str
    task_title: str
    kind: str
    """The task kind: classification, regression, multi_answer or entity_choice."""
    summary: str
    """One line a paper can quote (values x100)."""
    state: str
    protocol: dict[str, Any]
    """The effective protocol as stored with the study (incl. tie rule and seed)."""
    n_items: int
    """Test items with at least one label."""
    n_annotators: int
    n_labels: int
    sample: dict[str, Any]
    has_gold: bool
    metrics: list[str]
    scores: dict[str, dict[str, Any]]
    """metric id -> {value, ci_low, ci_high} (accuracy adds wilson_low, wilson_high)."""
    task_score: dict[str, Any]
    confusion_matrix: dict[str, Any] | None
    annotators: list[dict[str, Any]]
    individual: dict[str, Any]
    majority_of_k: list[dict[str, Any]]
    agreement: dict[str, Any]
    ties: dict[str, Any]
    diagnostics: dict[str, Any] | None
    models: list[dict[str, Any]]
    gold_suspects: list[dict[str, Any]]
    gate: dict[str, Any]
    bootstrap: dict[str, Any]
    benchmark: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types only: NaN becomes null, numpy numbers become Python numbers."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}


def _plain(value: Any) -> Any:
    if isinstance(value, str | int | bool) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# --- the study report ------------------------------------------------------------------------


def study_report(
    engine: Engine,
    study_name: str,
    *,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int | None = None,
    model_files: Sequence[str | Path] = (),
) -> StudyReport:
    """Load study `study_name` from the store and build its report, with the benchmark score
    over the store's studies and any model prediction files scored on the same items."""
    data = load_study_data(engine, study_name)
    models = [read_predictions(Path(p), data.spec) for p in model_files]
    report = build_report(data, bootstrap=bootstrap, seed=seed, models=models)

    def score_other(name: str) -> float | None:
        return point_task_score(load_study_data(engine, name))

    report.benchmark = benchmark_summary(
        engine, data.name, data.spec, report.task_score["value"], score_other
    )
    return report


def point_task_score(data: StudyData) -> float | None:
    """A study's task score without intervals or anything else (for the benchmark score)."""
    coded = code_study(data)
    protocol = data.protocol
    final = aggregate(
        coded,
        protocol.tie_rule,
        protocol.regression_aggregation,
        rng_for(protocol.seed, "ties"),
        priority_for(coded, data.dev_class_counts),
    )
    return task_score(scorer_for(coded, final.pred).point())


def build_report(
    data: StudyData,
    *,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int | None = None,
    models: Sequence[ModelPredictions] = (),
) -> StudyReport:
    """The report of a loaded study. `bootstrap` replicates (0: no intervals) are drawn with
    `seed` (default: the study's seed); ties are broken with the study's seed."""
    spec, protocol = data.spec, data.protocol
    seed = protocol.seed if seed is None else seed
    bootstrap = max(0, int(bootstrap))
    coded = code_study(data)
    notes = list(coded.notes)
    k = protocol.annotators_per_item
    priority = priority_for(coded, data.dev_class_counts)
    final = aggregate(
        coded,
        protocol.tie_rule,
        protocol.regression_aggregation,
        rng_for(protocol.seed, "ties"),
        priority,
    )
    has_gold = gold_available(coded)
    metrics = list(spec.metrics)

    scorer = scorer_for(coded, final.pred)
    n_scored = count_scored(coded, final.pred)
    if has_gold:
        scores, total = score_with_intervals(scorer, metrics, bootstrap, seed, "scores")
        if "accuracy" in scores and scores["accuracy"]["value"] is not None and n_scored:
            low, high = wilson_interval(scores["accuracy"]["value"] * n_scored, n_scored)
            scores["accuracy"].update(wilson_low=low, wilson_high=high)
    else:
        scores = {m: {"value": None, "ci_low": None, "ci_high": None} for m in metrics}
        total = {"value": None, "ci_low": None, "ci_high": None}
        notes.append(
            "The test items have no gold labels: scores are omitted; agreement is computed."
        )

    annotators = annotator_rows(coded, final.pred, has_gold)
    individual = individual_summary(annotators, metrics)
    curve = (
        majority_of_k(
            coded,
            protocol.tie_rule,
            protocol.regression_aggregation,
            priority,
            rng_for(seed, "k-curve"),
        )
        if has_gold
        else []
    )
    agreement = _study_agreement(coded, final, scorer, k, bootstrap, seed, has_gold)
    ties = _ties(
        coded, final, protocol.tie_rule, k, data.dev_class_counts, protocol.regression_aggregation
    )
    model_rows, model_preds = score_models(coded, models, final, bootstrap, seed, has_gold, notes)
    diag = None
    if coded.kind == "classification" and has_gold:
        tags = list(coded.items["tags"])
        diag = diagnostics_table(
            tags,
            coded.gold_code,
            final.pred,
            model_preds,
            len(coded.classes),
            replicates=bootstrap,
            seed=seed,
            category_order=list(spec.source.tag_columns),
        )
    sample = _sample(coded, k, n_scored)
    if sample["n_items_labelled"] < sample["n_sample"]:
        notes.append(
            f"{sample['n_sample'] - sample['n_items_labelled']} of {sample['n_sample']} sampled "
            "test items have no labels yet and are left out."
        )
    if sample["n_items_complete"] < sample["n_items_labelled"]:
        notes.append(
            f"{sample['n_items_labelled'] - sample['n_items_complete']} items have fewer than "
            f"k = {k} labels (the study is not finished)."
        )
    report = StudyReport(
        study=data.name,
        task=spec.name,
        task_title=spec.title,
        kind=spec.kind,
        summary="",
        state=data.state,
        protocol=dict(data.settings),
        n_items=sample["n_items_labelled"],
        n_annotators=len(coded.annotators),
        n_labels=sample["n_labels"],
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
        gold_suspects=gold_suspects(coded, final) if has_gold else [],
        gate=_gate(data.gate_decisions),
        bootstrap={
            "replicates": bootstrap,
            "seed": seed,
            "method": "percentile interval, 95%; test items resampled with replacement"
            + ("; AX-g minimal pairs resampled together" if "gender_parity" in metrics else ""),
        },
        notes=notes,
    )
    report.summary = summary_line(report)
    return report


def _sample(coded: CodedStudy, k: int, n_scored: int) -> dict[str, Any]:
    per_item = np.bincount(coded.row_item, minlength=coded.n_items)
    sizes, counts = np.unique(per_item[per_item > 0], return_counts=True)
    return {
        "n_sample": coded.n_items,
        "n_items_labelled": int((per_item > 0).sum()),
        "n_items_complete": int((per_item >= k).sum()),
        "n_items_scored": n_scored,
        "n_labels": len(coded.row_item),
        "labels_per_item": {
            str(int(s)): int(c) for s, c in zip(sizes[::-1], counts[::-1], strict=True)
        },
        "annotators_per_item": k,
        "unit": "candidate answer" if coded.kind == "multi_answer" else "item",
    }


def summary_line(report: StudyReport) -> str:
    """E.g. `Human, majority of 5 (n=100): 93.0 [88.0, 97.0]; mean single annotator 87.4;
    Krippendorff's α 0.71`."""
    k = report.sample["annotators_per_item"]
    how = report.protocol.get("regression_aggregation", "mean")
    kind_name = {
        "regression": f"{how} of {k}",
        "multi_answer": f"majority of {k} per answer",
    }.get(report.kind, f"majority of {k}")
    n = report.sample["n_items_scored"] if report.has_gold else report.n_items
    parts = []
    total = report.task_score
    if report.has_gold and total["value"] is not None:
        text = f"Human, {kind_name} (n={n}): {total['value'] * 100:.1f}"
        if total["ci_low"] is not None:
            text += f" [{total['ci_low'] * 100:.1f}, {total['ci_high'] * 100:.1f}]"
        if len(report.metrics) > 1:
            text += (
                " ("
                + ", ".join(
                    f"{_metric_name(m)} {_pct(report.scores[m]['value'])}" for m in report.metrics
                )
                + ")"
            )
        parts.append(text)
        single = report.individual["task_score"]["mean"]
        if single is not None:
            parts.append(f"mean single annotator {single * 100:.1f}")
    elif report.n_items == 0:
        parts.append(f"Human, {kind_name}: no labels yet")
    elif report.has_gold:
        values = ", ".join(
            f"{_metric_name(m)} {_pct(report.scores[m]['value'])}" for m in report.metrics
        )
        parts.append(f"Human, {kind_name} (n={n}): score undefined ({values})")
    else:
        parts.append(f"Human, {kind_name} (n={n}): no gold labels, scores omitted")
    alpha = report.agreement["krippendorff_alpha"]
    if alpha["value"] is not None:
        level = "" if alpha["level"] == "nominal" else f" ({alpha['level']})"
        parts.append(f"Krippendorff's α{level} {alpha['value']:.2f}")
    return "; ".join(parts)


def _metric_name(metric: str) -> str:
    return {
        "macro_f1": "macro-F1",
        "f1a": "F1a",
        "em": "EM",
        "record_f1": "F1",
        "record_em": "EM",
        "mcc": "MCC",
        "r3": "R3",
        "f1": "F1",
        "pearson": "Pearson",
        "spearman": "Spearman",
        "gender_parity": "gender parity",
    }.get(metric, metric)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}"


# --- agreement -------------------------------------------------------------------------------


def _rating_codes(numbers: np.ndarray) -> np.ndarray:
    return np.unique(numbers, return_inverse=True)[1].astype(np.int64)


def _study_agreement(
    coded: CodedStudy,
    final: Aggregated,
    scorer: Scorer,
    k: int,
    replicates: int,
    seed: int,
    has_gold: bool,
) -> dict[str, Any]:
    unit, names = coded.label_unit, coded.annotators
    regression = coded.kind == "regression"
    codes = _rating_codes(coded.label_number) if regression else coded.label_code
    n_values = int(codes.max()) + 1 if len(codes) else 0
    cluster = coded.unit_item if coded.kind == "multi_answer" else None
    is_cb = bool(coded.spec.answer_scale) and np.isfinite(coded.label_number).all()
    level = "interval" if regression else ("ordinal" if is_cb else "nominal")
    numbers = coded.label_number if level != "nominal" else None
    alpha = agr.krippendorff_alpha(
        unit,
        codes,
        coded.n_units,
        level,
        numbers,
        replicates=replicates,
        rng=rng_for(seed, "alpha"),
        cluster=cluster,
    )
    out: dict[str, Any] = {
        "unit": "candidate answer" if coded.kind == "multi_answer" else "item",
        "krippendorff_alpha": {
            "level": level,
            **alpha.as_dict(),
            "n_items": _pairable(unit, coded.n_units),
        },
    }
    if is_cb:
        collapsed = agr.krippendorff_alpha(
            unit,
            codes,
            coded.n_units,
            "nominal",
            replicates=replicates,
            rng=rng_for(seed, "alpha-collapsed"),
            cluster=cluster,
        )
        out["krippendorff_alpha_collapsed"] = {
            "level": "nominal",
            **collapsed.as_dict(),
            "note": "on the 3 classes after collapsing the 7-point answers",
        }
    votes = unit_votes(unit, codes, coded.n_units) if regression else final.votes
    assert votes is not None
    if regression:
        out["fleiss_kappa"] = {
            "value": None,
            "ci_low": None,
            "ci_high": None,
            "n_items": 0,
            "raters_per_item": None,
            "note": "not computed for ratings (a nominal statistic); see interval α",
        }
    elif coded.n_units * max(n_values, 1) > agr.DENSE_LIMIT:
        out["fleiss_kappa"] = {
            "value": None,
            "ci_low": None,
            "ci_high": None,
            "n_items": 0,
            "raters_per_item": None,
            "note": "too many distinct answers for a table",
        }
    else:
        table = agr.counts_table(unit, codes, coded.n_units, max(n_values, 1))
        fk, used, raters = agr.fleiss_kappa(
            table, k, replicates=replicates, rng=rng_for(seed, "fleiss"), cluster=cluster
        )
        out["fleiss_kappa"] = {**fk.as_dict(), "n_items": used, "raters_per_item": raters}
    positions = coded.label_number if regression else None
    pairs = agr.pairwise_cohen_kappa(unit, coded.label_annotator, codes, names, positions)
    out["pairwise_cohen_kappa"] = pairs
    out["pairwise_weights"] = "quadratic" if regression else None
    out["pairwise_summary"] = agr.summarise_pairs(pairs)
    out["item_agreement_histogram"] = agr.item_agreement_histogram(votes.top, votes.n_labels)
    out["unanimous_vs_split"] = _unanimous_vs_split(coded, votes, scorer) if has_gold else None
    return out


def _pairable(unit: np.ndarray, n_units: int) -> int:
    return int((np.bincount(unit, minlength=n_units) >= 2).sum())


def _unanimous_vs_split(coded: CodedStudy, votes: UnitVotes, scorer: Scorer) -> dict[str, Any]:
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
        out[name] = {"n": part.n_units, "scores": point, "task_score": task_score(point)}
    return out


def agreement_report(
    labels: LongLabels, level: str = "nominal", *, bootstrap: int = DEFAULT_BOOTSTRAP, seed: int = 0
) -> dict[str, Any]:
    """Agreement statistics of a long-format label file (no study needed)."""
    item_names, unit = np.unique(labels.item, return_inverse=True)
    ann_names, annotator = np.unique(labels.annotator, return_inverse=True)
    numbers = numeric_labels(labels) if level != "nominal" else None
    if numbers is not None:
        values, codes = np.unique(numbers, return_inverse=True)
        value_names = [f"{v:g}" for v in values]
    else:
        value_names_arr, codes = np.unique(labels.label.astype(str), return_inverse=True)
        value_names = [str(v) for v in value_names_arr]
    n_units = len(item_names)
    alpha = agr.krippendorff_alpha(
        unit, codes, n_units, level, numbers, replicates=bootstrap, rng=rng_for(seed, "alpha")
    )
    table = agr.counts_table(unit, codes, n_units, len(value_names))
    fk, used, raters = agr.fleiss_kappa(
        table, None, replicates=bootstrap, rng=rng_for(seed, "fleiss")
    )
    pairs = agr.pairwise_cohen_kappa(unit, annotator, codes, [str(a) for a in ann_names], numbers)
    votes = unit_votes(unit, codes, n_units)
    return _plain(
        {
            "file": labels.path,
            "level": level,
            "n_items": n_units,
            "n_annotators": len(ann_names),
            "n_labels": len(labels.label),
            "n_missing": labels.n_missing,
            "values": value_names,
            "krippendorff_alpha": {
                "level": level,
                **alpha.as_dict(),
                "n_items": _pairable(unit, n_units),
            },
            "fleiss_kappa": {**fk.as_dict(), "n_items": used, "raters_per_item": raters},
            "pairwise_cohen_kappa": pairs,
            "pairwise_weights": None if numbers is None else "quadratic",
            "pairwise_summary": agr.summarise_pairs(pairs),
            "item_agreement_histogram": agr.item_agreement_histogram(votes.top, votes.n_labels),
            "bootstrap": {"replicates": bootstrap, "seed": seed},
        }
    )


# --- ties, confusion, suspects, models, gate -------------------------------------------------


def _ties(
    coded: CodedStudy,
    final: Aggregated,
    rule: str,
    k: int,
    dev_counts: dict[str, int] | None,
    how: str,
) -> dict[str, Any]:
    if coded.kind == "regression" or final.result is None or final.votes is None:
        return {
            "rule": rule,
            "applies": False,
            "note": f"ratings are aggregated with the {how}; there are no ties",
            "n_tied": 0,
            "items": [],
        }
    result, votes = final.result, final.votes
    resolution = result.resolution
    tied = np.flatnonzero(result.tied)
    more = int((votes.n_labels > k).sum())
    out: dict[str, Any] = {
        "rule": rule,
        "applies": True,
        "unit": "candidate answer" if coded.kind == "multi_answer" else "item",
        "n_tied": len(tied),
        "resolved_at_random": int((resolution == "random").sum()),
        "resolved_by_dev_majority_class": int((resolution == "dev-majority-class").sum()),
        "abstained_counted_wrong": int((resolution == "abstain").sum()),
        "open_counted_wrong": int((resolution == "open").sum()),
        "units_with_more_than_k_labels": more,
    }
    if rule == "dev-majority-class":
        out["dev_class_counts"] = dev_counts
        if not dev_counts:
            out["note"] = "no dev gold counts: ties go to the first class in the task's label order"
        if coded.kind == "entity_choice":
            out["note"] = "ReCoRD has no fixed classes: ties go to the first entity chosen"
    if rule == "extra-annotator":
        out["note"] = (
            "a tied item stays open for one more annotator; until then it has no answer and "
            "scores as wrong"
        )
    cands, counts = votes.candidates[tied].tolist(), votes.counts[tied].tolist()
    out["items"] = [
        {
            "item": str(coded.unit_name[u]),
            "votes": votes_dict(c, n, coded.classes),
            "resolution": str(resolution[u]),
            "result": answer_of(coded.classes, int(result.pred[u])),
        }
        for u, c, n in zip(tied.tolist(), cands, counts, strict=True)
    ]
    return out


def _confusion(coded: CodedStudy, pred: np.ndarray) -> dict[str, Any] | None:
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
    return {
        "gold": list(coded.classes),
        "predicted": list(columns),
        "matrix": matrix.tolist(),
        "unit": "candidate answer" if coded.kind == "multi_answer" else "item",
    }


def _gate(decisions: list[dict[str, Any]]) -> dict[str, Any]:
    latest: dict[str, dict[str, Any]] = {}
    for d in decisions:
        latest[d["annotator"]] = d
    return {
        "decisions": decisions,
        "admitted": sorted(n for n, d in latest.items() if d["admitted"]),
        "refused": sorted(n for n, d in latest.items() if not d["admitted"]),
        "rules": sorted({d["rule"] for d in decisions}),
    }
