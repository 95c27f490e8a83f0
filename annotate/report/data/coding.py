"""Turn a study's stored labels into integer arrays the scorers and statistics vectorise over.

Every task kind ends up in the same shape: *units* (what is voted on), *labels* (one code per
annotator and unit) and gold per unit.

- classification: a unit is an item; codes index the task's labels; CB's 7-point answers are
  collapsed to their class (the raw point is kept in `label_number` for ordinal α);
- regression (STS-B): a unit is an item; the rating is `label_number`;
- multi_answer (MultiRC): a unit is one candidate answer of a question; codes index "1"/"0";
- entity_choice (ReCoRD): a unit is an item; codes index the distinct entity texts chosen.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import pandas as pd

from annotate.report.data.loading import StudyData
from annotate.scoring.units import GoldUnits, class_code_map, code_gold
from annotate.wording import count_of, plural


@dataclass
class CodedStudy(GoldUnits):
    """A study's sample as scoring units (see `GoldUnits`) plus its labels."""

    items: pd.DataFrame
    """The sample's items in sample order; an item's index is its row number."""
    annotators: list[str]
    """Annotator names, sorted; an annotator's index is its place here."""
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
    def label_annotator(self) -> np.ndarray:
        return self.row_annotator[self.label_row]


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def _numbers(values: np.ndarray) -> np.ndarray:
    return pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(dtype=float)


def code_study(data: StudyData) -> CodedStudy:
    """The study's sample as units with gold (`code_gold`, as any gold file is coded) and its
    test-phase labels as codes over those units."""
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
        n = int((~keep).sum())
        notes.append(
            f"{count_of(n, 'label')} of items outside the test sample {plural(n, 'was')} ignored"
        )
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
    gold = code_gold(
        spec,
        items["source_id"].astype(str).tolist(),
        items["gold"].tolist(),
        items["pair_id"].tolist(),
    )
    base: dict[str, Any] = {
        **{f.name: getattr(gold, f.name) for f in fields(GoldUnits)},
        "items": items,
        "annotators": annotators,
        "row_item": row_item,
        "row_annotator": row_annotator,
        "row_seconds": row_seconds,
        "notes": notes,
    }
    rows = np.arange(len(values), dtype=np.int64)

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
                f"{count_of(int((~known).sum()), 'label')} with values outside the task's "
                "answers ignored"
            )
        return CodedStudy(
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
        return CodedStudy(
            label_unit=row_item[known],
            label_code=np.full(int(known.sum()), -1, dtype=np.int64),
            label_number=number[known],
            label_row=rows[known],
            **base,
        )

    if spec.kind == "multi_answer":
        return _code_multi_answer(base, values, row_item)

    # entity_choice (ReCoRD): codes index the distinct entity texts chosen by anyone.
    text = np.array(["" if v is None else str(v) for v in values], dtype=object)
    code, uniques = pd.factorize(pd.Series(text, dtype=object))
    base["classes"] = [str(u) for u in uniques]
    return CodedStudy(
        label_unit=row_item,
        label_code=np.asarray(code, dtype=np.int64),
        label_number=np.full(len(text), np.nan),
        label_row=rows,
        **base,
    )


def _code_multi_answer(
    base: dict[str, Any], values: np.ndarray, row_item: np.ndarray
) -> CodedStudy:
    """MultiRC labels judge candidate answers; an answer judged but absent from the gold
    becomes a unit of its own (without gold) after the gold units."""
    classes: list[str] = base["classes"]
    names: np.ndarray = base["item_ids"]
    codes_of = {v: i for i, v in enumerate(classes)}
    unit_item: list[int] = base["unit_item"].tolist()
    unit_name: list[str] = base["unit_name"].tolist()
    gold_code: list[int] = base["gold_code"].tolist()
    unit_of = {
        (item, name.rsplit("/", 1)[-1]): u
        for u, (item, name) in enumerate(zip(unit_item, unit_name, strict=True))
    }

    def unit(item: int, answer: str) -> int:
        key = (item, answer)
        found = unit_of.get(key)
        if found is None:
            found = unit_of[key] = len(unit_item)
            unit_item.append(item)
            unit_name.append(f"{names[item]}/{answer}")
            gold_code.append(-1)
        return found

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
    base.update(
        unit_item=np.asarray(unit_item, dtype=np.int64),
        unit_name=np.asarray(unit_name, dtype=object),
        gold_code=np.asarray(gold_code, dtype=np.int64),
        gold_number=np.full(n_units, np.nan),
        gold_entities=[None] * n_units,
    )
    return CodedStudy(
        label_unit=np.asarray(l_unit, dtype=np.int64),
        label_code=np.asarray(l_code, dtype=np.int64),
        label_number=np.full(len(l_unit), np.nan),
        label_row=np.asarray(l_row, dtype=np.int64),
        **base,
    )
