"""Turn a study's stored labels into integer arrays the analysis can vectorise over.

Every task kind ends up in the same shape: *units* (what is voted on), *labels* (one code per
annotator and unit) and gold per unit.

- classification: a unit is an item; codes index the task's labels; CB's 7-point answers are
  collapsed to their class (the raw point is kept in `label_number` for ordinal α);
- regression (STS-B): a unit is an item; the rating is `label_number`;
- multi_answer (MultiRC): a unit is one candidate answer of a question; codes index "1"/"0";
- entity_choice (ReCoRD): a unit is an item; codes index the distinct entity texts chosen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from annotate.analysis.data import StudyData
from annotate.specs import TaskSpec


@dataclass
class CodedStudy:
    spec: TaskSpec
    items: pd.DataFrame
    """The sample's items in sample order; an item's index is its row number."""
    classes: list[str]
    """The value each code stands for."""
    annotators: list[str]
    """Annotator names, sorted; an annotator's index is its place here."""
    # units
    unit_item: np.ndarray
    unit_name: np.ndarray
    """How a unit is named in a report: the item's source id (MultiRC: `question/answer`)."""
    gold_code: np.ndarray
    """Gold class code per unit, -1 where there is none (regression and ReCoRD: -1)."""
    gold_number: np.ndarray
    """Gold rating per unit (regression), else NaN."""
    gold_entities: list[list[str] | None]
    """Acceptable gold texts per unit (ReCoRD), else empty."""
    # labels (MultiRC: one row per judged candidate answer)
    label_unit: np.ndarray
    label_code: np.ndarray
    """Class code per label (regression: -1)."""
    label_number: np.ndarray
    """The raw numeric answer (rating, CB scale point), NaN where the answer is not a number."""
    label_row: np.ndarray
    """The annotator answer (row of `row_*`) a label belongs to."""
    # one row per stored answer (annotator x item)
    row_item: np.ndarray
    row_annotator: np.ndarray
    row_seconds: np.ndarray
    notes: list[str] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def n_units(self) -> int:
        return len(self.unit_item)

    @property
    def label_annotator(self) -> np.ndarray:
        return self.row_annotator[self.label_row]

    def positive_code(self) -> int | None:
        if self.spec.positive_label is None or self.spec.positive_label not in self.classes:
            return None
        return self.classes.index(self.spec.positive_label)


def class_code_map(spec: TaskSpec) -> dict[str, int]:
    """Answer or class value -> class code, collapsing an answer scale (CB)."""
    classes = spec.label_values()
    codes = {v: i for i, v in enumerate(classes)}
    for option in spec.answer_scale:
        codes[option.value] = classes.index(spec.collapse(option.value))
    return codes


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def _numbers(values: np.ndarray) -> np.ndarray:
    return pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(dtype=float)


