"""Second opinions: blind reviews of other curators' examples, the disagreement queue, and the
decisions that settle it.

Blindness is by construction: a reviewer gets a `BlindExample`, which holds the sentences and
nothing else, so no screen built from it can show the author's label, tags, note or name.

An example is in the disagreement queue while a review newer than its last decision disagrees
with its current label or tag set. Its author settles it, or an adjudicator: anyone who neither
wrote nor reviewed it (a reviewer does not get to overrule the author on their own say).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sqlalchemy import Engine, func
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from annotate.curation.examples import ExampleView, change_example, example_row
from annotate.curation.sets import SetInfo, set_row
from annotate.curation.taxonomy import Tags, flat, group_tags
from annotate.curation.validation import DraftInvalid, label_problem, tag_problems
from annotate.errors import UserError
from annotate.store.curation_models import CurationDecision, CurationExample, CurationReview
from annotate.store.engine import write_session


@dataclass(frozen=True)
class BlindExample:
    """What a reviewer sees: the two sentences, no label, tags, note or author."""

    id: int
    premise: str
    hypothesis: str


@dataclass(frozen=True)
class ReviewProgress:
    done: int
    """Reviews this reviewer gave in the set."""
    remaining: int
    """Examples by others still waiting for this reviewer."""


def _active(set_id: int):
    return select(CurationExample).where(
        CurationExample.set_id == set_id,
        CurationExample.retired == False,  # noqa: E712
    )


def _open_for(session: Session, set_id: int, reviewer: str) -> list[CurationExample]:
    """Examples `reviewer` may still review: by others, active, not reviewed by them yet;
    those with the fewest reviews first (coverage grows evenly), then in set order."""
    counts = dict(
        session.exec(
            select(CurationReview.example_id, func.count())
            .join(CurationExample, CurationReview.example_id == CurationExample.id)
            .where(CurationExample.set_id == set_id)
            .group_by(CurationReview.example_id)
        ).all()
    )
    mine = set(
        session.exec(
            select(CurationReview.example_id)
            .join(CurationExample, CurationReview.example_id == CurationExample.id)
            .where(CurationExample.set_id == set_id, CurationReview.reviewer == reviewer)
        ).all()
    )
    rows = session.exec(
        _active(set_id).where(CurationExample.author != reviewer).order_by(CurationExample.position)
    ).all()
    waiting = [row for row in rows if row.id not in mine]
    return sorted(waiting, key=lambda row: (counts.get(row.id, 0), row.position))


def next_for_review(
    engine: Engine, set_name: str, reviewer: str, skip: Collection[int] = ()
) -> BlindExample | None:
    """The next example for `reviewer` (those in `skip` left for later), or None."""
    with Session(engine) as session:
        info = SetInfo.of(set_row(session, set_name))
        for row in _open_for(session, info.id, reviewer):
            if row.id not in skip:
                assert row.id is not None
                return BlindExample(row.id, row.premise, row.hypothesis)
        return None


def review_progress(engine: Engine, set_name: str, reviewer: str) -> ReviewProgress:
    with Session(engine) as session:
        info = SetInfo.of(set_row(session, set_name))
        done = session.exec(
            select(func.count())
            .select_from(CurationReview)
            .join(CurationExample, CurationReview.example_id == CurationExample.id)
            .where(CurationExample.set_id == info.id, CurationReview.reviewer == reviewer)
        ).one()
        return ReviewProgress(done, len(_open_for(session, info.id, reviewer)))


def _checked(info: SetInfo, label: str | None, tags: Sequence[str]) -> Tags:
    problems = label_problem(label, info.labels, "label", "the example")
    problems += tag_problems(list(tags))
    if problems:
        raise DraftInvalid(problems)
    return group_tags(tags)


def submit_review(
    engine: Engine,
    set_name: str,
    reviewer: str,
    example_id: int,
    label: str | None,
    tags: Sequence[str],
    note: str = "",
) -> None:
    """Store `reviewer`'s independent label and tags for an example by someone else."""
    with write_session(engine) as session:
        info = SetInfo.of(set_row(session, set_name))
        chosen = _checked(info, label, tags)
        row = example_row(session, info.id, example_id)
        if row.author == reviewer:
            raise UserError("you wrote this example: a second opinion must come from someone else")
        if row.retired:
            raise UserError(f"example {example_id} is retired")
        existing = session.exec(
            select(CurationReview).where(
                CurationReview.example_id == example_id, CurationReview.reviewer == reviewer
            )
        ).first()
        if existing is not None:
            raise UserError(f"you reviewed example {example_id} already")
        assert label is not None
        session.add(
            CurationReview(
                example_id=example_id,
                reviewer=reviewer,
                label=label,
                tags=chosen,
                note=note.strip(),
                example_version=row.version,
            )
        )
        try:
            session.flush()  # two submissions racing (PostgreSQL): the unique constraint decides
        except IntegrityError:
            raise UserError(f"you reviewed example {example_id} already") from None


