"""Live progress of studies, for the researcher's console: what changed (a cheap check) and,
when something did, where each study and each annotator stands.

The console polls `change_stamp` about once a second and recomputes `study_progress` only when
the stamp moves. Both read in one short read-only transaction (in SQLite's WAL mode a reader
never blocks the annotators' writes), so an open console costs the annotators nothing but the
reads themselves (bench/bench_console.py measures it).
"""

from __future__ import annotations

import threading
from bisect import bisect_left, bisect_right, insort
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, func, select
from sqlmodel import Session

from annotate.protocol import standing
from annotate.protocol.studies import TEST, TRAINING, StudyContext
from annotate.protocol.timing import median_seconds
from annotate.store.label_times import RECORDED, dates_known
from annotate.store.models import (
    Annotator,
    FlagAction,
    GateDecision,
    Label,
    LabelImport,
    LabelRevision,
    Study,
    StudyItem,
)
from annotate.wording import count_of, fixed

RECENT = timedelta(minutes=15)
"""The window of the "recent" labelling rate."""
MIN_RATE_SPAN = timedelta(minutes=2)
"""A labelling rate needs at least this much time behind it ..."""
MIN_RATE_LABELS = 5
"""... and this many labels, unless its window is the whole RECENT: one label a second after
the first is no rate ("25133.3/h, ETA 5 s"), while 15 quiet minutes are a rate of zero."""


def as_utc(moment: datetime) -> datetime:
    """Stores give back naive datetimes (UTC by convention): make them comparable with now."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


# --- the change check ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ChangeStamp:
    """What moves whenever anything the console shows changes: a new, revised or deleted label,
    a gate decision, a flag resolved or an item excluded, a new study or a study's state."""

    last_label: int | None
    labels: int
    last_revision: int | None
    last_decision: int | None
    last_flag_action: int | None
    studies: tuple[tuple[int, str], ...]


def change_stamp(engine: Engine) -> ChangeStamp:
    """Max ids and the label count, in one short read-only transaction. Each is its own query:
    SQLite answers max(id) from the primary key at once and count(*) from the smallest index
    (milliseconds for a million labels), but the two in one query scan the table."""
    with engine.connect() as conn:
        last_label = conn.scalar(select(func.max(Label.id)))
        labels = conn.scalar(select(func.count()).select_from(Label)) or 0
        last_revision = conn.scalar(select(func.max(LabelRevision.id)))
        last_decision = conn.scalar(select(func.max(GateDecision.id)))
        last_flag_action = conn.scalar(select(func.max(FlagAction.id)))
        studies = tuple(
            (int(i), str(s)) for i, s in conn.execute(select(Study.id, Study.state)).all()
        )
        conn.rollback()  # read only: end the snapshot at once
    return ChangeStamp(
        last_label, int(labels), last_revision, last_decision, last_flag_action, studies
    )