def code_study(data: StudyData) -> CodedStudy:
    spec = data.spec
    items = data.items.reset_index(drop=True)
    labels = data.labels
    item_index = pd.Index(items["item_id"].to_numpy())
    row_item = (
        item_index.get_indexer(labels["item_id"].to_numpy()) if len(labels) else np.zeros(0, int)
    )
    keep = row_item >= 0
    notes: list[str] = []
    if not keep.all():
        notes.append(f"{int((~keep).sum())} labels of items outside the test sample were ignored")
    labels = labels[keep]
    row_item = row_item[keep].astype(np.int64)
    column = labels["annotator"]
    if isinstance(column.dtype, pd.CategoricalDtype):
        column = column.cat.remove_unused_categories()
        codes, uniques = column.cat.codes.to_numpy(), list(column.cat.categories)
    else:
        codes, uniques = pd.factorize(column.astype(str))
    ann_names = [str(u) for u in uniques]
    annotators = sorted(set(ann_names))
    rank = np.asarray(pd.Index(annotators).get_indexer(ann_names), dtype=np.int64)
    row_annotator = rank[codes] if len(codes) else np.zeros(0, dtype=np.int64)
    row_seconds = labels["seconds"].to_numpy(dtype=float) if len(labels) else np.zeros(0)
    values = labels["value"].to_numpy(dtype=object) if len(labels) else np.zeros(0, dtype=object)
    base: dict[str, Any] = {
        "spec": spec,
        "items": items,
        "annotators": annotators,
        "row_item": row_item,
        "row_annotator": row_annotator,
        "row_seconds": row_seconds,
        "notes": notes,
    }
    n = len(items)
    golds = items["gold"].to_numpy(dtype=object)
    names = items["source_id"].astype(str).to_numpy(dtype=object)
    rows = np.arange(len(values), dtype=np.int64)
    no_gold_codes = np.full(n, -1, dtype=np.int64)
    nan_gold = np.full(n, np.nan)

    if spec.kind == "classification":
        codes_of = class_code_map(spec)
        value_codes, distinct = pd.factorize(pd.Series(values, dtype=object))
        per_distinct = np.array([codes_of.get(str(v), -1) for v in distinct] + [-1], dtype=np.int64)
        code = per_distinct[value_codes]
        known = code >= 0
        if spec.answer_scale:  # CB: keep the 7-point answer for ordinal α
            numbers = np.array([_number(v) for v in distinct] + [np.nan])[value_codes]
        else:
            numbers = np.full(len(code), np.nan)
        if not known.all():
            notes.append(
                f"{int((~known).sum())} labels with values outside the task's answers ignored"
            )
        gold_code = np.array(
            [-1 if g is None else codes_of.get(str(g), -1) for g in golds], dtype=np.int64
        )
        return CodedStudy(
            classes=spec.label_values(),
            unit_item=np.arange(n, dtype=np.int64),
            unit_name=names,
            gold_code=gold_code,
            gold_number=nan_gold,
            gold_entities=[None] * n,
            label_unit=row_item[known],
            label_code=code[known],
            label_number=numbers[known],
            label_row=rows[known],
            **base,
        )

    if spec.kind == "regression":
        number = _numbers(values)
        known = np.isfinite(number)
        if not known.all():
            notes.append(f"{int((~known).sum())} ratings that are not numbers ignored")
        gold_number = np.array([np.nan if g is None else float(g) for g in golds])
        return CodedStudy(
            classes=[],
            unit_item=np.arange(n, dtype=np.int64),
            unit_name=names,
            gold_code=no_gold_codes,
            gold_number=gold_number,
            gold_entities=[None] * n,
            label_unit=row_item[known],
            label_code=np.full(int(known.sum()), -1, dtype=np.int64),
            label_number=number[known],
            label_row=rows[known],
            **base,
        )

    if spec.kind == "multi_answer":
        return _code_multi_answer(spec, base, names, golds, values, row_item)

    # entity_choice (ReCoRD): codes index the distinct entity texts chosen by anyone.
    text = np.array(["" if v is None else str(v) for v in values], dtype=object)
    code, uniques = pd.factorize(pd.Series(text, dtype=object))
    gold_entities = [
        None if g is None else [str(x) for x in (g if isinstance(g, list) else [g])] for g in golds
    ]
    return CodedStudy(
        classes=[str(u) for u in uniques],
        unit_item=np.arange(n, dtype=np.int64),
        unit_name=names,
        gold_code=no_gold_codes,
        gold_number=nan_gold,
        gold_entities=gold_entities,
        label_unit=row_item,
        label_code=np.asarray(code, dtype=np.int64),
        label_number=np.full(len(text), np.nan),
        label_row=rows,
        **base,
    )


def _code_multi_answer(
    spec: TaskSpec,
    base: dict[str, Any],
    names: np.ndarray,
    golds: np.ndarray,
    values: np.ndarray,
    row_item: np.ndarray,
) -> CodedStudy:
    classes = spec.label_values()
    codes_of = {v: i for i, v in enumerate(classes)}
    unit_of: dict[tuple[int, str], int] = {}
    unit_item: list[int] = []
    unit_name: list[str] = []
    gold_code: list[int] = []

    def unit(item: int, answer: str) -> int:
        key = (item, answer)
        found = unit_of.get(key)
        if found is None:
            found = unit_of[key] = len(unit_item)
            unit_item.append(item)
            unit_name.append(f"{names[item]}/{answer}")
            gold_code.append(-1)
        return found

    for item, gold in enumerate(golds):
        if isinstance(gold, dict):
            for answer, value in gold.items():
                gold_code[unit(item, str(answer))] = codes_of.get(str(value), -1)
    l_unit: list[int] = []
    l_code: list[int] = []
    l_row: list[int] = []
    ignored = 0
    for row, (item, value) in enumerate(zip(row_item.tolist(), values, strict=True)):
        if not isinstance(value, dict):
            ignored += 1
            continue
        for answer, judgement in value.items():
            c = codes_of.get(str(judgement), -1)
            if c < 0:
                ignored += 1
                continue
            l_unit.append(unit(item, str(answer)))
            l_code.append(c)
            l_row.append(row)
    if ignored:
        base["notes"].append(
            f"{ignored} answer judgements that are not {'/'.join(classes)} ignored"
        )
    n_units = len(unit_item)
    return CodedStudy(
        classes=classes,
        unit_item=np.asarray(unit_item, dtype=np.int64),
        unit_name=np.asarray(unit_name, dtype=object),
        gold_code=np.asarray(gold_code, dtype=np.int64),
        gold_number=np.full(n_units, np.nan),
        gold_entities=[None] * n_units,
        label_unit=np.asarray(l_unit, dtype=np.int64),
        label_code=np.asarray(l_code, dtype=np.int64),
        label_number=np.full(len(l_unit), np.nan),
        label_row=np.asarray(l_row, dtype=np.int64),
        **base,
    )
