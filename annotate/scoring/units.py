"""What the scorers score: *units* with their gold, whatever the task kind.

A unit is what gets one answer: an item, or one candidate answer of a MultiRC question. Gold
and answers are integer or float arrays over units so every metric can be vectorised:

- classification: a unit is an item; codes index the task's labels (CB's 7-point answers are
  collapsed to their class);
- regression (STS-B): a unit is an item; gold is a rating;
- multi_answer (MultiRC): a unit is one candidate answer; codes index "1"/"0";
- entity_choice (ReCoRD): a unit is an item; gold is the list of acceptable entity texts.

An answer per unit (a "prediction") uses the same codes, with two sentinels below; ReCoRD
predictions may also be entity texts, ratings are floats (NaN: no answer).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from annotate.specs import TaskSpec

NO_LABELS = -1
"""Predicted code of a unit nobody answered (not scored)."""
NO_DECISION = -2
"""Predicted code of a unit whose tie was not settled (abstain, open): scored as wrong."""


@dataclass
class GoldUnits:
    """A task's items as units with gold: the input every scorer takes beside the answers."""

    spec: TaskSpec
    item_ids: np.ndarray
    """Source id (text) of each item; an item's index is its place here."""
    item_pair: np.ndarray | None
    """AX-g: each item's minimal-pair number (-1 when it has none); None for other tasks."""
    classes: list[str]
    """The value each code stands for."""
    unit_item: np.ndarray
    unit_name: np.ndarray
    """How a unit is named in a report: the item's source id (MultiRC: `question/answer`)."""
    gold_code: np.ndarray
    """Gold class code per unit, -1 where there is none (regression and ReCoRD: -1)."""
    gold_number: np.ndarray
    """Gold rating per unit (regression), else NaN."""
    gold_entities: list[list[str] | None]
    """Acceptable gold texts per unit (ReCoRD), else None."""

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def n_items(self) -> int:
        return len(self.item_ids)

    @property
    def n_units(self) -> int:
        return len(self.unit_item)

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


def pair_codes(spec: TaskSpec, pair_ids: Any) -> np.ndarray | None:
    """AX-g: each item's minimal-pair number (-1 when it has none); None for other tasks."""
    if "gender_parity" not in spec.metrics:
        return None
    import pandas as pd  # here: the report's model and the console import this module

    codes, _ = pd.factorize(pd.Series(pair_ids, dtype=object), use_na_sentinel=True)
    return np.asarray(codes, dtype=np.int64)


def code_gold(
    spec: TaskSpec, ids: Sequence[str], golds: Sequence[Any], pair_ids: Sequence[str | None]
) -> GoldUnits:
    """Items (source ids, gold values as stored, AX-g pair ids) as units with gold. MultiRC
    gets one unit per candidate answer with a gold judgement, in the order of the gold."""
    n = len(ids)
    item_ids = np.asarray([str(i) for i in ids], dtype=object)
    items = np.arange(n, dtype=np.int64)
    no_codes = np.full(n, -1, dtype=np.int64)
    no_numbers = np.full(n, np.nan)
    common = {"spec": spec, "item_ids": item_ids, "item_pair": pair_codes(spec, pair_ids)}
    if spec.kind == "classification":
        codes_of = class_code_map(spec)
        gold_code = [-1 if g is None else codes_of.get(str(g), -1) for g in golds]
        return GoldUnits(
            classes=spec.label_values(),
            unit_item=items,
            unit_name=item_ids,
            gold_code=np.asarray(gold_code, dtype=np.int64),
            gold_number=no_numbers,
            gold_entities=[None] * n,
            **common,
        )
    if spec.kind == "regression":
        return GoldUnits(
            classes=[],
            unit_item=items,
            unit_name=item_ids,
            gold_code=no_codes,
            gold_number=np.array([np.nan if g is None else float(g) for g in golds]),
            gold_entities=[None] * n,
            **common,
        )
    if spec.kind == "multi_answer":
        codes_of = {v: i for i, v in enumerate(spec.label_values())}
        unit_item: list[int] = []
        unit_name: list[str] = []
        gold_code: list[int] = []
        for item, gold in enumerate(golds):
            if isinstance(gold, dict):
                for answer, value in gold.items():
                    unit_item.append(item)
                    unit_name.append(f"{item_ids[item]}/{answer}")
                    gold_code.append(codes_of.get(str(value), -1))
        return GoldUnits(
            classes=spec.label_values(),
            unit_item=np.asarray(unit_item, dtype=np.int64),
            unit_name=np.asarray(unit_name, dtype=object),
            gold_code=np.asarray(gold_code, dtype=np.int64),
            gold_number=np.full(len(unit_item), np.nan),
            gold_entities=[None] * len(unit_item),
            **common,
        )
    # entity_choice (ReCoRD): no fixed classes; answers are entity texts.
    return GoldUnits(
        classes=[],
        unit_item=items,
        unit_name=item_ids,
        gold_code=no_codes,
        gold_number=no_numbers,
        gold_entities=[
            None if g is None else [str(x) for x in (g if isinstance(g, list) else [g])]
            for g in golds
        ],
        **common,
    )