# --- test labels against the plan ---------------------------------------------------------------
@dataclass(frozen=True)
class LabelTally:
    """A study's test labels against its plan of k per item, in words for the console. A
    bare share reads wrong once the plan and the labels part: "65/100 (100%)" when every item
    was decided before k (stop_when_decided), "84/80" when ties took extra annotators
    (tie_rule extra-annotator)."""

    given: int
    planned: int
    """k labels per test item."""
    extra: int
    """Given past k: extra annotators for ties."""
    not_needed: int
    """Of the plan, never to be given: items decided early."""
    to_go: int
    """Still wanted (the engine's count; an open tie's extra label included)."""
    finished: bool
    imported: bool = False
    """The labels came from a file (import-labels): past k is as the file had them, and what
    an item lacks (labels set aside by a refusal) nothing here collects."""

    @classmethod
    def of(cls, items: standing.Completeness, *, imported: bool = False) -> LabelTally:
        return cls(
            given=items.labels,
            planned=items.k * items.total,
            extra=items.labels_extra,
            not_needed=items.labels_not_needed,
            to_go=items.labels_wanted,
            finished=items.finished,
            imported=imported,
        )

    @property
    def share(self) -> float:
        """Given out of given and still wanted (1.0 once every item is complete)."""
        wanted = self.given + self.to_go
        return min(1.0, self.given / wanted) if wanted else 0.0

    @property
    def past_k(self) -> str:
        """What labels past k are: a tie's extra annotators, or as the imported file had them
        (the console's Labels per item says it of its bars past k)."""
        return "past k, as imported" if self.imported else "extra annotators: ties"

    def _head(self, noun: str) -> str:
        if self.extra and self.imported:
            return (
                f"{self.given} {noun} ({self.planned} planned + {self.extra} past k, as imported)"
            )
        if self.extra:
            extra = count_of(self.extra, "extra annotator")
            return f"{self.given} {noun} ({self.planned} planned + {extra} for ties)"
        return f"{self.given}/{self.planned} {noun}"

    def words(self, noun: str = "labels") -> str:
        """ "65/100 labels, every item decided (stopped early)", "84 labels (80 planned + 4
        extra annotators for ties), complete", "40/100 labels, 45 to go (15 not needed: items
        decided early)"."""
        head = self._head(noun)
        if self.finished:
            early = ", every item decided (stopped early)"
            return head + (early if self.not_needed else ", complete")
        tail = f", {self.to_go} to go"
        if self.imported:  # set aside by refusals: nothing here collects labels for them
            tail = f", {self.to_go} short (set aside; imported labels: none are collected here)"
        if self.not_needed:
            tail += f" ({self.not_needed} not needed: items decided early)"
        return head + tail

    def as_json(self, noun: str = "test labels") -> dict[str, int | bool | str]:
        """The counts and their words, for `status --format json`."""
        return {
            "given": self.given,
            "planned": self.planned,
            "extra": self.extra,
            "not_needed": self.not_needed,
            "to_go": self.to_go,
            "finished": self.finished,
            "words": self.words(noun),
        }

    @property
    def short(self) -> str:
        """The same for a table cell: "17/24 (71%)" while the plan holds, else words:
        "65/100, stopped early", "84 (80 + 4 for ties)", "40/100, 45 to go"."""
        if not self.extra and not self.not_needed and not (self.imported and self.to_go):
            return f"{self.given}/{self.planned} ({100 * self.share:.0f}%)"
        past = "past k" if self.imported else "for ties"
        head = (
            f"{self.given} ({self.planned} + {self.extra} {past})"
            if self.extra
            else f"{self.given}/{self.planned}"
        )
        if self.finished:
            return head + (", stopped early" if self.not_needed else "")
        return f"{head}, {self.to_go} {'short' if self.imported else 'to go'}"


# --- one study ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class AnnotatorProgress:
    name: str
    synthetic: bool
    phase: str
    """training, waiting (for the gate), test, done (admitted, no test item left for them) or
    rejected (standing.annotator_phase)."""
    training_done: int
    training_quota: int
    training_accuracy: float | None
    gate: str
    """pending, admitted or rejected."""
    gate_reason: str | None
    test_done: int
    median_seconds: float | None
    """Median seconds from showing an item to the answer, over the annotator's test answers
    (as the report's datasheet counts them)."""
    median_training_seconds: float | None
    """The same over the training answers (training is usually slower: the feedback)."""
    last_activity: datetime | None
    flags: int


