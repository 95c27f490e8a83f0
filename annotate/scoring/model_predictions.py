"""A model's predictions (read from a leaderboard submission file) as one answer per unit, in
the form the scorers take, so a model is scored by exactly the code that scores the humans.

What a file leaves out is either not scored (an id it does not answer: counted in coverage)
or counted wrong: a MultiRC answer missing from a question the file does answer gets the
wrong judgement (a false negative when gold is true, a false positive when false), so that
question cannot be an exact match. `counted_wrong` gives the leaderboard's view, where every
id left out is wrong.

MultiRC's ids are nested (paragraph, question, answer) and every one is checked against the
gold's nesting (`check_multirc_ids`): an answer given under a question it is not an answer
of, a question under another paragraph than its own, or a paragraph of the gold holding a
question it has not, is an error naming the file's line: scored as it stood, the answer was
dropped and the question scored as if given under its own paragraph."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from annotate.errors import DataFileError
from annotate.scoring.metrics import NO_ANSWER
from annotate.scoring.predictions import ModelPredictions
from annotate.scoring.units import NO_DECISION, NO_LABELS, GoldUnits, class_code_map


def model_units(
    units: GoldUnits, model: ModelPredictions, paragraphs: Sequence[str | None] | None = None
) -> np.ndarray:
    """A model's prediction per unit in the form `scorer_for` takes (missing: not predicted).
    MultiRC: the ids must fit the gold's nesting (`check_multirc_ids`; `paragraphs`: each
    item's paragraph idx, where the gold says)."""
    names = units.item_ids.tolist()
    preds = model.predictions
    if units.kind == "multi_answer":
        check_multirc_ids(units, model, paragraphs)
    if units.kind == "regression":
        return np.array([float(preds[n]) if n in preds else np.nan for n in names])
    if units.kind == "entity_choice":
        return np.array([preds.get(n) for n in names], dtype=object)
    if units.kind == "classification":
        codes_of = class_code_map(units.spec)
        return np.array(
            [codes_of.get(str(preds[n]), NO_DECISION) if n in preds else NO_LABELS for n in names],
            dtype=np.int64,
        )
    codes_of = {v: i for i, v in enumerate(units.classes)}
    out = np.full(units.n_units, NO_LABELS, dtype=np.int64)
    for u, (item, unit_name) in enumerate(
        zip(units.unit_item.tolist(), units.unit_name.tolist(), strict=True)
    ):
        answers = preds.get(names[item])
        if isinstance(answers, dict):
            answer = str(unit_name).rsplit("/", 1)[-1]
            if answer in answers:
                out[u] = codes_of.get(str(answers[answer]), NO_DECISION)
            elif units.gold_code[u] >= 0:
                out[u] = _wrong_judgement(units, u)
    return out


def id_order(value: str) -> tuple[int, int | str]:
    """Ids in their natural order: numbers by value (2 before 10), then the rest."""
    return (0, int(value)) if value.isdigit() else (1, value)


def check_multirc_ids(
    units: GoldUnits, model: ModelPredictions, paragraphs: Sequence[str | None] | None = None
) -> None:
    """MultiRC: a DataFileError naming the line of the first id that does not fit the gold's
    nesting: an answer idx under a question whose answer it is not (saying whose it is, where
    the gold has it), a question under another paragraph than the gold's, or a question the
    gold's paragraph does not hold. The questions of `units` with gold are checked; with
    `paragraphs` (each item's paragraph idx, a whole gold file's), the paragraphs too. A
    question whose paragraph the gold does not have is no item of it: counted, not refused."""
    names = units.item_ids.tolist()
    answers_of: dict[str, list[str]] = {}
    for item, unit_name in zip(units.unit_item.tolist(), units.unit_name.tolist(), strict=True):
        answers_of.setdefault(names[item], []).append(str(unit_name).rsplit("/", 1)[-1])
    owner = {a: q for q, answers in answers_of.items() for a in answers}
    paragraph_of = (
        {q: p for q, p in zip(names, paragraphs, strict=True) if p is not None}
        if paragraphs is not None
        else {}
    )
    gold_paragraphs = set(paragraph_of.values())

    def refuse(question: str, reason: str) -> None:
        raise DataFileError(model.path, model.line_of.get(question), reason)

    for question in sorted(model.predictions, key=lambda q: model.line_of.get(q, 0)):
        given = model.paragraph_of.get(question)
        if question in paragraph_of:
            if given is not None and given != paragraph_of[question]:
                refuse(
                    question,
                    f"question {question} is given under paragraph {given}; in the gold it is "
                    f"a question of paragraph {paragraph_of[question]}",
                )
        elif given is not None and given in gold_paragraphs:
            refuse(question, f"question {question} is not a question of paragraph {given}")
        known = answers_of.get(question)
        answers = model.predictions[question]
        if known is None or not isinstance(answers, dict):
            continue
        for answer in sorted(answers, key=id_order):
            if answer not in known:
                whose = owner.get(answer)
                refuse(
                    question,
                    f"answer {answer} is given under question {question}, whose answers are "
                    + ", ".join(sorted(known, key=id_order))
                    + (f"; it is an answer of question {whose}" if whose is not None else ""),
                )


