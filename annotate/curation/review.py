"""Second opinions: blind reviews of other curators' examples, the disagreement queue, and the
decisions that settle it.

Blindness is by construction: a reviewer gets a `BlindExample`, which holds the sentences and
the version they are shown at, nothing else, so no screen built from it can show the author's
label, tags, note or name. A review is stored as a review of the version shown, and refused
when the sentences changed since.

Only current reviews count: a review of sentences that were edited since is stale (kept, but
out of the queue and the agreement figures), and the example goes back to reviewers as changed
work. An example is in the disagreement queue while a current review newer than its last
decision disagrees with its current label or tag set. An adjudicator settles it: anyone who
neither wrote nor reviewed it (a reviewer does not get to overrule the author on their own say,
nor the author the reviewers). The author may settle it only with a recorded override reason
(a set with a single curator, say), kept with the decision.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, func
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from annotate.curation.curators import stored_name
from annotate.curation.examples import (
    ExampleView,
    change_example,
    example_row,
    pair_partner,
    tag_test,
)
from annotate.curation.sets import SetInfo, set_row
from annotate.curation.validation import (
    DraftInvalid,
    curator_key,
    curator_name,
    label_problem,
    tag_problems,
)
from annotate.errors import UserError
from annotate.store.curation_models import (
    CurationDecision,
    CurationExample,
    CurationReview,
    CurationSkip,
)
from annotate.store.engine import write_session
from annotate.store.models import utcnow
from annotate.taxonomy import Tags, flat, group_tags


class ExampleChanged(UserError):
    """The example changed since the screen showed it (an edit, or for a decision a new review
    of it): a decision or review made on what was shown would be stored against what was not.
    The screen shows it again."""

    def __init__(
        self, example_id: int, version: int, new_reviews: int = 0, happened: str = ""
    ) -> None:
        self.example_id = example_id
        self.version = version
        self.new_reviews = new_reviews
        """Reviews the screen did not show (0: the example itself changed)."""
        self.happened = happened
        """What someone else did that left nothing to judge ("retired", "settled"): the screen
        says it and moves on."""
        super().__init__(f"example {example_id} {self.change}: look again")

    @property
    def change(self) -> str:
        """What changed, as the screen says it ("changed since you opened it (now version 2)")."""
        if self.happened:
            return f"was {self.happened} since you opened it"
        if self.new_reviews:
            what = "a new review" if self.new_reviews == 1 else f"{self.new_reviews} new reviews"
            return f"has {what} since you opened it"
        return f"changed since you opened it (now version {self.version})"


@dataclass(frozen=True)
class BlindExample:
    """What a reviewer sees: the two sentences, no label, tags, note or author."""

    id: int
    premise: str
    hypothesis: str
    version: int
    """The example's version when it was shown: the review is stored as a review of it, and
    refused when the sentences changed since (the reviewer never saw the new ones)."""

    @classmethod
    def of(cls, row: CurationExample) -> BlindExample:
        assert row.id is not None
        return cls(row.id, row.premise, row.hypothesis, row.version)


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


def current_reviews(session: Session, set_id: int) -> dict[int, list[CurationReview]]:
    """The reviews of the set's examples that judged their current sentences, oldest first,
    by example. A review of sentences since edited is stale: kept, but not counted."""
    reviews: dict[int, list[CurationReview]] = defaultdict(list)
    for review in session.exec(
        select(CurationReview)
        .join(CurationExample, CurationReview.example_id == CurationExample.id)
        .where(
            CurationExample.set_id == set_id,
            CurationReview.example_version >= CurationExample.sentences_version,
        )
        .order_by(CurationReview.id)
    ):
        reviews[review.example_id].append(review)
    return reviews


@dataclass(frozen=True)
class ReviewFilter:
    """Which examples a reviewer asks for; all given ones must hold."""

    author: str | None = None
    since: datetime | None = None
    """Written or changed (sentences) at or after this time."""
    tag: str | None = None
    """A fine tag, or a coarse category (any tag in it)."""

    def __post_init__(self) -> None:
        if self.author is not None:  # " lea " and "LEA" ask for lea's examples
            object.__setattr__(self, "author", curator_name(self.author))

    def words(self) -> str:
        """The filter as a curator would say it ("by sam, tagged Negation"); "" for none."""
        parts = [f"by {self.author}"] if self.author is not None else []
        if self.tag is not None:
            parts.append(f"tagged {self.tag}")
        if self.since is not None:
            parts.append(f"written since {self.since:%Y-%m-%d %H:%M}")
        return ", ".join(parts)

    def matches(self, row: CurationExample) -> bool:
        if self.author is not None and curator_key(row.author) != curator_key(self.author):
            return False
        if self.since is not None and _stamp(work_time(row)) < _stamp(self.since):
            return False
        return self.tag is None or tag_test(self.tag)(row.tags)


def work_time(row: CurationExample) -> datetime:
    """When the example's current sentences were written: authored, imported or edited."""
    return row.sentences_changed_at or row.created_at