@dataclass(frozen=True)
class StudyProgress:
    study: str
    task: str
    state: str
    k: int
    n_sample: int
    """Test items in the sample."""
    items_complete: int
    """Test items that need no more labels (standing.item_complete)."""
    labels_total: int
    """Test labels."""
    labels_needed: int
    """Test labels the items still take (the engine's own count: none for an item decided
    early, one more for an open tie)."""
    histogram: dict[int, int]
    """Labels per item (0..k, and past k where a tie took extra annotators) -> number of
    test items."""
    rate_recent: float | None
    """Test labels per hour over the last 15 minutes, or over the time since the first test
    label when that is shorter (None before the first label)."""
    rate_overall: float | None
    """Test labels per hour from the first test label to now (a finished study: to its last
    test label, however short the test phase was)."""
    eta: timedelta | None
    """Time to the last missing label at the recent rate (the overall one when nothing came
    in recently); None when nothing is missing or nothing has come in at all."""
    last_activity: datetime | None
    items: standing.Completeness
    """Where the test items stand (complete, open ties, decided early)."""
    annotators: list[AnnotatorProgress] = field(default_factory=list)
    computed_at: datetime | None = None
    recent_window: timedelta | None = None
    """What `rate_recent` is over: 15 minutes, or less early in the test phase."""
    stuck: bool = False
    """No item can be completed until more annotators are admitted (no ETA then)."""
    imported: bool = False
    """The labels came from a file (import-labels, standing.labels_imported)."""

    @property
    def complete(self) -> bool:
        return self.items.finished

    @property
    def tally(self) -> LabelTally:
        return LabelTally.of(self.items, imported=self.imported)


def decision_reason(decision: GateDecision) -> str:
    """Why the gate decided as it did: the stored reason (schema 7), else one rebuilt from the
    evidence stored with an older decision."""
    if decision.reason:
        return decision.reason
    if decision.decided_by != "rule":
        return f"decided by {decision.decided_by}"
    score = "no training answers" if decision.score is None else f"accuracy {fixed(decision.score)}"
    if decision.threshold is None:
        return f"{decision.rule} rule, {score}"
    relation = ">=" if decision.admitted else "<"
    if (
        not decision.admitted
        and decision.score is not None
        and decision.score >= decision.threshold
    ):
        return f"{decision.n_items} training items, too few for the {decision.rule} rule"
    return f"{score} {relation} {decision.rule} {fixed(decision.threshold)}"


def _rate(count: int, since: datetime, now: datetime, whole: bool = False) -> float | None:
    """`count` labels from `since` to `now`, per hour; None while too little is behind it
    (MIN_RATE_SPAN, MIN_RATE_LABELS). `whole`: the span is a finished test phase, so short a
    span is its rate, not too little to project from (None only for no span at all)."""
    span = now - since
    if span <= timedelta(0) or (
        not whole and (span < MIN_RATE_SPAN or (count < MIN_RATE_LABELS and span < RECENT))
    ):
        return None
    return count / (span.total_seconds() / 3600)


@dataclass
class _Person:
    """What the tracker has counted of one annotator."""

    name: str = ""
    synthetic: bool = False
    training_done: int = 0
    training_correct: int = 0
    test_done: int = 0
    seconds: list[float] = field(default_factory=list)
    """Seconds per test answer, kept sorted (the median is the middle one)."""
    training_seconds: list[float] = field(default_factory=list)
    """Seconds per training answer, kept sorted."""
    last: float | None = None
    """Latest answer (POSIX seconds)."""
    flags: int = 0