def _wrong_judgement(units: GoldUnits, unit: int) -> int:
    """MultiRC: the judgement that is not gold (true for a false answer, and back)."""
    return 1 - int(units.gold_code[unit])


def missing_answers(units: GoldUnits, model: ModelPredictions) -> int:
    """MultiRC: answers with gold that the file leaves out of questions it answers."""
    if units.kind != "multi_answer":
        return 0
    names = units.item_ids.tolist()
    missing = 0
    for u, (item, unit_name) in enumerate(
        zip(units.unit_item.tolist(), units.unit_name.tolist(), strict=True)
    ):
        answers = model.predictions.get(names[item])
        if isinstance(answers, dict) and units.gold_code[u] >= 0:
            missing += str(unit_name).rsplit("/", 1)[-1] not in answers
    return missing


def wrong_class(gold: np.ndarray, n_classes: int) -> np.ndarray:
    """A wrong class for each gold class code: the class after it in the task's label order,
    the last wrapping to the first (with two classes, the other one)."""
    return (np.asarray(gold, dtype=np.int64) + 1) % n_classes


def counted_wrong(units: GoldUnits, pred: np.ndarray) -> np.ndarray:
    """`pred` with every unit that has gold but no prediction answered wrong, so that the file
    is a complete one, as a leaderboard takes, whose every left-out answer is wrong; the task's
    metrics are then computed on it as on any file. Classification: a wrong class
    (`wrong_class`), so accuracy, F1 and MCC alike are those of an actual file of labels;
    MultiRC: the wrong judgement; ReCoRD: no entity; a rating: the scale's midpoint (Pearson
    and Spearman have no 'wrong' value; the midpoint carries no information)."""
    out = pred.copy()
    if units.kind == "regression":
        scale = units.spec.scale
        middle = (scale.min + scale.max) / 2 if scale else 0.0
        out[np.isfinite(units.gold_number) & ~np.isfinite(out)] = middle
    elif units.kind == "entity_choice":
        for u, gold in enumerate(units.gold_entities):
            if gold and out[u] is None:
                out[u] = NO_ANSWER
    elif units.kind == "classification":
        left_out = (units.gold_code >= 0) & (out == NO_LABELS)
        out[left_out] = wrong_class(units.gold_code[left_out], len(units.classes))
    else:
        for u in np.flatnonzero((units.gold_code >= 0) & (out == NO_LABELS)):
            out[u] = _wrong_judgement(units, int(u))
    return out


def counted_wrong_rule(units: GoldUnits) -> tuple[str, str | None]:
    """What `counted_wrong` gives each unit left out, in words, and a note where the score of
    such a file reads unlike the metric on the answers given: a correlation (MCC, R3) of a
    file whose answers are mostly wrong is below 0, near -1 when the file leaves out most."""
    from annotate.metric_registry import metric

    if units.kind == "regression":
        return "each rating left out is the scale's midpoint: a rating has no wrong value", None
    if units.kind == "entity_choice":
        return "each query left out has no entity", None
    if units.kind == "multi_answer":
        return "each answer left out has the wrong judgement", None
    which = "the other class" if len(units.classes) == 2 else "the next class in label order"
    correlations = [metric(m).inline_name for m in units.spec.metrics if metric(m).lowest < 0]
    note = None
    if correlations:
        note = (
            f"{' and '.join(correlations)} is below 0 when most of a file's answers are wrong, "
            "near -100 when it leaves out most items"
        )
    return f"each item left out has {which}", note
