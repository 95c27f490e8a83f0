"""Flagged items and what the researcher did about them (for `annotate flags`, `status`, the
report and the console).

An annotator flags an item with a comment ("the premise is cut off"); the flag lives on the
label. The researcher can mark a flag resolved, or exclude the item from scoring (a broken
item) and include it again. Each of these is a `FlagAction` row with who, when and why; nothing
is ever deleted, so the log is the history. Excluded items are left out of the report's scores
and agreement (the report shows the score with and without them).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, Select, func, select, true
from sqlmodel import Session

from annotate.errors import UserError
from annotate.protocol.set_aside import SET_ASIDE
from annotate.protocol.studies import TEST, StudyContext
from annotate.store.engine import write_session
from annotate.store.models import Annotator, FlagAction, Item, Label, StudyItem, utcnow
from annotate.wording import shell_word

COMMENT_MAX_CHARS = 2000
"""The longest flag comment an annotator can type, on the page and in the terminal: a few
paragraphs, never a pasted file."""

OPEN = "open"
RESOLVED = "resolved"
EXCLUDED = "excluded"

RESOLVE = "resolve"
EXCLUDE = "exclude"
INCLUDE = "include"


@dataclass(frozen=True)
class FlagRow:
    """One flagged label with its item (fields verbatim: render them through the sanitiser)."""

    label_id: int
    item_id: int
    source_id: str
    annotator: str
    synthetic: bool
    phase: str
    comment: str | None
    fields: dict[str, Any]
    answered_at: datetime | None
    """None for a label imported from a file without times."""
    state: str
    """open | resolved | excluded (the item is excluded from scoring, whatever the flag)."""
    by: str | None
    """Who resolved the flag or excluded the item (None while open)."""
    reason: str | None
    at: datetime | None
    value: Any = None
    """What the annotator answered on the item (the stored label value; `answers.describe`
    words it as they read it): a flag often explains an answer."""

    @property
    def on_test_item(self) -> bool:
        """A flag on a test item (one whose label a refusal set aside too): excluding its item
        leaves it out of scoring, and the flag reads "excluded" then."""
        return self.phase in (TEST, SET_ASIDE)

    def as_dict(self) -> dict[str, Any]:
        return {
            "label_id": self.label_id,
            "item_id": self.item_id,
            "source_id": self.source_id,
            "annotator": self.annotator,
            "synthetic": self.synthetic,
            "phase": self.phase,
            "comment": self.comment,
            "value": self.value,
            "fields": self.fields,
            "answered_at": (
                self.answered_at.isoformat(timespec="seconds") if self.answered_at else None
            ),
            "state": self.state,
            "by": self.by,
            "reason": self.reason,
            "at": self.at.isoformat(timespec="seconds") if self.at else None,
        }


@dataclass(frozen=True)
class Exclusion:
    """A test item excluded from scoring: the latest exclude action of the item."""

    item_id: int
    source_id: str
    by: str
    reason: str
    at: datetime

    def as_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "source_id": self.source_id,
            "by": self.by,
            "reason": self.reason,
            "at": self.at.isoformat(timespec="seconds"),
        }


def excluded_items(session: Session, study_id: int) -> dict[int, Exclusion]:
    """Items whose latest exclude/include action is an exclude, by item id."""
    rows = session.execute(
        select(FlagAction, Item.source_id)
        .join(Item, Item.id == FlagAction.item_id)
        .where(FlagAction.study_id == study_id, FlagAction.action.in_([EXCLUDE, INCLUDE]))
        .order_by(FlagAction.id)
    ).all()
    latest: dict[int, tuple[FlagAction, str]] = {}
    for action, source_id in rows:
        latest[action.item_id] = (action, source_id)
    return {
        item_id: Exclusion(item_id, source_id, a.by, a.reason, a.at)
        for item_id, (a, source_id) in latest.items()
        if a.action == EXCLUDE
    }


def excluded_item_ids(engine: Engine, study_id: int) -> dict[int, Exclusion]:
    with Session(engine) as session:
        return excluded_items(session, study_id)


def flagged_labels(study_id: int) -> Select:
    """The study's flagged labels with their item and annotator, oldest first."""
    return (
        select(
            Label.id,
            Label.item_id,
            Item.source_id,
            Annotator.name,
            Annotator.synthetic,
            Label.phase,
            Label.comment,
            Item.fields,
            Label.answered_at,
            Label.value,
        )
        .join(Item, Item.id == Label.item_id)
        .join(Annotator, Annotator.id == Label.annotator_id)
        # `flag = 1` (not IS): the form the partial index ix_label_flagged is declared with
        .where(Label.study_id == study_id, Label.flag == true())
        .order_by(Label.answered_at, Label.id)
    )


def _flag_rows(session: Session, study_id: int) -> list[FlagRow]:
    labels = session.execute(flagged_labels(study_id)).all()
    if not labels:
        return []
    resolved: dict[int, FlagAction] = {}
    for action in session.scalars(
        select(FlagAction)
        .where(FlagAction.study_id == study_id, FlagAction.action == RESOLVE)
        .order_by(FlagAction.id)
    ):
        if action.label_id is not None:
            resolved[action.label_id] = action
    excluded = excluded_items(session, study_id)
    rows = []
    for label_id, item_id, source_id, name, synthetic, phase, comment, fields, at, value in labels:
        state, by, reason, when = OPEN, None, None, None
        # A test item's flag, also one its annotator's refusal set aside: still on that item.
        if (ex := excluded.get(item_id)) is not None and phase in (TEST, SET_ASIDE):
            state, by, reason, when = EXCLUDED, ex.by, ex.reason, ex.at
        elif (res := resolved.get(label_id)) is not None:
            state, by, reason, when = RESOLVED, res.by, res.reason, res.at
        rows.append(
            FlagRow(
                label_id,
                item_id,
                source_id,
                name,
                bool(synthetic),
                phase,
                comment,
                dict(fields or {}),
                at,
                state,
                by,
                reason,
                when,
                value=value,
            )
        )
    return rows