class ProgressTracker:
    """A study's progress, kept up to date by reading only the labels added since the last
    refresh (by id). Labels are only ever added, except for revisions: a moved revision id,
    or (PostgreSQL) a label count that does not match what was read (an id committed out of
    order), makes the tracker read the study afresh. So a console open on a study of a
    million labels reads a million rows once, then a few rows a second."""

    def __init__(self, ctx: StudyContext) -> None:
        self.ctx = ctx
        self._lock = threading.Lock()  # refreshes may come from two worker threads at once
        self.sized = False
        self.n_sample = 0
        self.quota = 0
        self.revision: int | None = None
        self.decided: int | None = None
        """The study's last gate decision id read (a refusal or readmission moves labels)."""
        self.imported = False
        self.dates_known = True
        self._forget_labels()

    def _forget_labels(self) -> None:
        self.last_id = 0
        self.count = 0
        self.people: dict[int, _Person] = defaultdict(_Person)
        self.test_times: list[float] = []
        """Answer moments of the test labels, sorted (for the rates)."""
        self.item_rows: dict[int, tuple[int, int]] = {}
        """Test item -> (labels, labels still wanted), as the engine keeps them: read in full
        once, then again only for the items that got a label."""
        self._touched: set[int] = set()

    def refresh(self, engine: Engine, now: datetime | None = None) -> StudyProgress:
        """Read what is new (in one short transaction) and return the study's progress at
        `now` (default: the clock)."""
        now = as_utc(now or datetime.now(UTC))
        with self._lock, Session(engine) as session:
            self._read(session)
            stored = session.scalar(select(Study.state).where(Study.id == self.ctx.id))
            origin = standing.label_origin(session, self.ctx.id)
            self.imported = origin.imported
            # Imported durations are laid end to end from 1970: no "last label 20794 d ago"
            self.dates_known = origin.times == RECORDED
            decisions = standing.latest_decisions(session, self.ctx.id)
            unnamed = [i for i in [*self.people, *decisions] if not self.people[i].name]
            for aid, name, synthetic in session.execute(
                select(Annotator.id, Annotator.name, Annotator.synthetic).where(
                    Annotator.id.in_(unnamed)
                )
            ).all():
                self.people[aid].name, self.people[aid].synthetic = name, bool(synthetic)
            # Who has no test item left: standing's rule, on the counts just read.
            finished = standing.nothing_left(
                session,
                self.ctx.id,
                self.ctx.protocol.max_test_items_per_annotator,
                {aid: self.people[aid].test_done for aid, d in decisions.items() if d.admitted},
            )
            return self._progress(now, stored or self.ctx.study.state, decisions, finished)

    def _read(self, session: Session) -> None:
        ctx = self.ctx
        if not self.sized:  # fixed when the study was created: read once
            sizes = dict(
                session.execute(
                    select(StudyItem.phase, func.count())
                    .where(StudyItem.study_id == ctx.id)
                    .group_by(StudyItem.phase)
                ).all()
            )
            self.n_sample = int(sizes.get(TEST, 0))
            self.quota = ctx.protocol.training_quota(int(sizes.get(TRAINING, 0)))
            self.sized = True
        revision = session.scalar(select(func.max(LabelRevision.id)))
        if revision != self.revision:  # a label's value changed: read the study afresh
            self._forget_labels()
            self.revision = revision
        decided = session.scalar(
            select(func.max(GateDecision.id)).where(GateDecision.study_id == ctx.id)
        )
        if decided != self.decided:
            if self._moves_labels(session, self.decided):  # set aside or counted again
                self._forget_labels()
            self.decided = decided
        self._apply(session)
        self._read_items(session)
        if session.get_bind().dialect.name == "sqlite":
            return  # one writer at a time: ids are handed out in commit order
        # PostgreSQL hands out ids before commit, so a lower id can commit after a higher one
        # was read: a count that does not match what was read means one was missed.
        count = session.scalar(
            select(func.count()).select_from(Label).where(Label.study_id == ctx.id)
        )
        if self.count != count:
            self._forget_labels()
            self._apply(session)
            self._read_items(session)

    def _moves_labels(self, session: Session, since: int | None) -> bool:
        """Whether the gate decisions after id `since` may have moved test labels in place (no
        new label, no revision): a refusal of someone with test labels sets them aside
        (set_aside.py), a second decision on someone may count theirs again. A trainee's
        first decision (the usual one) moves none, so it costs no fresh read."""
        if since is None:
            return False  # nothing read yet
        study = GateDecision.study_id == self.ctx.id
        new = set(
            session.scalars(select(GateDecision.annotator_id).where(study, GateDecision.id > since))
        )
        if any(aid in self.people and self.people[aid].test_done for aid in new):
            return True
        again = session.scalar(
            select(func.count()).where(
                study, GateDecision.id <= since, GateDecision.annotator_id.in_(new)
            )
        )
        return bool(again)

    def _read_items(self, session: Session) -> None:
        """The engine's (labels, wanted) of every test item the first time, then of the items
        that got labels since (a revision re-reads all: it may decide or tie an item)."""
        where = [StudyItem.study_id == self.ctx.id, StudyItem.phase == TEST]
        if self.item_rows:
            if not self._touched:
                return
            where.append(StudyItem.item_id.in_(sorted(self._touched)))
        for item_id, n, left in session.execute(
            select(StudyItem.item_id, StudyItem.n_labels, StudyItem.remaining).where(*where)
        ).all():
            self.item_rows[int(item_id)] = (int(n), int(left))
        self._touched.clear()

    def _apply(self, session: Session) -> None:
        """Count the labels with an id above the last one read."""
        rows = session.execute(
            select(
                Label.id,
                Label.annotator_id,
                Label.item_id,
                Label.phase,
                Label.value,
                Label.correct,
                Label.shown_at,
                Label.answered_at,
                Label.flag,
            )
            .where(Label.study_id == self.ctx.id, Label.id > self.last_id)
            .order_by(Label.id)
        ).all()
        for r in rows:
            person = self.people[r.annotator_id]
            timed = r.answered_at is not None and r.shown_at is not None  # imported: maybe not
            answered = as_utc(r.answered_at).timestamp() if timed else None
            if answered is not None:
                seconds = answered - as_utc(r.shown_at).timestamp()
                insort(person.training_seconds if r.phase == TRAINING else person.seconds, seconds)
                person.last = answered if person.last is None else max(person.last, answered)
            person.flags += bool(r.flag)
            if r.phase == TRAINING:
                person.training_done += 1
                person.training_correct += bool(r.correct)
            elif r.phase == TEST:  # catch and refresher answers (issue 16) are neither
                person.test_done += 1
                if answered is not None:
                    insort(self.test_times, answered)
                self._touched.add(r.item_id)
            self.last_id = max(self.last_id, r.id)
            self.count += 1

    def _progress(
        self,
        now: datetime,
        stored: str,
        decisions: dict[int, GateDecision],
        finished: set[int],
    ) -> StudyProgress:
        """`finished`: the admitted annotators with no test item left (standing.nothing_left)."""
        k = self.ctx.k
        items = standing.Completeness.of(self.item_rows.values(), k)
        per_item = Counter(n for n, _ in self.item_rows.values())  # extra annotators too
        needed = items.labels_wanted
        annotators = sorted(
            (
                self._annotator(aid, decisions.get(aid), aid in finished)
                for aid in set(self.people) | set(decisions)
            ),
            key=lambda a: a.name,
        )
        rate_recent = rate_overall = window = None
        if self.test_times:
            began = datetime.fromtimestamp(self.test_times[0], UTC)
            # A finished study's rates are as of its last label: they do not decay after.
            until = now
            if items.finished:
                until = min(now, datetime.fromtimestamp(self.test_times[-1], UTC))
            # The window is the last 15 minutes, or the time since the first test label
            # when that is shorter: 2 minutes into the test phase, 2 minutes' labels.
            since = max(until - RECENT, began)
            upto = bisect_right(self.test_times, until.timestamp())  # none after `until`
            recent = upto - bisect_left(self.test_times, since.timestamp())
            rate_recent, window = _rate(recent, since, until), until - since
            rate_overall = _rate(upto, began, until, whole=items.finished)
        speed = rate_recent or rate_overall
        stuck = standing.cannot_complete(
            items,
            admitted=sum(a.gate == "admitted" for a in annotators),
            decided=any(a.gate in ("admitted", "rejected") for a in annotators),
            in_training=sum(a.phase in ("training", "waiting") for a in annotators),
            imported=self.imported,
        )
        eta = timedelta(hours=needed / speed) if needed and speed and not stuck else None
        anyone = any(d.admitted for d in decisions.values())
        state = standing.study_state(items, stored, anyone)
        people = self.people.values() if self.dates_known else ()
        lasts = [p.last for p in people if p.last is not None]
        return StudyProgress(
            study=self.ctx.study.name,
            task=self.ctx.spec.name,
            state=state,
            k=k,
            n_sample=self.n_sample,
            items_complete=items.complete,
            labels_total=items.labels,
            labels_needed=needed,
            histogram={n: per_item.get(n, 0) for n in range(max(k, *per_item, 0) + 1)},
            rate_recent=rate_recent,
            rate_overall=rate_overall,
            eta=eta,
            last_activity=datetime.fromtimestamp(max(lasts), UTC) if lasts else None,
            items=items,
            annotators=annotators,
            computed_at=now,
            recent_window=window,
            stuck=stuck,
            imported=self.imported,
        )

    def _annotator(
        self, annotator_id: int, decision: GateDecision | None, nothing_left: bool = False
    ) -> AnnotatorProgress:
        p = self.people[annotator_id]
        imported = self.imported
        verdict = standing.member_gate(decision, imported=imported)
        phase = standing.member_phase(
            decision, p.training_done, self.quota, nothing_left, imported=imported
        )
        return AnnotatorProgress(
            name=p.name,
            synthetic=p.synthetic,
            phase=phase,
            training_done=p.training_done,
            training_quota=self.quota,
            training_accuracy=p.training_correct / p.training_done if p.training_done else None,
            gate=verdict,
            gate_reason=None if decision is None else decision_reason(decision),
            test_done=p.test_done,
            median_seconds=median_seconds(p.seconds, presorted=True),
            median_training_seconds=median_seconds(p.training_seconds, presorted=True),
            last_activity=(
                datetime.fromtimestamp(p.last, UTC)
                if p.last is not None and self.dates_known
                else None
            ),
            flags=p.flags,
        )


