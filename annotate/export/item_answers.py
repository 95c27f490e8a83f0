"""One row per unit of a study's test sample (an item; MultiRC: a candidate answer named
`question/answer`): the votes, the majority with how a tie was settled, and each
aggregation model's answer with its posterior, exactly as the report aggregates and fits them
(same tie rule and seed; Dawid–Skene and MACE of `report.aggregation.estimators`).

The rows behind `export --format answers`, the API's `Study.answers()` and the Hugging Face
export (`export.hf_dataset`), which also takes each annotator's own answer from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from annotate.export.values import numeric_key, source_value
from annotate.report.aggregation import estimators
from annotate.report.aggregation.study import Aggregated, final_aggregate
from annotate.report.data.coding import CodedStudy
from annotate.report.data.loading import StudyData


@dataclass
class UnitAnswers:
    """The per-unit table, with what a dataset export needs beside it."""

    columns: list[str]
    rows: list[dict[str, Any]]
    coded: CodedStudy
    classes: list[str]
    """The answers a vote is taken over, in the task's order (empty for ratings and ReCoRD)."""
    soft: list[list[float] | None] = field(default_factory=list)
    """Per row: the share of labels for each of `classes` (empty without classes)."""
    annotators: list[list[str]] = field(default_factory=list)
    """Per row: who answered, in the order of `answers`."""
    answers: list[list[Any]] = field(default_factory=list)
    """Per row: each annotator's answer (a class, a rating or an entity text)."""
    hard: list[Any] = field(default_factory=list)
    """Per row: the answer by the study's rule (a class, a rating, an entity), None if none."""
    gold: list[Any] = field(default_factory=list)
    """Per row: gold in the same form, None if unknown."""
    unit_item: list[int] = field(default_factory=list)
    """Per row: the index of its item in `coded.items`."""


MODELS = ("dawid_skene", "mace")
"""The aggregation models of the table, in `estimators.ESTIMATORS`' order."""


def unit_answers(
    data: StudyData, *, models: bool = True, positions: Mapping[str, int] | None = None
) -> UnitAnswers:
    """The per-unit table of a study (see the module). `models`: fit Dawid–Skene and MACE
    (tasks with classes only). `positions` (source id -> place in the file,
    submission.source_positions): rows in the file's order, as the soft and labels tables;
    else in sample order."""
    coded, final = final_aggregate(data)
    spec = coded.spec
    regression = coded.kind == "regression"
    with_classes = coded.kind in {"classification", "multi_answer"}
    classes = list(coded.classes) if with_classes else []
    modelled = MODELS if models and with_classes else ()
    # Every model's columns whenever asked for: empty where none could be fitted (no labels
    # yet, one answer only), not left out, so a script's column survives a pilot.
    fitted = _fits(coded, final, data.protocol.seed) if modelled else {}
    rule = data.protocol.tie_rule
    aggregate = data.protocol.regression_aggregation if regression else "majority"
    n_labels = np.bincount(coded.label_unit, minlength=coded.n_units)
    order = np.argsort(coded.label_unit, kind="stable")
    bounds = np.r_[0, np.cumsum(n_labels)]
    annotator_of = coded.label_annotator
    out = UnitAnswers([], [], coded, classes)
    for unit in range(coded.n_units):
        own = order[bounds[unit] : bounds[unit + 1]]
        row: dict[str, Any] = {"item_id": str(coded.unit_name[unit]), "n_labels": len(own)}
        who = [coded.annotators[int(a)] for a in annotator_of[own]]
        if regression:
            said: list[Any] = [float(v) for v in coded.label_number[own]]
            value = float(final.pred[unit])
            hard: Any = value if np.isfinite(value) else None
            row[aggregate] = hard
            gold_number = coded.gold_number[unit]
            gold: Any = float(gold_number) if np.isfinite(gold_number) else None
        else:
            names = coded.classes
            said = [names[int(c)] for c in coded.label_code[own]]
            counts = np.bincount(coded.label_code[own], minlength=len(names))
            if with_classes:
                for c, name in enumerate(names):
                    row[f"count_{name}"] = int(counts[c])
                total = int(counts.sum())
                # No label, no shares (not 0 for every answer, which sum to nothing)
                out.soft.append(
                    [float(counts[c]) / total for c in range(len(names))] if total else None
                )
            code = int(final.pred[unit])
            hard = names[code] if code >= 0 else None
            row["majority"] = source_value(spec, hard)
            row.update(_tie(final, unit, names, rule))
            gold = _gold(coded, unit)
            for method in modelled:
                answer, posterior = (
                    _model_answer(fitted[method], unit, names) if method in fitted else (None, None)
                )
                row[method] = source_value(spec, answer)
                row[f"{method}_posterior"] = posterior
        row["gold"] = source_value(spec, gold) if not regression and gold is not None else gold
        out.rows.append(row)
        out.annotators.append(who)
        out.answers.append(said)
        out.hard.append(hard)
        out.gold.append(gold)
        out.unit_item.append(int(coded.unit_item[unit]))
    out.columns = _columns(coded, classes, modelled, aggregate)
    _source_order(out, positions)
    return out