def is_new_work(row: CurationExample) -> bool:
    """Written in the tool, or its sentences changed since it was written or imported."""
    return row.origin == "authored" or row.sentences_version > 1


def _stamp(moment: datetime) -> float:
    # SQLite gives back naive datetimes (stored as UTC); PostgreSQL aware ones.
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def _open_for(
    session: Session,
    set_id: int,
    reviewer: str,
    current: dict[int, list[CurationReview]],
    wanted: ReviewFilter = ReviewFilter(),
) -> list[CurationExample]:
    """Examples `reviewer` may still review (by others, active, no current review by them),
    in the order they are served:
    1. new and changed work (see `is_new_work`), newest first: it is what needs eyes;
    2. the rest, those with the fewest reviews first (coverage grows evenly), in set order;
    3. examples the reviewer skipped (in any session) since they last changed, oldest skip first.
    `current`: the set's `current_reviews`.
    """
    mine = {i for i, reviews in current.items() if any(r.reviewer == reviewer for r in reviews)}
    skipped = dict(
        session.exec(
            select(CurationSkip.example_id, CurationSkip.skipped_at)
            .join(CurationExample, CurationSkip.example_id == CurationExample.id)
            .where(CurationExample.set_id == set_id, CurationSkip.reviewer == reviewer)
        ).all()
    )
    rows = session.exec(
        _active(set_id).where(CurationExample.author != reviewer).order_by(CurationExample.position)
    ).all()

    # Newest first by pair: both directions were written (or edited) together, microseconds
    # apart, and are served in set order.
    pair_time: dict[object, float] = {}
    for row in rows:
        key = ("pair", row.pair_id) if row.pair_id is not None else row.id
        pair_time[key] = min(pair_time.get(key, float("inf")), _stamp(work_time(row)))

    def order(row: CurationExample) -> tuple[int, float, int]:
        skip = skipped.get(row.id)
        if skip is not None and _stamp(skip) >= _stamp(work_time(row)):
            return (2, _stamp(skip), row.position)
        if is_new_work(row):
            key = ("pair", row.pair_id) if row.pair_id is not None else row.id
            return (0, -pair_time[key], row.position)
        return (1, len(current.get(row.id or 0, [])), row.position)

    waiting = [row for row in rows if row.id not in mine and wanted.matches(row)]
    return sorted(waiting, key=order)


def next_for_review(
    engine: Engine,
    set_name: str,
    reviewer: str,
    skip: Collection[int] = (),
    wanted: ReviewFilter = ReviewFilter(),
) -> BlindExample | None:
    """The next example for `reviewer` (those in `skip` left for later), or None."""
    return next_with_progress(engine, set_name, reviewer, skip, wanted)[0]


def next_with_progress(
    engine: Engine,
    set_name: str,
    reviewer: str,
    skip: Collection[int] = (),
    wanted: ReviewFilter = ReviewFilter(),
) -> tuple[BlindExample | None, ReviewProgress]:
    """`next_for_review` and `review_progress` from one read of the set (each reads every
    example and review of it): the review screen asks both after every submission."""
    reviewer = curator_name(reviewer)
    with Session(engine) as session:
        reviewer = stored_name(session, reviewer)
        info = SetInfo.of(set_row(session, set_name))
        current = current_reviews(session, info.id)
        waiting = _open_for(session, info.id, reviewer, current, wanted)
        found = next((BlindExample.of(row) for row in waiting if row.id not in skip), None)
        return found, ReviewProgress(_done(current, reviewer), len(waiting))