def study_progress(engine: Engine, ctx: StudyContext, now: datetime | None = None) -> StudyProgress:
    """Where `ctx`'s study stands at `now` (default: the clock), read afresh."""
    return ProgressTracker(ctx).refresh(engine, now)


# --- every study --------------------------------------------------------------------------------
@dataclass(frozen=True)
class StudyOverview:
    name: str
    task: str
    state: str
    k: int
    n_sample: int
    items_complete: int
    labels_total: int
    labels_wanted: int
    """Test labels the items still take (standing.Completeness)."""
    last_activity: datetime | None
    tally: LabelTally
    """The test labels against the plan, in words."""

    @property
    def share_done(self) -> float:
        """Test labels given out of those given and still wanted (1.0 once complete, also
        when items were decided early or took an extra label for a tie)."""
        wanted = self.labels_total + self.labels_wanted
        return min(1.0, self.labels_total / wanted) if wanted else 0.0


def studies_overview(engine: Engine) -> list[StudyOverview]:
    """Every study in the store with its progress and last activity (grouped queries only)."""
    with Session(engine) as session:
        studies = session.execute(
            select(Study.id, Study.name, Study.task, Study.protocol).order_by(Study.id)
        ).all()
        states = standing.states_of_all(session)
        details = dict(session.execute(select(LabelImport.study_id, LabelImport.detail)).all())
        imported = set(details)
        last = dict(
            session.execute(
                select(Label.study_id, func.max(Label.answered_at)).group_by(Label.study_id)
            ).all()
        )
    out = []
    for study_id, name, task, protocol in studies:
        state, items = states[study_id]
        out.append(
            StudyOverview(
                name=name,
                task=task,
                state=state,
                k=int(protocol.get("annotators_per_item", 1)),
                n_sample=items.total,
                items_complete=items.complete,
                labels_total=items.labels,
                labels_wanted=items.labels_wanted,
                # None too for a study imported without times (its labels have none) or
                # with durations only (their dates are made up)
                last_activity=(
                    as_utc(last[study_id])
                    if last.get(study_id) and dates_known(details.get(study_id))
                    else None
                ),
                tally=LabelTally.of(items, imported=study_id in imported),
            )
        )
    return out
