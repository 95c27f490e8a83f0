"""The human answer of each test item of a study, aggregated exactly as the report aggregates
it (same coding, same tie rule, same seed), so that a file written from these answers scores
what the report says.

- classification: the majority class (CB: of the collapsed 7-point answers);
- regression (STS-B): the mean or median rating, as the protocol says;
- multi_answer (MultiRC): the majority judgement of each candidate answer;
- entity_choice (ReCoRD): the entity chosen most often.

A unit nobody labelled, or whose tie the rule leaves open (abstain, extra-annotator), has no
answer. `soft_rows` gives the per-item label distributions behind the answers.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from annotate.export.values import numeric_key, source_value
from annotate.report.aggregation import majority as agg
from annotate.report.aggregation.study import describe_aggregation, final_aggregate
from annotate.report.build import data_committee_size
from annotate.report.data.coding import CodedStudy
from annotate.report.data.loading import StudyData
from annotate.report.stats.annotators import answer_scorer
from annotate.scoring.compare import Humans


@dataclass
class HumanAnswers:
    """One answer per item (by source id), with the items that have none."""

    answers: dict[str, Any] = field(default_factory=dict)
    """Source id -> label value, rating, {answer idx: "0"/"1"} or entity text."""
    unlabelled: list[str] = field(default_factory=list)
    """Sampled items nobody labelled yet."""
    undecided: list[str] = field(default_factory=list)
    """Items (MultiRC: questions with an answer) whose tie the rule left without an answer."""
    description: str = ""
    """How the answers were aggregated, e.g. `majority of 5, ties: random (seed 7)`."""


def humans(data: StudyData) -> Humans:
    """The study's humans for `scoring.compare.compare_model`: the aggregated answers (as the
    report aggregates them) and every annotator's own answers."""
    coded, final = final_aggregate(data)
    individual, annotator = answer_scorer(coded)
    return Humans(
        study=data.name,
        units=coded,
        answer=final.pred,
        aggregation=describe_aggregation(data, data_committee_size(coded, final, data.protocol)),
        seed=data.protocol.seed,
        n_annotators=len(coded.annotators),
        individual=individual,
        individual_unit=coded.label_unit,
        individual_annotator=annotator,
    )


def answer_id(unit_name: str) -> str:
    """A MultiRC unit is named `question/answer`: the answer's idx."""
    return str(unit_name).rsplit("/", 1)[-1]


def human_answers(data: StudyData) -> HumanAnswers:
    coded, final = final_aggregate(data)
    # While items lack their k labels, the committee the data has, as the report names it.
    k = data_committee_size(coded, final, data.protocol)
    out = HumanAnswers(description=describe_aggregation(data, k))
    names = coded.items["source_id"].astype(str).tolist()
    labelled = np.bincount(coded.row_item, minlength=coded.n_items) > 0
    pred = final.pred
    if coded.kind == "multi_answer":
        per_question: dict[int, dict[str, str]] = {}
        undecided: set[int] = set()
        for unit, (item, name) in enumerate(
            zip(coded.unit_item.tolist(), coded.unit_name.tolist(), strict=True)
        ):
            code = int(pred[unit])
            if code >= 0:
                per_question.setdefault(item, {})[answer_id(name)] = coded.classes[code]
            elif code == agg.NO_DECISION:
                undecided.add(item)
        for item, name in enumerate(names):
            if item in per_question:
                out.answers[name] = per_question[item]
            if item in undecided:
                out.undecided.append(name)
            elif not labelled[item]:
                out.unlabelled.append(name)
        return out
    for item, name in enumerate(names):
        if coded.kind == "regression":
            value = float(pred[item])
            if np.isfinite(value):
                out.answers[name] = value
            else:
                out.unlabelled.append(name)
            continue
        code = int(pred[item])
        if code >= 0:
            out.answers[name] = coded.classes[code]
        elif code == agg.NO_DECISION:
            out.undecided.append(name)
        else:
            out.unlabelled.append(name)
    return out


# --- per-item label distributions ------------------------------------------------------------