def _done(current: dict[int, list[CurationReview]], reviewer: str) -> int:
    """Current reviews `reviewer` gave in the set."""
    return sum(r.reviewer == reviewer for reviews in current.values() for r in reviews)


def blind_example(
    engine: Engine, set_name: str, reviewer: str, example_id: int
) -> BlindExample | None:
    """The example as it is now, to show `reviewer` again (its sentences changed while it was
    on their screen); None when it is no longer theirs to review (retired, their own, or
    reviewed by them already)."""
    reviewer = curator_name(reviewer)
    with Session(engine) as session:
        reviewer = stored_name(session, reviewer)
        info = SetInfo.of(set_row(session, set_name))
        row = example_row(session, info.id, example_id)
        if row.retired or row.author == reviewer or _current_review(session, row, reviewer):
            return None
        return BlindExample.of(row)


def _current_review(session: Session, row: CurationExample, reviewer: str) -> CurationReview | None:
    """The reviewer's review of the example's current sentences, if they gave one."""
    return session.exec(
        select(CurationReview).where(
            CurationReview.example_id == row.id,
            CurationReview.reviewer == reviewer,
            CurationReview.example_version >= row.sentences_version,
        )
    ).first()


def skip_for_review(engine: Engine, set_name: str, reviewer: str, example_id: int) -> None:
    """Remember that `reviewer` passed over the example: it goes to the back of their queue,
    in later sessions too, until it changes."""
    reviewer = curator_name(reviewer)
    with write_session(engine) as session:
        reviewer = stored_name(session, reviewer)
        info = SetInfo.of(set_row(session, set_name))
        example_row(session, info.id, example_id)
        found = session.exec(
            select(CurationSkip).where(
                CurationSkip.example_id == example_id, CurationSkip.reviewer == reviewer
            )
        ).first()
        if found is None:
            found = CurationSkip(example_id=example_id, reviewer=reviewer)
        found.skipped_at = utcnow()  # skipped again: to the very back
        session.add(found)


def review_progress(
    engine: Engine, set_name: str, reviewer: str, wanted: ReviewFilter = ReviewFilter()
) -> ReviewProgress:
    return next_with_progress(engine, set_name, reviewer, (), wanted)[1]


def _checked(
    info: SetInfo, label: str | None, tags: Sequence[str], check_tags: bool = True
) -> Tags:
    problems = label_problem(label, info.labels, "label", "the example")
    if check_tags:
        problems += tag_problems(list(tags))
    if problems:
        raise DraftInvalid(problems)
    return group_tags(tags)


def _partner_review(session: Session, row: CurationExample, reviewer: str) -> CurationReview | None:
    """The reviewer's current review of the other direction of the example's pair: tags
    belong to the pair, so that review already gave this direction's tags."""
    partner = pair_partner(session, row)
    return None if partner is None else _current_review(session, partner, reviewer)


def pair_tags_reviewed(engine: Engine, set_name: str, reviewer: str, example_id: int) -> int | None:
    """The example whose review by `reviewer` already tagged this example's pair, or None
    (the review screen then asks for a label only)."""
    reviewer = curator_name(reviewer)
    with Session(engine) as session:
        reviewer = stored_name(session, reviewer)
        info = SetInfo.of(set_row(session, set_name))
        found = _partner_review(session, example_row(session, info.id, example_id), reviewer)
        return None if found is None else found.example_id


