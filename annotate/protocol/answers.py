"""What counts as a valid answer for a task, whether a training answer is right, and whether a
second answer to the same item is a retry of the first."""

from __future__ import annotations

import json
from typing import Any

from annotate.errors import UserError
from annotate.specs import TaskSpec

REGRESSION_TOLERANCE = 1.0
"""A training rating within this many points of gold counts as right (STS-B feedback)."""


def validate_answer(spec: TaskSpec, answer: Any, fields: dict[str, Any]) -> Any:
    """The answer in its stored form, or a UserError saying why it is not an answer."""
    if spec.kind == "classification":
        allowed = [o.value for o in spec.answer_options()]
        if str(answer) not in allowed:
            raise UserError(f"{answer!r} is not an answer for {spec.name} ({', '.join(allowed)})")
        return str(answer)
    if spec.kind == "regression":
        assert spec.scale is not None
        value = float(answer)
        if not spec.scale.min <= value <= spec.scale.max:
            raise UserError(f"a rating must be within {spec.scale.min}..{spec.scale.max}")
        return value
    if spec.kind == "multi_answer":
        ids = [a["idx"] for a in fields.get("answers", [])]
        if not isinstance(answer, dict) or sorted(answer) != sorted(ids):
            raise UserError("judge every candidate answer")
        values = set(spec.label_values())
        if any(v not in values for v in answer.values()):
            raise UserError(f"each judgement must be one of {sorted(values)}")
        return {k: answer[k] for k in ids}
    # entity_choice (ReCoRD)
    if answer not in fields.get("entities", []):
        raise UserError("choose one of the passage's entities")
    return answer


def is_correct(spec: TaskSpec, answer: Any, gold: Any) -> bool | None:
    """None when there is no gold to compare with."""
    if gold is None:
        return None
    if spec.kind == "classification":
        return spec.collapse(str(answer)) == gold
    if spec.kind == "regression":
        return abs(float(answer) - float(gold)) <= REGRESSION_TOLERANCE
    if spec.kind == "multi_answer":
        return all(answer.get(k) == v for k, v in gold.items())
    return answer in gold


def describe(spec: TaskSpec, value: Any) -> str:
    """A value as the annotator would read it."""
    if value is None:
        return "(none)"
    if spec.kind == "classification":
        return spec.label_text(str(value))
    if spec.kind == "regression":
        return f"{float(value):g}"
    if spec.kind == "multi_answer":
        # By the candidates' numbers on the screen (1, 2, 3 …), not their ids in the data
        # (803, 804 …): a judgement holds them in the item's order (validate_answer).
        return ", ".join(
            f"{n}: {spec.label_text(v)}" for n, v in enumerate(value.values(), start=1)
        )
    if isinstance(value, list):
        return " / ".join(value)
    return str(value)


class AnsweredDifferently(UserError):
    """A second answer to an item this annotator has already answered, with another value:
    not a retry (a retry resends the same value) but another tab of the same window, or this
    screen again after an answer whose reply was lost (the page said "not sent", yet it was
    stored). Nothing is stored; the first answer stands. The message names both places: the
    engine cannot tell them apart, and "another tab" alone misleads a one-tab worker."""

    def __init__(self, spec: TaskSpec, stored: Any, given: Any) -> None:
        super().__init__(
            f"This item was already answered, as “{describe(spec, stored)}” (sent earlier "
            f"from this screen, or from another tab or window): that answer stands, and this "
            f"one (“{describe(spec, given)}”) was not stored."
        )


def check_retry(spec: TaskSpec, stored: Any, given: Any) -> None:
    """A second answer to an answered item: a retry (the stored one stands, the caller
    resumes) when its value is the stored one, else AnsweredDifferently. Values compare in
    their stored (JSON) form: a MultiRC judgement's keys come back as strings."""
    if _stored_form(stored) != _stored_form(given):
        raise AnsweredDifferently(spec, stored, given)


def _stored_form(value: Any) -> Any:
    return json.loads(json.dumps(value))