# --- the disagreement queue -------------------------------------------------------------------


@dataclass(frozen=True)
class Opinion:
    who: str
    role: str
    """Either author (the example as it stands now) or reviewer."""
    label: str
    tags: list[str]
    note: str = ""


@dataclass(frozen=True)
class QueueEntry:
    example: ExampleView
    opinions: list[Opinion]
    disputed: list[str]
    """What the open reviews dispute: "label", "tags" or both."""
    reviewers: list[str]

    def may_settle(self, person: str) -> bool:
        return may_settle(self.example.author, self.reviewers, person)


def may_settle(author: str, reviewers: Collection[str], person: str) -> bool:
    """The author settles their example; otherwise someone who took no part in it."""
    return person == author or person not in reviewers


def _disputes(row: CurationExample, review: CurationReview) -> list[str]:
    out = []
    if review.label != row.label:
        out.append("label")
    if set(flat(review.tags)) != set(flat(row.tags)):
        out.append("tags")
    return out


def _queue(session: Session, set_id: int) -> list[QueueEntry]:
    reviews: dict[int, list[CurationReview]] = defaultdict(list)
    for review in session.exec(
        select(CurationReview)
        .join(CurationExample, CurationReview.example_id == CurationExample.id)
        .where(CurationExample.set_id == set_id)
        .order_by(CurationReview.id)
    ):
        reviews[review.example_id].append(review)
    covered = dict(
        session.exec(
            select(CurationDecision.example_id, func.max(CurationDecision.covers_review_id))
            .join(CurationExample, CurationDecision.example_id == CurationExample.id)
            .where(CurationExample.set_id == set_id)
            .group_by(CurationDecision.example_id)
        ).all()
    )
    entries = []
    for row in session.exec(_active(set_id).order_by(CurationExample.position)):
        assert row.id is not None
        disputed: set[str] = set()
        for review in reviews.get(row.id, []):
            assert review.id is not None
            if review.id > covered.get(row.id, 0):
                disputed.update(_disputes(row, review))
        if not disputed:
            continue
        opinions = [Opinion(row.author, "author", row.label, flat(row.tags), row.note)]
        opinions += [
            Opinion(r.reviewer, "reviewer", r.label, flat(r.tags), r.note) for r in reviews[row.id]
        ]
        entries.append(
            QueueEntry(
                ExampleView.of(row),
                opinions,
                [d for d in ("label", "tags") if d in disputed],
                [r.reviewer for r in reviews[row.id]],
            )
        )
    return entries


def disagreement_queue(
    engine: Engine, set_name: str, person: str | None = None
) -> list[QueueEntry]:
    """Examples whose reviews disagree with them and are not settled yet, in set order; with
    `person`, only those that person may settle."""
    with Session(engine) as session:
        info = SetInfo.of(set_row(session, set_name))
        entries = _queue(session, info.id)
    if person is not None:
        entries = [e for e in entries if e.may_settle(person)]
    return entries


def settle(
    engine: Engine,
    set_name: str,
    example_id: int,
    person: str,
    label: str | None,
    tags: Sequence[str],
    note: str = "",
) -> ExampleView:
    """Decide the final label and tags of a disputed example. The example's earlier values stay
    in its history (reason "adjudication"); the decision records who settled it and which
    reviews it took into account."""
    with write_session(engine) as session:
        info = SetInfo.of(set_row(session, set_name))
        chosen = _checked(info, label, tags)
        entry = next((e for e in _queue(session, info.id) if e.example.id == example_id), None)
        if entry is None:
            raise UserError(f"example {example_id} has no open disagreement")
        if not entry.may_settle(person):
            raise UserError(
                f"{person} reviewed example {example_id}: its author "
                f"({entry.example.author}) or someone who took no part settles it"
            )
        row = example_row(session, info.id, example_id)
        values: dict[str, object] = {}
        if label != row.label:
            values["label"] = label
        if set(flat(chosen)) != set(flat(row.tags)):  # same tags in another order: no change
            values["tags"] = chosen
        if values:
            change_example(session, row, person, "adjudication", values, note.strip())
        last_review = session.exec(
            select(func.max(CurationReview.id)).where(CurationReview.example_id == example_id)
        ).one()
        assert label is not None and last_review is not None
        session.add(
            CurationDecision(
                example_id=example_id,
                decided_by=person,
                label=label,
                tags=chosen,
                note=note.strip(),
                covers_review_id=last_review,
            )
        )
        session.flush()
        return ExampleView.of(row)
