"""The form's answer in the engine's terms."""

from __future__ import annotations

from typing import Any

from annotate.errors import UserError
from annotate.protocol.session import AnnotatorSession, ItemView


def parse_answer(session: AnnotatorSession, item: ItemView, form: dict[str, str]) -> Any:
    """The form's answer in the engine's terms. Choices travel as positions (an entity or a
    candidate shown after sanitising may differ from the stored text); the session validates."""
    spec = session.spec
    if spec.kind == "multi_answer":
        answers = [a for a in item.fields.get("answers", []) if isinstance(a, dict)]
        judged = {}
        for n, candidate in enumerate(answers, start=1):
            value = form.get(f"j{n}")
            if value:
                judged[candidate["idx"]] = value
        left = len(answers) - len(judged)
        if left:
            raise UserError(f"Judge every answer first ({left} left).")
        return judged
    if spec.kind == "entity_choice":
        entities = list(item.fields.get("entities", []))
        try:
            number = int(form.get("entity", ""))
        except ValueError:
            number = 0
        if not 1 <= number <= len(entities):  # 0 or -1 would index from the end
            raise UserError("Choose one of the entities.")
        return entities[number - 1]
    value = form.get("answer", "")
    if not value:
        raise UserError("Choose an answer.")
    return value


def previous_of(session: AnnotatorSession, item: ItemView) -> Any:
    """The annotator's earlier answer to `item`, when it is the one being revised."""
    try:
        last = session.last_answer()
    except UserError:  # the answers stand now: nothing is being revised
        return None
    return last[1] if last is not None and last[0].item_id == item.item_id else None