def _columns(
    coded: CodedStudy, classes: list[str], modelled: tuple[str, ...], aggregate: str
) -> list[str]:
    columns = ["item_id", "n_labels"]
    if coded.kind == "regression":
        return [*columns, aggregate, "gold"]
    columns += [f"count_{c}" for c in classes]
    columns += ["majority", "tied", "tied_answers", "tie_rule", "tie_pick"]
    for method in modelled:
        columns += [method, f"{method}_posterior"]
    return [*columns, "gold"]


def _fits(coded: CodedStudy, final: Aggregated, seed: int) -> dict[str, estimators.Fitted]:
    """Dawid–Skene and MACE fitted as the report fits them; none with fewer than two
    distinct answers (the report says "not computed" then)."""
    import pandas as pd

    keep = coded.label_code >= 0
    frame = pd.DataFrame(
        {
            "task": coded.label_unit[keep],
            "worker": coded.label_annotator[keep],
            "label": coded.label_code[keep],
        }
    )
    if frame.empty or frame["label"].nunique() < 2:
        return {}
    given = estimators.FitInput(frame, coded, final, seed)
    return {e.method: e.fit(given) for e in estimators.ESTIMATORS if e.method in MODELS}


def _model_answer(fitted: estimators.Fitted, unit: int, names: list[str]) -> tuple[Any, Any]:
    """A model's answer for a unit and its posterior probability; (None, None) unlabelled."""
    code = int(fitted.pred[unit])
    if code < 0 or fitted.model is None:
        return None, None
    return names[code], round(float(fitted.model.posterior[unit, code]), 6)


def _tie(final: Aggregated, unit: int, names: list[str], rule: str) -> dict[str, Any]:
    """Whether the unit's top vote was shared, between which answers, and the rule's pick."""
    result, votes = final.result, final.votes
    if result is None or votes is None or not bool(result.tied[unit]):
        return {"tied": False, "tied_answers": None, "tie_rule": None, "tie_pick": None}
    counts, cands = votes.counts[unit], votes.candidates[unit]
    top = counts.max()
    tied = sorted(int(c) for c, n in zip(cands, counts, strict=True) if n == top and c >= 0)
    code = int(final.pred[unit])
    resolution = str(result.resolution[unit]) or rule
    return {
        "tied": True,
        "tied_answers": "|".join(names[c] for c in tied),
        "tie_rule": resolution,
        "tie_pick": names[code] if code >= 0 else None,
    }


def _gold(coded: CodedStudy, unit: int) -> Any:
    if coded.kind == "entity_choice":
        return coded.gold_entities[unit] or None
    code = int(coded.gold_code[unit])
    return coded.classes[code] if code >= 0 else None


def _source_order(out: UnitAnswers, positions: Mapping[str, int] | None) -> None:
    """Rows in the source file's order given `positions`, else the sample's (MultiRC: a
    question's answers by idx), as the soft table: the same store gives the same file."""
    coded = out.coded
    # coded.items' own "position" is the item's place in the sample, not in the file.
    position = coded.items["position"].tolist() if "position" in coded.items else None
    names = coded.items["source_id"].astype(str).tolist()
    keys = []
    for n, row in enumerate(out.rows):
        item = out.unit_item[n]
        place = position[item] if position is not None else item
        if positions is not None:
            place = positions.get(names[item], place)
        answer = row["item_id"].rsplit("/", 1)[-1] if coded.kind == "multi_answer" else ""
        keys.append((place, numeric_key(answer) if answer else (0, 0, "")))
    order = sorted(range(len(out.rows)), key=lambda n: keys[n])
    for name in ("rows", "annotators", "answers", "hard", "gold", "unit_item"):
        values = getattr(out, name)
        setattr(out, name, [values[n] for n in order])
    if out.soft:
        out.soft = [out.soft[n] for n in order]