def list_flags(engine: Engine, study_id: int) -> list[FlagRow]:
    """Every flagged label of the study (training and test), oldest first."""
    with Session(engine) as session:
        return _flag_rows(session, study_id)


def flag_counts(session: Session, study_id: int) -> dict[str, int]:
    """Flags by state, plus the number of excluded items (for `status`)."""
    rows = _flag_rows(session, study_id)
    counts = {OPEN: 0, RESOLVED: 0, EXCLUDED: 0}
    for row in rows:
        counts[row.state] += 1
    return {
        "total": len(rows),
        **counts,
        "excluded_items": len(excluded_items(session, study_id)),
    }


def _reason(reason: str, by: str) -> tuple[str, str]:
    if not reason.strip():
        raise UserError("say why (--reason): the action is recorded with who, when and why")
    if not by.strip():
        raise UserError("say who acts (--by)")
    return reason.strip(), by.strip()


def resolve_flag(
    engine: Engine, ctx: StudyContext, label_id: int, *, by: str, reason: str
) -> FlagAction:
    """Mark one flag (a flagged label of this study) resolved."""
    reason, by = _reason(reason, by)
    with write_session(engine) as session:
        label = session.get(Label, label_id)
        if label is None or label.study_id != ctx.id or not label.flag:
            raise UserError(
                f"no flag {label_id} in study {ctx.study.name!r}; `annotate flags "
                f"{shell_word(ctx.study.name)}` lists them"
            )
        action = FlagAction(
            study_id=ctx.id,
            item_id=label.item_id,
            label_id=label_id,
            action=RESOLVE,
            by=by,
            reason=reason,
            at=utcnow(),
        )
        session.add(action)
        session.flush()
        session.expunge(action)
        return action


def find_test_item(engine: Engine, ctx: StudyContext, reference: str | int) -> int:
    """The item id of a test item of the study, given its source id (as in exports and the
    report) or, failing that, its item id."""
    text = str(reference).strip()
    with Session(engine) as session:
        in_study = select(StudyItem.item_id).join(Item, Item.id == StudyItem.item_id)
        in_study = in_study.where(StudyItem.study_id == ctx.id, StudyItem.phase == TEST)
        found = session.scalars(in_study.where(Item.source_id == text)).first()
        if found is None and text.isdigit():
            found = session.scalars(in_study.where(StudyItem.item_id == int(text))).first()
    if found is None:
        raise UserError(f"no test item {text!r} in study {ctx.study.name!r}")
    return int(found)


def _set_excluded(
    engine: Engine, ctx: StudyContext, item_id: int, exclude: bool, by: str, reason: str
) -> FlagAction:
    reason, by = _reason(reason, by)
    with write_session(engine) as session:
        in_test = session.scalar(
            select(func.count()).where(
                StudyItem.study_id == ctx.id,
                StudyItem.item_id == item_id,
                StudyItem.phase == TEST,
            )
        )
        item = session.get(Item, item_id)
        shown = item.source_id if item is not None else str(item_id)  # as tables name it
        if not in_test:
            raise UserError(
                f"item {shown} is not a test item of study {ctx.study.name!r}: only test "
                "items are scored"
            )
        now_excluded = item_id in excluded_items(session, ctx.id)
        if now_excluded == exclude:
            state = "excluded from" if exclude else "included in"
            raise UserError(f"item {shown} is already {state} scoring")
        action = FlagAction(
            study_id=ctx.id,
            item_id=item_id,
            action=EXCLUDE if exclude else INCLUDE,
            by=by,
            reason=reason,
            at=utcnow(),
        )
        session.add(action)
        session.flush()
        session.expunge(action)
        return action


def exclude_item(
    engine: Engine, ctx: StudyContext, item_id: int, *, by: str, reason: str
) -> FlagAction:
    """Leave a (broken) test item out of scoring and agreement, from now on."""
    return _set_excluded(engine, ctx, item_id, True, by, reason)


def include_item(
    engine: Engine, ctx: StudyContext, item_id: int, *, by: str, reason: str
) -> FlagAction:
    """Undo an exclusion: the item counts again."""
    return _set_excluded(engine, ctx, item_id, False, by, reason)


def flag_history(engine: Engine, study_id: int) -> list[dict[str, Any]]:
    """Every action on flags and items of the study, oldest first."""
    with Session(engine) as session:
        rows = session.execute(
            select(FlagAction, Item.source_id)
            .join(Item, Item.id == FlagAction.item_id)
            .where(FlagAction.study_id == study_id)
            .order_by(FlagAction.id)
        ).all()
    return [
        {
            "action": a.action,
            "item_id": a.item_id,
            "source_id": source_id,
            "label_id": a.label_id,
            "by": a.by,
            "reason": a.reason,
            "at": a.at.isoformat(timespec="seconds"),
        }
        for a, source_id in rows
    ]