SOFT_BASE = ["item_id", "n_labels"]
SOFT_TAIL = ["majority", "tie", "gold", "excluded"]
"""After the counts; for ratings "majority" is named after the aggregate it holds (mean or
median, the protocol's regression_aggregation) and there is no tie column. "excluded": the
item is excluded from scoring (`annotate flags STUDY --exclude ID`)."""


@dataclass
class SoftTable:
    """Columns and rows of the per-item label distribution table."""

    columns: list[str]
    rows: list[dict[str, Any]]


def soft_rows(
    data: StudyData,
    positions: Mapping[str, int] | None = None,
    excluded: Collection[str] = (),
) -> SoftTable:
    """One row per unit (item; MultiRC: candidate answer, named `question/answer`): how many
    labels it got, the count of each class (STS-B: the list of ratings; ReCoRD: counts per
    entity text), the aggregated answer (`majority`; for ratings the protocol's mean or
    median) with how a tie was settled, and the gold where known.

    Rows come in source order when `positions` (source id -> place in the file) is given,
    else in sample order; a MultiRC question's answers by their idx. `excluded` (source ids
    of items excluded from scoring) marks their rows: the export keeps them."""
    coded, final = final_aggregate(data)
    spec = coded.spec
    regression = coded.kind == "regression"
    n_labels = np.bincount(coded.label_unit, minlength=coded.n_units)
    resolution = final.result.resolution if final.result is not None else None
    aggregate = "majority"
    if regression:
        middle = ["ratings"]
        aggregate = data.protocol.regression_aggregation  # "mean" or "median", not a vote
    elif coded.kind == "entity_choice":
        middle = ["counts"]
    else:
        middle = [f"count_{c}" for c in coded.classes]
    rows = []
    order = np.argsort(coded.label_unit, kind="stable")
    bounds = np.r_[0, np.cumsum(n_labels)]
    for unit in range(coded.n_units):
        row: dict[str, Any] = {
            "item_id": str(coded.unit_name[unit]),
            "n_labels": int(n_labels[unit]),
        }
        own = order[bounds[unit] : bounds[unit + 1]]
        if regression:
            row["ratings"] = sorted(float(v) for v in coded.label_number[own])
            value = float(final.pred[unit])
            row[aggregate] = value if np.isfinite(value) else None
            gold = coded.gold_number[unit]
            row["gold"] = float(gold) if np.isfinite(gold) else None
        else:
            codes = coded.label_code[own]
            counts = np.bincount(codes, minlength=len(coded.classes))
            if coded.kind == "entity_choice":
                pairs = sorted(((-int(n), c) for c, n in enumerate(counts) if n > 0))
                row["counts"] = {coded.classes[c]: -n for n, c in pairs}
            else:
                for c, name in enumerate(coded.classes):
                    row[f"count_{name}"] = int(counts[c])
            code = int(final.pred[unit])
            majority = coded.classes[code] if code >= 0 else None
            row["majority"] = source_value(spec, majority)
            row["tie"] = str(resolution[unit]) if resolution is not None else None
            row["tie"] = row["tie"] or None
            row["gold"] = _soft_gold(coded, unit)
        item_name = str(coded.items["source_id"].iloc[int(coded.unit_item[unit])])
        row["excluded"] = item_name in excluded
        rows.append(row)
    names = coded.items["source_id"].astype(str).tolist()
    place = [positions.get(n, i) if positions else i for i, n in enumerate(names)]
    keys = [
        (place[int(item)], numeric_key(answer_id(name)) if coded.kind == "multi_answer" else 0)
        for item, name in zip(coded.unit_item.tolist(), coded.unit_name.tolist(), strict=True)
    ]
    rows = [row for _, row in sorted(zip(keys, rows, strict=True), key=lambda kr: kr[0])]
    tail = [aggregate, "gold"] if regression else SOFT_TAIL
    return SoftTable(columns=[*SOFT_BASE, *middle, *tail], rows=rows)


def _soft_gold(coded: CodedStudy, unit: int) -> Any:
    if coded.kind == "entity_choice":
        return coded.gold_entities[unit]
    code = int(coded.gold_code[unit])
    return source_value(coded.spec, coded.classes[code]) if code >= 0 else None
