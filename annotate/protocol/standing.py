"""Where a study and its people stand: the one home for item completeness, the study's state,
each annotator's phase and the study's roster. `status`, `study show`/`list`, `gate`, the
annotator's session, the console, the report and its datasheet all ask here and derive none
of it themselves.

- An item is *complete* when it needs no more labels: the engine's own counter `remaining`
  (annotate/completion.py) is 0. That covers k labels, an early stop under stop_when_decided
  (fewer than k) and an open tie under extra-annotator (k or more, still wanting one).
- A study is `complete` when every test item is; else `test` once anyone was admitted (or
  `gate --close` opened it); else `training`. The stored `study.state` is only a hint.
- An annotator's phase follows their latest gate decision: admitted -> test, or done once no
  test item is left for them (`nothing_left`: their batch is full, or every test item that
  still takes labels has theirs); refused -> rejected; without one, training until their
  training quota is answered (`finished_training`; a study without training items has a quota
  of 0, done at once), then waiting. The quota is the protocol's
  (`ProtocolSpec.training_quota`), of the training items the study drew.
- The roster is everyone with a gate decision or a label in the study: someone admitted by
  hand who has labelled nothing yet is on it.
- A test item with no label is *on a screen* while someone's lease on it has not run out (a
  window closed without quitting holds its item until then: the held screen tells the others
  so), else *untouched*.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, overload

from sqlalchemy import Engine, Integer, func, select
from sqlmodel import Session

from annotate.protocol.studies import TEST, TRAINING
from annotate.specs import ProtocolSpec, validate_protocol
from annotate.store import label_times
from annotate.store.models import (
    Annotator,
    GateDecision,
    Label,
    LabelImport,
    Lease,
    Study,
    StudyItem,
)
from annotate.store.queries import labels_of_study

if TYPE_CHECKING:
    import numpy as np

COMPLETE = "complete"
WAITING = "waiting"
REJECTED = "rejected"
DONE = "done"
"""Admitted, and no test item is left for them (`nothing_left`)."""
PENDING, ADMITTED = "pending", "admitted"
IMPORTED, UNKNOWN = "imported", "unknown"
"""Phase and gate of an annotator whose labels were imported (no gate of ours decided)."""


# --- items and the study ----------------------------------------------------------------------
@overload
def item_complete(n_labels: int, remaining: int) -> bool: ...
@overload
def item_complete(n_labels: np.ndarray, remaining: np.ndarray) -> np.ndarray: ...
def item_complete(n_labels: Any, remaining: Any) -> Any:
    """The item needs no more labels (k, decided early, or a tie broken). Also item by item
    over arrays (the report's counts): a boolean array."""
    return (n_labels > 0) & (remaining == 0)


@dataclass(frozen=True)
class Completeness:
    """A study's test items by where they stand."""

    k: int
    total: int
    complete: int
    open_ties: int
    """At k labels or more and still wanting one (extra-annotator)."""
    decided_early: int
    """Complete with fewer than k labels (stop_when_decided)."""
    untouched: int
    """No label, and on nobody's screen."""
    labels: int
    labels_wanted: int
    """Labels the items still take now (the engine's `remaining`, summed)."""
    labels_extra: int = 0
    """Labels past k: extra annotators for ties (extra-annotator)."""
    labels_not_needed: int = 0
    """Labels of the plan (k per item) that items decided early will never take."""
    on_screen: int = 0
    """No label yet, but on someone's screen: a lease that has not run out (`unlabelled_on_screen`;
    an annotator may be reading it, or their window closed and it comes back when the lease
    runs out). Counted apart from `untouched`."""

    @classmethod
    def of(cls, rows: Iterable[tuple[int, int]], k: int, on_screen: int = 0) -> Completeness:
        """From (n_labels, remaining) per test item, and how many of those with no label are
        on a screen (`unlabelled_on_screen`; 0 where the caller does not ask)."""
        total = complete = ties = early = untouched = labels = wanted = extra = spared = 0
        for n, left in rows:
            total += 1
            labels += n
            wanted += left
            untouched += n == 0
            extra += max(0, n - k)
            if item_complete(n, left):
                complete += 1
                early += n < k
                spared += max(0, k - n)
            elif n >= k:
                ties += 1
        # Read apart from the rows: never more than the items with no label they hold.
        on_screen = min(on_screen, untouched)
        return cls(
            k,
            total,
            complete,
            ties,
            early,
            untouched - on_screen,
            labels,
            wanted,
            extra,
            spared,
            on_screen,
        )

    @property
    def finished(self) -> bool:
        return self.total > 0 and self.complete == self.total

    @property
    def in_progress(self) -> int:
        """Labelled, not complete."""
        return self.total - self.complete - self.untouched - self.on_screen


def study_state(items: Completeness, stored: str, anyone_admitted: bool) -> str:
    """training | test | complete, from the items and the gate decisions."""
    if items.finished:
        return COMPLETE
    return TEST if stored == TEST or anyone_admitted else TRAINING


def _item_rows(session: Session, study_id: int) -> list[tuple[int, int]]:
    """(n_labels, remaining) of each test item, counted by the store: a few grouped rows, not
    one row object per item."""
    rows: list[tuple[int, int]] = []
    for n, left, count in session.execute(
        select(StudyItem.n_labels, StudyItem.remaining, func.count())
        .where(StudyItem.study_id == study_id, StudyItem.phase == TEST)
        .group_by(StudyItem.n_labels, StudyItem.remaining)
    ).all():
        rows += [(int(n), int(left))] * int(count)
    return rows


def completeness(session: Session, study_id: int, k: int) -> Completeness:
    return Completeness.of(_item_rows(session, study_id), k)


def unlabelled_on_screen(session: Session, study_id: int, now: datetime) -> int:
    """Test items with no label that someone holds at `now`: a lease that has not run out."""
    return int(
        session.scalar(
            select(func.count(func.distinct(Lease.item_id)))
            .join(
                StudyItem,
                (StudyItem.study_id == Lease.study_id) & (StudyItem.item_id == Lease.item_id),
            )
            .where(
                Lease.study_id == study_id,
                Lease.expires_at > now,
                StudyItem.phase == TEST,
                StudyItem.n_labels == 0,
            )
        )
        or 0
    )


def anyone_admitted(session: Session, study_id: int) -> bool:
    latest = latest_decisions(session, study_id)
    return any(d.admitted for d in latest.values())


def state_of(session: Session, study_id: int, k: int, stored: str) -> str:
    """The study's state, read from its items and decisions."""
    items = completeness(session, study_id, k)
    return study_state(items, stored, not items.finished and anyone_admitted(session, study_id))


def states_of_all(session: Session) -> dict[int, tuple[str, Completeness]]:
    """Every study's state and items, in three grouped queries (the studies list)."""
    rows: dict[int, list[tuple[int, int]]] = {}
    for study_id, n, left in session.execute(
        select(StudyItem.study_id, StudyItem.n_labels, StudyItem.remaining).where(
            StudyItem.phase == TEST
        )
    ).all():
        rows.setdefault(int(study_id), []).append((int(n), int(left)))
    admitted = _admitted_studies(session)
    out = {}
    for study_id, stored, protocol in session.execute(
        select(Study.id, Study.state, Study.protocol)
    ).all():
        items = Completeness.of(rows.get(study_id, []), int(protocol["annotators_per_item"]))
        out[int(study_id)] = (study_state(items, stored, study_id in admitted), items)
    return out


def study_rows(engine: Engine) -> list[dict[str, Any]]:
    """Every study with its state and size (for `annotate study list`)."""
    from annotate.store.models import Study

    with Session(engine) as session:
        studies = session.scalars(select(Study).order_by(Study.id)).all()
        states = states_of_all(session)
        return [
            {
                "id": s.id,
                "name": s.name,
                "task": s.task,
                "protocol": s.protocol["name"],
                "state": states[s.id or 0][0],
                "test_items": states[s.id or 0][1].total,
                "annotators_per_item": s.protocol["annotators_per_item"],
                "created_at": s.created_at.isoformat(timespec="seconds"),
            }
            for s in studies
        ]


def _admitted_studies(session: Session) -> set[int]:
    """Studies where someone's latest decision admits them."""
    latest = (
        select(func.max(GateDecision.id))
        .group_by(GateDecision.study_id, GateDecision.annotator_id)
        .scalar_subquery()
    )
    return set(
        session.scalars(
            select(GateDecision.study_id)
            .where(GateDecision.id.in_(latest), GateDecision.admitted.is_(True))
            .distinct()
        )
    )


# --- people -----------------------------------------------------------------------------------
def verdict(decision: GateDecision | None) -> str:
    """pending | admitted | rejected."""
    if decision is None:
        return PENDING
    return ADMITTED if decision.admitted else REJECTED


def annotator_phase(
    admitted: bool | None, training_done: int, quota: int, nothing_left: bool = False
) -> str:
    """training | waiting | test | done | rejected, from the latest decision (None: none yet)
    and, once admitted, whether any test item is left for them (`nothing_left`)."""
    if admitted is True:
        return DONE if nothing_left else TEST
    if admitted is False:
        return REJECTED
    return WAITING if finished_training(training_done, quota) else TRAINING


def member_gate(decision: GateDecision | None, *, imported: bool = False) -> str:
    """A study member's gate: `verdict`, or "unknown" for an undecided member of a study of
    imported labels (no gate of ours decided)."""
    return UNKNOWN if imported and decision is None else verdict(decision)


def member_phase(
    decision: GateDecision | None,
    training_done: int,
    quota: int,
    nothing_left: bool = False,
    *,
    imported: bool = False,
) -> str:
    """A study member's phase: `annotator_phase`, or "imported" for an undecided member of a
    study of imported labels (they trained nowhere here). Shared by `status`'s roster and the
    console's progress tracker."""
    if imported and decision is None:
        return IMPORTED
    admitted = None if decision is None else bool(decision.admitted)
    return annotator_phase(admitted, training_done, quota, nothing_left)


def finished_training(training_done: int, quota: int) -> bool:
    """Every training item of the annotator's quota is answered (at once with a quota of 0)."""
    return training_done >= quota


def batch_full(cap: int | None, test_done: int) -> bool:
    """Whether `test_done` test labels fill an annotator's batch: the protocol's
    `max_test_items_per_annotator` (`cap`; None: no cap). The engine's hand-out refuses them
    more (assignment.batch_done)."""
    return cap is not None and test_done >= cap


def nothing_left(
    session: Session, study_id: int, cap: int | None, test_done: Mapping[int, int]
) -> set[int]:
    """Of these admitted annotators (id -> their test labels in the study), those with no test
    item left for them: their batch is full (`batch_full`), or every test item that still takes
    labels (`remaining` > 0) has theirs. It is what the engine's hand-out finds for one
    annotator at a time when it has nothing for them, now or to come back from another's
    screen (assignment.lease_next_item, then held_elsewhere): the annotator's screen says they
    are finished. Catch and refresher answers are not test labels, and a catch pause serves
    nothing while test items are left: neither makes anyone done.

    For a whole roster in at most two short reads: the open items are counted (the index the
    hand-out walks), and only someone with at least that many test labels can have labelled
    them all; their labels on open items are counted from those items (a few near the end)."""
    done = {aid for aid, n in test_done.items() if batch_full(cap, n)}
    others = {aid: n for aid, n in test_done.items() if aid not in done}
    if not others:
        return done
    open_items = int(
        session.scalar(
            select(func.count()).where(
                StudyItem.study_id == study_id, StudyItem.phase == TEST, StudyItem.remaining > 0
            )
        )
        or 0
    )
    # One label per item and annotator: fewer test labels than open items leaves one open.
    candidates = [aid for aid, n in others.items() if n >= open_items]
    if not candidates or not open_items:
        return done | set(candidates)
    # From the open items to their labels (uq_label): a LEFT JOIN keeps SQLite, which has no
    # statistics to go by, from walking every label of the candidates instead.
    labelled = session.execute(
        select(Label.annotator_id, func.count(Label.id))
        .select_from(StudyItem)
        .outerjoin(
            Label,
            (Label.study_id == StudyItem.study_id)
            & (Label.item_id == StudyItem.item_id)
            & (Label.phase == TEST)
            & Label.annotator_id.in_(candidates),
        )
        .where(StudyItem.study_id == study_id, StudyItem.phase == TEST, StudyItem.remaining > 0)
        .group_by(Label.annotator_id)
    ).all()
    return done | {int(aid) for aid, n in labelled if aid is not None and n >= open_items}


def _protocol(session: Session, study_id: int) -> ProtocolSpec | None:
    """The study's effective protocol (ProtocolSpec), or None for no such study."""
    stored = session.scalar(select(Study.protocol).where(Study.id == study_id))
    return None if stored is None else validate_protocol(dict(stored), origin=f"study {study_id}")


def training_quota(session: Session, study_id: int, protocol: ProtocolSpec | None = None) -> int:
    """Training items each annotator does: the protocol's quota (`ProtocolSpec.training_quota`,
    the one rule) of the training items the study drew. `protocol`: the study's, where the
    caller has read it."""
    drawn = int(
        session.scalar(
            select(func.count()).where(StudyItem.study_id == study_id, StudyItem.phase == TRAINING)
        )
        or 0
    )
    protocol = protocol or _protocol(session, study_id)
    if protocol is None:  # no such study: it drew nothing
        return drawn
    return protocol.training_quota(drawn)


def latest_decisions(session: Session, study_id: int) -> dict[int, GateDecision]:
    """annotator id -> their latest gate decision in the study."""
    out: dict[int, GateDecision] = {}
    for d in session.scalars(
        select(GateDecision).where(GateDecision.study_id == study_id).order_by(GateDecision.id)
    ):
        out[d.annotator_id] = d
    return out


@dataclass(frozen=True)
class Member:
    """One annotator of a study's roster."""

    annotator_id: int
    name: str
    synthetic: bool
    decision: GateDecision | None
    training_done: int
    training_correct: int
    test_done: int
    quota: int
    imported: bool = False
    """The study's labels came from a file (`annotate import-labels`): no gate of ours
    decided, so an undecided member is "imported" with gate "unknown"."""
    nothing_left: bool = False
    """Admitted, and no test item is left for them (`nothing_left`): phase "done"."""

    @property
    def gate(self) -> str:
        return member_gate(self.decision, imported=self.imported)

    @property
    def phase(self) -> str:
        return member_phase(
            self.decision, self.training_done, self.quota, self.nothing_left, imported=self.imported
        )

    @property
    def finished_training(self) -> bool:
        """Answered their whole training quota here (an imported study trained no one)."""
        return not self.imported and finished_training(self.training_done, self.quota)

    @property
    def training_accuracy(self) -> float | None:
        return self.training_correct / self.training_done if self.training_done else None


def roster(session: Session, study_id: int) -> list[Member]:
    """Everyone with a gate decision or a label (any phase) in the study, by name."""
    counts: dict[int, dict[str, tuple[int, int]]] = {}
    for aid, phase, n, right in session.execute(
        select(
            Label.annotator_id,
            Label.phase,
            func.count(Label.id),
            func.coalesce(func.sum(Label.correct.cast(Integer)), 0),
        )
        .where(labels_of_study(session.connection(), study_id))
        .group_by(Label.annotator_id, Label.phase)
    ).all():
        counts.setdefault(int(aid), {})[phase] = (int(n), int(right))
    decisions = latest_decisions(session, study_id)
    ids = set(counts) | set(decisions)
    if not ids:
        return []
    protocol = _protocol(session, study_id)
    quota = training_quota(session, study_id, protocol)
    imported = labels_imported(session, study_id)
    tested = {aid: mine.get(TEST, (0, 0))[0] for aid, mine in counts.items()}
    cap = None if protocol is None else protocol.max_test_items_per_annotator
    admitted = {aid: tested.get(aid, 0) for aid, d in decisions.items() if d.admitted}
    finished = nothing_left(session, study_id, cap, admitted)
    people = session.execute(
        select(Annotator.id, Annotator.name, Annotator.synthetic).where(Annotator.id.in_(ids))
    ).all()
    members = []
    for aid, name, synthetic in people:
        done, right = counts.get(aid, {}).get(TRAINING, (0, 0))
        members.append(
            Member(
                aid,
                name,
                bool(synthetic),
                decisions.get(aid),
                done,
                right,
                tested.get(aid, 0),
                quota,
                imported,
                aid in finished,
            )
        )
    return sorted(members, key=lambda m: m.name)


def cannot_complete(
    items: Completeness, admitted: int, decided: bool, in_training: int, *, imported: bool = False
) -> bool:
    """No item can be completed until more annotators are admitted: fewer than k admitted,
    the gate has decided on someone, and nobody is in training who could still be admitted.
    A study in this state has no ETA. Never for `imported` labels (import-labels): a refusal
    leaves their items short for good, and no admission here could complete them."""
    if imported:
        return False
    return items.complete < items.total and admitted < items.k and decided and not in_training


@dataclass(frozen=True)
class LabelOrigin:
    """Where a study's labels come from, read from its import record in one statement."""

    imported: bool
    """The labels came from a file made outside annotate (import-labels): nothing here
    collects more of them."""
    times: str
    """What the label times are (store/label_times.py): RECORDED for a study run in annotate
    or imported with dates; DURATIONS_ONLY or NONE_IN_FILE, whose dates are not real."""


def label_origin(session: Session, study_id: int) -> LabelOrigin:
    """labels_imported and label_times_of at once: a caller that needs both (the console, at
    every refresh) reads the import record once."""
    row = session.execute(
        select(LabelImport.id, LabelImport.detail).where(LabelImport.study_id == study_id).limit(1)
    ).first()
    detail = None if row is None else row.detail
    return LabelOrigin(row is not None, label_times.label_times(detail))


def label_times_of(session: Session, study_id: int) -> str:
    """What the study's label times are (LabelOrigin.times)."""
    return label_origin(session, study_id).times


def labels_imported(session: Session, study_id: int) -> bool:
    """Whether the study's labels came from a file made outside annotate (LabelOrigin.imported)."""
    return label_origin(session, study_id).imported
