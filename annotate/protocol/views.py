"""What the annotator's screen is given: the item shown (never its gold label) and the
feedback after a training answer. The session and the catch stream (`catch`) both build them,
so they live below both."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class ItemView:
    """An item as the annotator sees it (never its gold label)."""

    item_id: int
    source_id: str
    phase: str
    fields: dict[str, Any]
    number: int
    """1-based number of this item among the annotator's items in the phase (in a refresher
    round: in the round)."""
    shown_at: datetime
    refresher: bool = False
    """A training item again, in a refresher round (catch_action "pause"; see catch.py)."""


@dataclass(frozen=True)
class Feedback:
    """What the annotator learns after a training answer (nothing after a test answer)."""

    correct: bool | None
    gold: Any
    gold_text: str
    answer_text: str
    explanation: str | None
    training_done: int
    training_accuracy: float
    gate_decided: bool | None
    """True/False when this answer triggered an admission/refusal (threshold rule)."""
    upcoming: ItemView | None = None
    """The item that comes after this feedback, read in the answer's transaction: the next
    training item, or the first test item (leased) when this answer admitted the annotator;
    None when what comes next is for "continue" to ask (a gate still to decide, catch items)
    or for a feedback given again. For a front end that has it ready when "continue" is
    pressed. Its `shown_at` is the feedback's time; the front end moves it to when the item
    was shown."""


def label_row(
    study_id: int,
    annotator_id: int,
    item: ItemView,
    phase: str,
    value: Any,
    correct: bool | None,
    answered_at: datetime,
    flag: bool,
    comment: str | None,
) -> dict[str, Any]:
    """The stored form of an answer to a shown item (a `Label` row): the one place it is
    written, for training, test, catch and refresher answers alike."""
    return {
        "study_id": study_id,
        "item_id": item.item_id,
        "annotator_id": annotator_id,
        "phase": phase,
        "value": value,
        "correct": correct,
        "shown_at": item.shown_at,
        "answered_at": answered_at,
        "flag": flag,
        "comment": comment,
        "revisions": 0,
    }