def submit_review(
    engine: Engine,
    set_name: str,
    reviewer: str,
    example_id: int,
    label: str | None,
    tags: Sequence[str],
    note: str = "",
    *,
    version: int | None = None,
) -> None:
    """Store `reviewer`'s independent label and tags for an example by someone else. Tags
    belong to the pair: once the reviewer tagged one direction, the other's review takes
    those tags (pass none) and judges its label only.

    `version` is the version of the example the reviewer judged (a screen passes the one it
    showed, `BlindExample.version`): the review is stored as a review of that version, and
    refused (`ExampleChanged`) when the sentences changed since, since the reviewer never saw
    the new ones. None: the caller has just read the example."""
    reviewer = curator_name(reviewer)
    with write_session(engine) as session:
        reviewer = stored_name(session, reviewer)
        info = SetInfo.of(set_row(session, set_name))
        row = example_row(session, info.id, example_id)
        if version is not None and row.retired:  # retired while on the reviewer's screen
            raise ExampleChanged(example_id, row.version, happened="retired")
        if version is not None and row.sentences_version > version:
            raise ExampleChanged(example_id, row.version)
        tagged = _partner_review(session, row, reviewer)
        if tagged is not None and tags and set(tags) != set(flat(tagged.tags)):
            raise UserError(
                f"you tagged this pair already (example {tagged.example_id}): tags belong to "
                "the pair, so this direction takes a label only"
            )
        chosen = _checked(info, label, tags, check_tags=tagged is None)
        if tagged is not None:
            chosen = dict(tagged.tags)
        if row.author == reviewer:
            raise UserError("you wrote this example: a second opinion must come from someone else")
        if row.retired:
            raise UserError(f"example {example_id} is retired")
        if _current_review(session, row, reviewer) is not None:
            raise UserError(f"you reviewed example {example_id} already")
        row.label_unchecked = False  # a second opinion on these sentences checks the label
        session.add(row)
        assert label is not None
        session.add(
            CurationReview(
                example_id=example_id,
                reviewer=reviewer,
                label=label,
                tags=chosen,
                note=note.strip(),
                example_version=row.version if version is None else version,
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
    review_ids: tuple[int, ...] = ()
    """The reviews whose opinions the entry shows: a decision made on it covers these, and is
    refused when another one arrived since (`settle`'s `reviews_seen`)."""

    def may_settle(self, person: str, override: bool = False) -> bool:
        return may_settle(self.example.author, self.reviewers, person, override)


def may_settle(
    author: str, reviewers: Collection[str], person: str, override: bool = False
) -> bool:
    """Someone who took no part in the example settles it; its author only with an override
    (a reason, recorded with the decision)."""
    if person in reviewers:
        return False
    return person != author or override


def _tag_homes(rows: Sequence[CurationExample]) -> dict[int, list[int]]:
    """Where each pair's tags are disputed and settled: its first direction (lowest id), with
    the ids of both directions. Tags belong to the pair, so they are judged there once."""
    pairs: dict[int, list[int]] = defaultdict(list)
    for row in rows:
        if row.pair_id is not None and row.id is not None:
            pairs[row.pair_id].append(row.id)
    homes = {}
    for row in rows:
        assert row.id is not None
        ids = sorted(pairs[row.pair_id]) if row.pair_id is not None else [row.id]
        if ids[0] == row.id:
            homes[row.id] = ids
    return homes


def _queue(session: Session, set_id: int) -> list[QueueEntry]:
    reviews = current_reviews(session, set_id)  # stale reviews dispute nothing
    covered = dict(
        session.exec(
            select(CurationDecision.example_id, func.max(CurationDecision.covers_review_id))
            .join(CurationExample, CurationDecision.example_id == CurationExample.id)
            .where(CurationExample.set_id == set_id)
            .group_by(CurationDecision.example_id)
        ).all()
    )
    rows = session.exec(_active(set_id).order_by(CurationExample.position)).all()
    homes = _tag_homes(rows)
    entries = []
    for row in rows:
        assert row.id is not None
        since = covered.get(row.id, 0)
        own = reviews.get(row.id, [])
        disputed: set[str] = set()
        if any(r.label != row.label for r in own if (r.id or 0) > since):
            disputed.add("label")
        others: list[CurationReview] = []  # reviews of the reverse direction (tags only)
        if row.id in homes:
            others = [r for i in homes[row.id] if i != row.id for r in reviews.get(i, [])]
            tags = set(flat(row.tags))
            if any(set(flat(r.tags)) != tags for r in own + others if (r.id or 0) > since):
                disputed.add("tags")
        if not disputed:
            continue
        opinions = [Opinion(row.author, "author", row.label, flat(row.tags), row.note)]
        opinions += [Opinion(r.reviewer, "reviewer", r.label, flat(r.tags), r.note) for r in own]
        if "tags" in disputed:
            opinions += [
                Opinion(r.reviewer, "reviewer of the reverse direction", r.label, flat(r.tags))
                for r in others
            ]
        shown = own + (others if "tags" in disputed else [])
        taking_part = [r.reviewer for r in own]
        if "tags" in disputed:
            taking_part += [r.reviewer for r in others if r.reviewer not in taking_part]
        entries.append(
            QueueEntry(
                ExampleView.of(row),
                opinions,
                [d for d in ("label", "tags") if d in disputed],
                taking_part,
                tuple(r.id for r in shown if r.id is not None),
            )
        )
    return entries


def _pair_ids(session: Session, row: CurationExample) -> list[int]:
    partner = pair_partner(session, row)
    assert row.id is not None
    return [row.id] + ([partner.id] if partner is not None and partner.id is not None else [])


def disagreement_queue(
    engine: Engine, set_name: str, person: str | None = None, *, override: bool = False
) -> list[QueueEntry]:
    """Examples whose reviews disagree with them and are not settled yet, in set order; with
    `person`, only those that person may settle (their own ones too with `override`)."""
    person = curator_name(person) if person is not None else None
    with Session(engine) as session:
        info = SetInfo.of(set_row(session, set_name))
        entries = _queue(session, info.id)
        if person is not None:
            person = stored_name(session, person)
    if person is not None:
        entries = [e for e in entries if e.may_settle(person, override)]
    return entries


def _settled_since(session: Session, example_id: int, reviews_seen: Collection[int]) -> bool:
    """Whether someone's decision already covers every review a screen showed."""
    newest = max(reviews_seen, default=0)
    covered = session.exec(
        select(func.max(CurationDecision.covers_review_id)).where(
            CurationDecision.example_id == example_id
        )
    ).one()
    return covered is not None and covered >= newest


def settle(
    engine: Engine,
    set_name: str,
    example_id: int,
    person: str,
    label: str | None,
    tags: Sequence[str],
    note: str = "",
    override_reason: str = "",
    *,
    version: int | None = None,
    reviews_seen: Collection[int] | None = None,
) -> ExampleView:
    """Decide the final label and tags of a disputed example. The example's earlier values stay
    in its history (reason "adjudication"); the decision records who settled it and which
    reviews it took into account. Its author is refused unless `override_reason` says why
    nobody else settles it; the reason is stored with the decision.

    `version` is the version of the example the decision was made on (a screen passes the one
    it showed): if the example changed since, nothing is decided (`ExampleChanged`), so that an
    edit made meanwhile is never undone by values chosen before it. `reviews_seen` are the
    reviews the screen showed (`QueueEntry.review_ids`): a review given since is a change too
    (`ExampleChanged` with `new_reviews`), since the decision would cover an opinion the
    adjudicator never read. A review leaves the example's version alone, so that two
    curators' reviews never refuse each other; only a decision checks for them. None: the
    caller has just read the example and its reviews."""
    person = curator_name(person)
    with write_session(engine) as session:
        person = stored_name(session, person)
        info = SetInfo.of(set_row(session, set_name))
        current = example_row(session, info.id, example_id)
        if version is not None and current.version != version:
            raise ExampleChanged(
                example_id, current.version, happened="retired" if current.retired else ""
            )
        chosen = _checked(info, label, tags)
        entry = next((e for e in _queue(session, info.id) if e.example.id == example_id), None)
        unseen = (
            []
            if reviews_seen is None or entry is None
            else sorted(set(entry.review_ids) - set(reviews_seen))
        )
        if unseen:
            raise ExampleChanged(example_id, current.version, new_reviews=len(unseen))
        if (
            entry is None
            and reviews_seen is not None
            and _settled_since(session, example_id, reviews_seen)
        ):
            # Another adjudicator settled it while it was on this screen: say so, move on.
            raise ExampleChanged(example_id, current.version, happened="settled")
        if entry is None:
            raise UserError(f"example {example_id} has no open disagreement")
        override = override_reason.strip()
        if person == entry.example.author and not override:
            raise UserError(
                f"{person} wrote example {example_id}: someone who neither wrote nor reviewed "
                "it settles it, or its author with an override reason (--override REASON)"
            )
        if not entry.may_settle(person, bool(override)):
            raise UserError(
                f"{person} reviewed example {example_id}: someone who took no part settles it"
            )
        row = example_row(session, info.id, example_id)
        values: dict[str, object] = {}
        if label != row.label:
            values["label"] = label
        if set(flat(chosen)) != set(flat(row.tags)):  # same tags in another order: no change
            home = min(_pair_ids(session, row))
            if home != example_id:
                raise UserError(
                    f"the tags of example {example_id}'s pair are settled on example {home}, "
                    "its first direction: settle its label here"
                )
            values["tags"] = chosen
        if values:
            change_example(session, row, person, "adjudication", values, note.strip())
        partner = pair_partner(session, row)
        if "tags" in values and partner is not None:  # the pair's tags: both directions
            change_example(session, partner, person, "adjudication", {"tags": chosen}, note.strip())
            session.add(partner)
        row.label_unchecked = False  # the decision settles the label
        session.add(row)
        # The newest review the decision took into account: of those the entry shows (the
        # current reviews of the example, and of its pair's other direction when the tags are
        # disputed: a pair's tags are settled on its first direction, over the reviews of both).
        # A review given after it, even while this decision is written, reopens the example if
        # it disagrees.
        last_review = max(entry.review_ids)
        assert label is not None
        session.add(
            CurationDecision(
                example_id=example_id,
                decided_by=person,
                label=label,
                tags=chosen,
                note=note.strip(),
                covers_review_id=last_review,
                override_reason=override if person == entry.example.author else None,
            )
        )
        session.flush()
        return ExampleView.of(row)


# --- one example's reviews ---------------------------------------------------------------------


@dataclass(frozen=True)
class ReviewView:
    reviewer: str
    label: str
    tags: list[str]
    note: str
    example_version: int
    """The version the reviewer saw."""
    stale: bool
    """The sentences changed after this review: it no longer counts."""
    created_at: datetime

    def as_dict(self) -> dict[str, object]:
        out = dict(self.__dict__)
        out["created_at"] = self.created_at.isoformat(timespec="seconds")
        return out


def example_reviews(engine: Engine, set_name: str, example_id: int) -> list[ReviewView]:
    """Every review of the example, oldest first, stale ones included and marked."""
    with Session(engine) as session:
        info = SetInfo.of(set_row(session, set_name))
        row = example_row(session, info.id, example_id)
        reviews = session.exec(
            select(CurationReview)
            .where(CurationReview.example_id == example_id)
            .order_by(CurationReview.id)
        ).all()
        return [
            ReviewView(
                reviewer=r.reviewer,
                label=r.label,
                tags=flat(r.tags),
                note=r.note,
                example_version=r.example_version,
                stale=r.example_version < row.sentences_version,
                created_at=r.created_at,
            )
            for r in reviews
        ]


# --- one example's adjudications ---------------------------------------------------------------


@dataclass(frozen=True)
class DecisionView:
    """How a disagreement on the example was settled: who, to what, and why. Kept apart from
    the history because a decision that keeps the author's label changes no version."""

    decided_by: str
    label: str
    tags: list[str]
    note: str
    override_reason: str | None
    """Why the example's author settled it, when they did."""
    decided_at: datetime

    def as_dict(self) -> dict[str, object]:
        out = dict(self.__dict__)
        out["decided_at"] = self.decided_at.isoformat(timespec="seconds")
        return out


def example_decisions(engine: Engine, set_name: str, example_id: int) -> list[DecisionView]:
    """Every adjudication of the example, oldest first."""
    with Session(engine) as session:
        info = SetInfo.of(set_row(session, set_name))
        example_row(session, info.id, example_id)  # an unknown example is refused by name
        decisions = session.exec(
            select(CurationDecision)
            .where(CurationDecision.example_id == example_id)
            .order_by(CurationDecision.id)  # type: ignore[arg-type]
        ).all()
        return [
            DecisionView(
                decided_by=d.decided_by,
                label=d.label,
                tags=flat(d.tags),
                note=d.note,
                override_reason=d.override_reason,
                decided_at=d.decided_at,
            )
            for d in decisions
        ]
