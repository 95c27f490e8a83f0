"""One annotator working on one study: the API the TUI, the simulator and the tests all use.

    session = AnnotatorSession.open(engine, "rte-pilot", "ana")
    while (item := session.next_item()) is not None:
        feedback = session.submit(item, "entailment")

Each answer is committed durably before `submit` returns, so the next item is only shown after
the previous answer is safe; killing the process loses at most the item on the screen, and a
restarted session resumes with that item (its lease) or the next one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any, TypeVar

from sqlalchemy import (
    Connection,
    Engine,
    Integer,
    bindparam,
    case,
    exists,
    func,
    literal_column,
    or_,
    select,
)
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlmodel import Session

from annotate.errors import UserError
from annotate.protocol import assignment, catch, gate, standing, windows
from annotate.protocol.answers import check_retry, describe, is_correct, validate_answer
from annotate.protocol.assignment import Leased, Refusal, release_leases
from annotate.protocol.set_aside import SET_ASIDE
from annotate.protocol.studies import TEST, TRAINING, StudyContext, get_annotator, load_study
from annotate.protocol.views import Feedback, ItemView, label_row
from annotate.store import checkpoint
from annotate.store.engine import (
    is_sqlite,
    lock_annotator,
    read_connection,
    read_session,
    retry_transient,
    write_connection,
    write_session,
    write_transaction,
)
from annotate.store.models import (
    Annotator,
    GateDecision,
    Item,
    Label,
    LabelRevision,
    StudyItem,
    Visit,
    utcnow,
)
from annotate.store.prepared import Prepared, run_together

REVISABLE = (TEST, catch.CATCH)
"""Phases whose answers `u` may change: test answers, and catch answers, which look the same."""
NOTHING_TO_REVISE = "There is no earlier test answer to revise."
"""What `u` says when the annotator has no test answer to go back to (last_answer is None)."""
NOT_THE_LAST = "Only your previous answer can be changed; this one stands."
EXITED = "You have finished and have your completion code: your answers stand."


_Written = TypeVar("_Written")

_BY_PHASE = (
    select(
        Label.phase,
        func.count(Label.id),
        func.coalesce(func.sum(case((Label.phase == TRAINING, Label.correct.cast(Integer)))), 0),
    )
    .where(Label.study_id == bindparam("b_study"), Label.annotator_id == bindparam("b_annotator"))
    .group_by(Label.phase)
)
"""An annotator's answers per phase, and the right ones of training (0 for the other phases):
built once, as the status line asks after every keypress (SQLAlchemy reuses its compiled
form). Only a training label's `correct` is read: SQLite then counts the test answers on the
index (study, annotator, phase) alone, reading no table row (it seeks a row only when a column
outside the index is read), 7 times faster at 1,000 answers, where the page reads this after
every answer."""
_STANDING = _BY_PHASE.add_columns(gate.LATEST_ADMITTED)
"""The same with the gate's latest word on each row: where the annotator stands, in one read."""
_RUN_BY_PHASE, _RUN_STANDING = Prepared(_BY_PHASE), Prepared(_STANDING)


def _phase_counts(result: Any) -> dict[str, tuple[int, int]]:
    """_RUN_BY_PHASE's rows: phase -> (answers, right ones)."""
    return {phase: (int(n), int(right)) for phase, n, right in result.all()}


_TRAINING_STATE = (
    select(Item.gold, Label.id, Label.value, Label.correct, gate.LATEST_ADMITTED)
    .select_from(Item)
    .outerjoin(
        Label,
        (Label.item_id == Item.id)
        & (Label.study_id == bindparam("b_study"))
        & (Label.annotator_id == bindparam("b_annotator"))
        & (Label.phase == TRAINING),
    )
    .where(Item.id == bindparam("b_item"))
)
"""What a training answer's write needs to know first, in one read: the item's gold, the
annotator's stored answer to it (a retry) and the gate's latest word on them."""
_TRAINING_ANSWER = (
    select(Label.value, Label.correct, Item.gold)
    .join(Item, Item.id == Label.item_id)
    .where(
        Label.study_id == bindparam("b_study"),
        Label.annotator_id == bindparam("b_annotator"),
        Label.item_id == bindparam("b_item"),
        Label.phase == TRAINING,
    )
)
"""An annotator's stored training answer to an item, with the item's gold: what its feedback
says (built once: asked on every training answer)."""


_TRAINING_PHASE = literal_column(f"'{TRAINING}'")  # a constant of the code, never from input
_NEXT_TRAINING_ITEM = (
    select(Item.id, Item.source_id, Item.fields)
    .join(StudyItem, StudyItem.item_id == Item.id)
    .where(
        StudyItem.study_id == bindparam("b_study"),
        # The phase written into the statement, not bound: PostgreSQL then plans it once for
        # every run (a prepared statement's generic plan knows the few training rows), where
        # with the phase bound it planned it afresh at every run, 0.2 ms of its time each.
        StudyItem.phase == _TRAINING_PHASE,
        ~exists().where(
            Label.study_id == bindparam("b_study"),
            Label.item_id == StudyItem.item_id,
            Label.annotator_id == bindparam("b_annotator"),
            Label.phase == _TRAINING_PHASE,
        ),
    )
    .order_by(StudyItem.position)
    .limit(1)
)
"""The annotator's next training item, in the study's order, with what its screen shows."""
_RUN_TRAINING_STATE, _RUN_NEXT_TRAINING_ITEM = (
    Prepared(_TRAINING_STATE),
    Prepared(_NEXT_TRAINING_ITEM),
)


@dataclass(frozen=True)
class TrainingAnswer:
    """A training answer as its feedback needs it."""

    value: Any
    correct: bool | None
    gold: Any


@dataclass(frozen=True)
class _Counted:
    """What a test answer's write transaction read and counted: the annotator's answers per
    phase after it. The label was taken, so the gate's latest word is "admitted"."""

    by_phase: dict[str, tuple[int, int]]


_Read = bool | _Counted
"""What a keypress's write asks to know after it (_write_then_standing)."""


class _Unread:
    """`_progress_in`'s admission when the caller has not read it."""


_UNREAD = _Unread()


class Phase(StrEnum):
    TRAINING = "training"
    WAITING = "waiting"  # training done, the gate has not decided yet
    TEST = "test"
    REJECTED = "rejected"
    DONE = "done"  # admitted, and no test item is left for this annotator

    @property
    def awaits_researcher(self) -> bool:
        """Whether a researcher's gate decision can still move the annotator on from here: the
        gate has not decided (waiting), or it refused them and an admission by hand may follow
        (`annotate gate --admit`, the console's `a`). The screens of these phases check again
        by themselves, so the decision reaches an annotator who left the window open."""
        return self in (Phase.WAITING, Phase.REJECTED)


@dataclass(frozen=True)
class Progress:
    phase: Phase
    training_done: int
    training_correct: int
    training_quota: int
    test_done: int
    test_items: int
    """Test items the annotator is to label: the study's (each needs k annotators; an annotator
    does each at most once), or their batch (`max_test_items_per_annotator`) when smaller."""
    catch_done: int = 0
    catch_planned: int = 0
    """Catch items due in this annotator's test stream (0 without catch items; see catch.py)."""
    refresher_done: int = 0
    """Answers in the annotator's current refresher round (catch_action "pause")."""
    paused: bool = False
    """catch_action "pause" found no refresher item left: no more test items are served
    (catch.refresher_exhausted); the researcher is warned."""
    refresher_total: int = 0
    """Items in that round: catch.REFRESHER_ITEMS, fewer when fewer are left to refresh."""
    set_aside: int = 0
    """Test answers set aside by a refusal after admission (protocol/set_aside.py)."""

    @property
    def refused_in_test(self) -> bool:
        """Refused after answering in the test phase: their test answers are set aside and
        their catch answers were never scored, so none of what they gave there is used."""
        return self.phase is Phase.REJECTED and bool(self.set_aside or self.catch_done)

    @property
    def training_accuracy(self) -> float:
        return self.training_correct / self.training_done if self.training_done else 0.0

    @property
    def stream_done(self) -> int:
        """Answers in the test stream as the annotator sees it: test and catch items alike (a
        count that stood still after a catch answer would tell which item it was)."""
        return self.test_done + self.catch_done

    @property
    def stream_total(self) -> int:
        return self.test_items + self.catch_planned


class TrainingClosed(UserError):
    """A training answer after the gate decided (the item was on the screen when it did)."""


class ItemTaken(UserError):
    """The item got its k labels from others while it was on this screen (lease expired)."""


class AnnotatorSession:
    def __init__(
        self,
        engine: Engine,
        ctx: StudyContext,
        annotator: Annotator,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        assert annotator.id is not None
        self.engine = engine
        self.ctx = ctx
        self.annotator = annotator
        self.annotator_id: int = annotator.id
        self.clock = clock
        self._stream_done: int | None = None
        """Test-stream answers (test and catch) stored by this annotator: counted once, then
        kept up to date here so the keypress needs no count (it only numbers the item)."""
        self._catch_planned: int | None = None
        self._progress: Progress | None = None
        self._answered_since = False
        """Where the annotator stood at the last read, or as their last test transaction (an
        answer, a lease) left it, and whether one did since: see `progress`. None after
        anything else that may move it (`_forget_progress`)."""
        self.catch_items: set[int] = set()
        self.refresher_items: set[int] = set()
        """Catch and refresher items on this screen (protocol catch_rate > 0; see catch.py)."""
        self.visit_id: int | None = None
        """This window's visit once claimed (windows.py): then only the annotator's newest
        window stores answers; an older one gets ContinuedElsewhere."""
        self._test_link_of: int | None = None
        self._test_link = True
        """Whether the window `_test_link_of` may be given test items (_serves_test_items)."""
        self.consent_given = False
        """The worker agreed to the consent text on this window (a page keeps that in its
        session) and it may not be stored yet: the next write of the window stores it, in
        the same commit as the answer or lease (windows.touching), so no answer is ever stored
        without its consent and agreeing costs no commit of its own."""

    @classmethod
    def open(
        cls,
        engine: Engine,
        study: str,
        annotator: str,
        *,
        create_annotator: bool = False,
        clock: Callable[[], datetime] = utcnow,
    ) -> AnnotatorSession:
        ctx = load_study(engine, study)
        return cls(engine, ctx, get_annotator(engine, annotator, create=create_annotator), clock)

    @property
    def spec(self):
        return self.ctx.spec

    # --- windows (windows.py) ---------------------------------------------------------------
    def claim_window(self, client: str = "terminal") -> int:
        """Make this the annotator's live window (an older one stops taking answers)."""

        def work() -> int:
            with write_connection(self.engine) as conn:
                return windows.claim(
                    conn, self.ctx.id, self.annotator_id, self.clock(), client=client
                )

        self.visit_id = retry_transient(work)
        return self.visit_id

    def attach_window(self, visit_id: int) -> None:
        """Use a visit claimed elsewhere (an arrival by link: crowd.enter_by_link)."""
        self.visit_id = visit_id

    def _serves_test_items(self, conn: Connection | None = None) -> bool:
        """windows.serves_test_items for this window (its link never changes: read once)."""
        if self.visit_id is None:
            return True
        if self._test_link_of != self.visit_id:
            if conn is None:
                with read_connection(self.engine) as own:
                    self._test_link = windows.serves_test_items(own, self.visit_id)
            else:
                self._test_link = windows.serves_test_items(conn, self.visit_id)
            self._test_link_of = self.visit_id
        return self._test_link

    def check_window(self, conn, *, lock: bool = False) -> None:
        """Inside a write transaction: refuse unless this is the annotator's newest window.
        An unclaimed session (the simulator, library use) is not checked, and does not read
        its clock for it (a test's stepping clock would drift). `lock`: lock_annotator first
        (one statement with the check on PostgreSQL)."""
        self._window_then(conn, lock=lock)

    def is_live(self) -> bool:
        """False once a newer window of the annotator took over (always True unclaimed)."""
        if self.visit_id is None:
            return True
        with read_connection(self.engine) as conn:
            return windows.is_live(conn, self.ctx.id, self.annotator_id, self.visit_id)

    def was_quit(self) -> bool:
        """True once this window was quit (`release`): a page then signs its cookie out.
        Never for an unclaimed session."""
        if self.visit_id is None:
            return False
        with read_connection(self.engine) as conn:
            return windows.was_quit(conn, self.visit_id)

    def heartbeat(self) -> bool:
        """Note that this window is still open (reading guidelines, waiting for the gate), so
        its time on task runs on; False once a newer window took over."""
        if self.visit_id is None:
            return True

        def work() -> bool:
            with write_connection(self.engine) as conn:
                try:
                    self.check_window(conn)
                except windows.ContinuedElsewhere:
                    return False
                return True

        return retry_transient(work)

    # --- where the annotator stands -------------------------------------------------------
    def _counts(self, session: Session | Connection) -> tuple[int, int, int]:
        """(training answers, right ones, test answers) in one indexed query."""
        by_phase = self._by_phase(session)
        training_done, training_correct = by_phase.get(TRAINING, (0, 0))
        return training_done, training_correct, by_phase.get(TEST, (0, 0))[0]

    def _standing(
        self, conn: Session | Connection
    ) -> tuple[dict[str, tuple[int, int]], bool | _Unread | None]:
        """The annotator's answers per phase and the gate's latest word, in one read once they
        have answered anything (the word comes with each phase's row); before, the word is read
        where it is needed (_phase)."""
        params = {"b_study": self.ctx.id, "b_annotator": self.annotator_id}
        rows = _RUN_STANDING.run(conn, params).all()
        by_phase = {phase: (int(n), int(right)) for phase, n, right, _ in rows}
        return by_phase, (None if rows[0][3] is None else bool(rows[0][3])) if rows else _UNREAD

    def _by_phase(self, session: Session | Connection) -> dict[str, tuple[int, int]]:
        """phase -> (answers, right ones: training only) of this annotator."""
        return _phase_counts(_RUN_BY_PHASE.run(session, self._counting()))

    def _counting(self) -> dict[str, Any]:
        """_by_phase's statement's parameters (_RUN_BY_PHASE)."""
        return {"b_study": self.ctx.id, "b_annotator": self.annotator_id}

    def _window_then(
        self, conn: Connection, *runs: tuple[Prepared, dict[str, Any]], lock: bool = True
    ) -> list[Any]:
        """check_window(conn, lock=lock), then `runs`: statements that need nothing from the
        check, sent with it in one round trip to a database server (run_together). If the
        check refuses, they are undone with the transaction. Their results."""
        if self.visit_id is None:
            if lock:
                lock_annotator(conn, self.ctx.id, self.annotator_id)
            return run_together(conn, *runs)
        window = windows.touching(
            conn,
            self.ctx.id,
            self.annotator_id,
            self.visit_id,
            self.clock(),
            consent=self.consent_given,
            lock=lock,
        )
        assert window is not None
        touched, *results = run_together(conn, window, *runs)
        windows.touched(touched)
        return results

    def _study_sizes(self, session: Session | Connection) -> tuple[int, int]:
        """(training quota, test items): fixed when the study was created, so asked once."""
        sizes = self.ctx.fixed.get("sizes")
        if sizes is None:
            counts = dict(
                session.execute(
                    select(StudyItem.phase, func.count())
                    .where(StudyItem.study_id == self.ctx.id)
                    .group_by(StudyItem.phase)
                ).all()
            )
            quota = self.ctx.protocol.training_quota(int(counts.get(TRAINING, 0)))
            sizes = self.ctx.fixed["sizes"] = (quota, int(counts.get(TEST, 0)))
        return sizes

    def _decision(self, session: Session) -> GateDecision | None:
        return gate.latest_decision(session, self.ctx.id, self.annotator_id)

    def _phase(
        self,
        session: Session | Connection,
        by_phase: dict[str, tuple[int, int]] | None = None,
        *,
        admitted: bool | _Unread | None = _UNREAD,
    ) -> Phase:
        """The annotator's phase; `by_phase` (their counts) and `admitted` (the gate's word),
        when the caller has them already."""
        if isinstance(admitted, _Unread):
            admitted = gate.latest_admission(session, self.ctx.id, self.annotator_id)
        quota, _ = self._study_sizes(session)
        done = 0
        if admitted is None:  # still training or waiting: the training answers tell which
            done = (by_phase if by_phase is not None else self._by_phase(session)).get(
                TRAINING, (0, 0)
            )[0]
        return Phase(standing.annotator_phase(admitted, done, quota))

    def phase_on(self, conn: Connection) -> Phase:
        """The annotator's phase read on the caller's connection, inside its read: no decision
        is made here (`phase` makes one that is due while they wait on the gate)."""
        return self._phase(conn)

    def phase(self, *, live: bool = False) -> Phase:
        """The annotator's phase; `live`: first refuse a window another window of the
        annotator took over (ContinuedElsewhere), in the same read."""
        self._forget_progress()  # it may record a decision (_decide_now)
        with read_session(self.engine) as session:
            if live and self.visit_id is not None:
                conn = session.connection()
                if not windows.is_live(conn, self.ctx.id, self.annotator_id, self.visit_id):
                    raise windows.ContinuedElsewhere()
            phase = self._phase(session)
        if phase is Phase.WAITING and self._decide_now():
            with read_session(self.engine) as session:
                return self._phase(session)
        return phase

    def _decide_now(self) -> bool:
        """Decisions that need no researcher: a study with no training items admits under an
        automatic rule (recorded, so no test item is served without a decision), and a trainee
        finishing after a median gate closed is judged against the recorded median."""

        def work() -> bool:
            with write_session(self.engine) as session:
                if self._decision(session) is not None:
                    return True
                if gate.admit_without_training(session, self.ctx, self.annotator_id, self.clock()):
                    return True
                return gate.decide_late(session, self.ctx, self.annotator_id) is not None

        return retry_transient(work)

    def study_complete(self) -> bool:
        """Every test item has all the labels it takes (none remaining): a newcomer would
        train for nothing, so the app says so before training."""
        with read_session(self.engine) as session:
            open_item = session.exec(
                select(StudyItem.id)
                .where(
                    StudyItem.study_id == self.ctx.id,
                    StudyItem.phase == TEST,
                    StudyItem.remaining > 0,
                )
                .limit(1)
            ).first()
        return open_item is None

    def nothing_left(self, test_done: int) -> bool:
        """No test item is left for this admitted annotator with `test_done` test labels: the
        rule `status` calls done (standing.nothing_left), read without leasing anything."""
        with read_session(self.engine) as session:
            finished = standing.nothing_left(
                session,
                self.ctx.id,
                self.ctx.protocol.max_test_items_per_annotator,
                {self.annotator_id: test_done},
            )
        return self.annotator_id in finished

    def more_to_come(self, progress: Progress) -> bool:
        """Whether the annotator, leaving at `progress`, may find something to do on coming
        back: not once the gate refused them (their screen says there is nothing more to do),
        nor once no test item is left for them (`nothing_left`: "all done"). Training, waiting
        for the gate, a catch pause or an item held elsewhere may still lead on."""
        if progress.phase is Phase.REJECTED:
            return False
        return not (progress.phase is Phase.TEST and self.nothing_left(progress.test_done))

    def progress(self) -> Progress:
        """Where the annotator stands, for the status line: asked after every keypress, so
        right after a test transaction (an answer, a lease) it is what that transaction left
        (`_standing_now`), with no query; else two prepared statements on one connection
        (plus catch figures where used).

        A stored test answer confirms what a read would say again: the label was counted, so
        the gate's latest decision admits the annotator (still the test phase), and only this
        window stores their answers (`check_window`), so their counts are the ones read plus
        the answers stored here since. Training counts cannot change once admitted, and the
        study's sizes are fixed. Asked again with no answer in between, it reads."""
        if self._answered_since and self._progress is not None:
            self._answered_since = False
            return self._progress
        with read_connection(self.engine) as conn:
            progress = self._progress_in(conn)
        self._progress, self._answered_since = progress, False
        return progress

    def _forget_progress(self) -> None:
        """Something other than a test transaction may move the figures: read them next."""
        self._progress, self._answered_since = None, False

    def _moved_on(self) -> Progress | None:
        """The figures a test answer may move on without reading (+1 test answer): never in
        the training phase, nor with catch_action "pause" (the refresher round and the pause
        are read at every answer)."""
        kept = self._progress
        if kept is None or kept.phase is not Phase.TEST:
            return None
        return kept if self.ctx.protocol.catch_action != "pause" else None

    def _standing_now(self, progress: Progress) -> None:
        """Keep where the annotator stands as a test transaction left it: for the status line
        that asks at once, and the next item's number (counted exactly)."""
        self._progress, self._answered_since = progress, True
        self._stream_done = progress.stream_done

    def _write_then_standing(
        self, write: Callable[[Connection], _Written], read: Callable[[_Written], _Read]
    ) -> tuple[_Written, Progress | None]:
        """`write` in a keypress's write transaction, then, if `read(what it wrote)` asks,
        where the annotator now stands: from the counts the write read (`_Counted`), or read
        afresh (True). On SQLite that is read once the write has committed, on the same
        connection (two indexed statements the next writer does not wait for: the writers'
        turn is over). PostgreSQL has no such turn, and a second transaction would cost round
        trips: there it is read inside the write's."""
        after = is_sqlite(self.engine)
        progress = None

        def standing(on: Connection, wanted: _Read) -> Progress:
            if isinstance(wanted, _Counted):  # a counted test label: the gate admitted them
                return self._progress_in(on, wanted.by_phase, admitted=True)
            return self._progress_in(on)

        with self.engine.connect() as conn:
            with write_transaction(self.engine, conn, keypress=True) as on:
                written = write(on)
                wanted = read(written)
                if wanted and not after:
                    progress = standing(on, wanted)
            if wanted and after:
                progress = standing(conn, wanted)
        return written, progress

    def _progress_in(
        self,
        conn: Connection,
        by_phase: dict[str, tuple[int, int]] | None = None,
        *,
        admitted: bool | _Unread | None = _UNREAD,
    ) -> Progress:
        """Where the annotator stands; `by_phase` and `admitted` (the gate's word): what the
        caller read in this transaction already."""
        if by_phase is None and isinstance(admitted, _Unread):
            by_phase, admitted = self._standing(conn)
        elif by_phase is None:
            by_phase = self._by_phase(conn)
        quota, test_items = self._study_sizes(conn)
        batch = self.ctx.protocol.max_test_items_per_annotator
        if batch is not None:  # the annotator's own count: "Test 3/20", not 3 of the study's 100
            test_items = min(test_items, batch)
        phase = self._phase(conn, by_phase, admitted=admitted)
        catch_planned = 0
        if self.ctx.protocol.catch_rate > 0:
            if self._catch_planned is None:  # fixed for the study: worked out once
                self._catch_planned = catch.planned(conn, self.ctx, self.annotator_id, test_items)
            catch_planned = self._catch_planned
        refresher_done, paused, refresher_total = 0, False, 0
        if self.ctx.protocol.catch_action == "pause" and phase is Phase.TEST:
            refresher_done = catch.refresher_round(conn, self.ctx, self.annotator_id) or 0
            paused = catch.refresher_exhausted(conn, self.ctx, self.annotator_id)
            refresher_total = catch.refresher_round_size(
                conn, self.ctx, self.annotator_id, refresher_done
            )
        done, correct = by_phase.get(TRAINING, (0, 0))
        return Progress(
            phase,
            done,
            correct,
            quota,
            by_phase.get(TEST, (0, 0))[0],
            test_items,
            by_phase.get(catch.CATCH, (0, 0))[0],
            catch_planned,
            refresher_done,
            paused,
            refresher_total,
            by_phase.get(SET_ASIDE, (0, 0))[0],
        )

    # --- items ------------------------------------------------------------------------------
    def _view(self, session: Session, item_id: int, phase: str, number: int) -> ItemView:
        item = session.get(Item, item_id)
        assert item is not None
        return ItemView(item_id, item.source_id, phase, dict(item.fields), number, self.clock())

    def next_item(self) -> ItemView | None:
        """The next item to show, or None (waiting for the gate, refused, or finished). A
        window another window of the annotator took over, or that was quit, raises
        ContinuedElsewhere."""
        self._forget_progress()
        # One read for the window, where the annotator stands (kept for the status line the
        # screen asks for next) and, in training, the item: a training item takes no lease.
        with read_connection(self.engine) as conn:
            # Latest and not quit: a quit window's cookie replayed gets ContinuedElsewhere
            # here, which the page turns into sign-in (it asks was_quit then, and only then).
            live = self.visit_id is None or windows.is_open(
                conn, self.ctx.id, self.annotator_id, self.visit_id
            )
            if not live:
                raise windows.ContinuedElsewhere()
            progress = self._progress_in(conn)
            phase = progress.phase
            if phase is Phase.TRAINING:
                training = self._next_training(conn, progress)
                if training is not None:
                    self._progress, self._answered_since = progress, True
                return training
        if phase is Phase.WAITING and self._decide_now():  # as phase() does
            with read_session(self.engine) as session:
                phase = self._phase(session)
        if phase is not Phase.TEST or not self._serves_test_items():
            return None
        if self.ctx.protocol.catch_rate > 0 and (refresher := catch.serve_refresher(self)):
            return refresher  # catch_action "pause": back to training items, with feedback
        if self.ctx.protocol.catch_action == "pause" and self._paused():
            return None  # drifting, and no refresher item left: the researcher decides
        if phase is progress.phase and assignment.batch_full(self.ctx, progress.test_done):
            # The batch is done, as just read: nothing to lease (the answer that completed it
            # gave its lease back in its own transaction), so no write transaction to say so.
            self._standing_now(progress)
            return None

        def lease(conn: Connection) -> Leased | None:
            self.check_window(conn, lock=True)
            return assignment.lease_next_item(conn, self.ctx, self.annotator_id, self.clock())

        # A lease stores no answer: where the annotator stands is what the read above said,
        # unless the gate has decided since (_decide_now), which is read again.
        moved = phase is not progress.phase
        leased, after = retry_transient(lambda: self._write_then_standing(lease, lambda _: moved))
        self._standing_now(after or progress)
        return self._test_view(leased)

    def held_elsewhere(self) -> assignment.HeldElsewhere | None:
        """Asked once next_item has no item for an admitted annotator: the items that may
        still come to them, on other people's screens now (a window closed without quitting
        holds its item until the hold runs out), or None when nothing is left for them. The
        front ends then say "wait" rather than "all done", and ask next_item again."""
        with read_connection(self.engine) as conn:
            return assignment.held_elsewhere(conn, self.ctx, self.annotator_id, self.clock())

    def _paused(self) -> bool:
        if self.ctx.protocol.catch_rate <= 0:
            return False
        with read_connection(self.engine) as conn:
            return catch.refresher_exhausted(conn, self.ctx, self.annotator_id)

    def _stream_answers(self) -> int:
        if self._stream_done is None:
            with read_session(self.engine) as session:
                self._stream_done = self._stream_count(session)
        return self._stream_done

    def _stream_count(self, session: Session) -> int:
        by_phase = self._by_phase(session)
        return by_phase.get(TEST, (0, 0))[0] + by_phase.get(catch.CATCH, (0, 0))[0]

    def _test_view(self, leased: Leased | None, at: datetime | None = None) -> ItemView | None:
        """The leased item as shown `at` (now unless given), or the catch item due first."""
        if leased is None:
            return None
        fields = dict(leased.fields)
        number = self._stream_answers() + 1
        if self.ctx.protocol.catch_rate > 0 and (served := catch.serve_catch(self, number)):
            return served  # the leased test item stays this annotator's and comes next
        return ItemView(leased.item_id, leased.source_id, TEST, fields, number, at or self.clock())

    def _prepared(
        self, item: ItemView, answer: Any, answered_at: datetime | None, comment: str | None
    ) -> tuple[Any, datetime, str | None]:
        """The answer validated, its time (now unless given) and the comment, blank as None."""
        value = validate_answer(self.spec, answer, item.fields)
        comment = comment.strip() if comment and comment.strip() else None
        return value, answered_at or self.clock(), comment

    def submit(
        self,
        item: ItemView,
        answer: Any,
        *,
        answered_at: datetime | None = None,
        flag: bool = False,
        comment: str | None = None,
    ) -> Feedback | None:
        """Store the answer (committed when this returns). Training answers get feedback."""
        value, answered_at, comment = self._prepared(item, answer, answered_at, comment)
        if item.item_id in self.refresher_items or item.phase == TRAINING:
            self._forget_progress()
        if item.item_id in self.refresher_items:
            return retry_transient(
                lambda: catch.store_refresher_answer(self, item, value, answered_at, flag, comment)
            )
        if item.phase == TRAINING:
            return retry_transient(
                lambda: self._submit_training(item, value, answered_at, flag, comment)
            )
        self._store_test(item, value, answered_at, flag, comment, then_next=False)
        return None

    def submit_and_next(
        self,
        item: ItemView,
        answer: Any,
        *,
        answered_at: datetime | None = None,
        flag: bool = False,
        comment: str | None = None,
    ) -> ItemView | None:
        """Store a test answer and reserve the next test item in the same transaction: one
        commit per keypress instead of two. The answer is committed before this returns, so
        the next item is still shown only after the previous answer is safe."""
        if item.phase != TEST:
            raise ValueError("submit_and_next is for test items; training answers get feedback")
        value, answered_at, comment = self._prepared(item, answer, answered_at, comment)
        return self._store_test(item, value, answered_at, flag, comment, then_next=True)

    def _submit_training(self, item, value, answered_at, flag, comment) -> Feedback:
        """Store a training answer. Phases do not overlap: once the gate has decided (a
        researcher, a closed median cohort) no training answer is taken, and the threshold rule
        decides only when every training item is answered, so training is never cut short
        (gate_min_items matters to the median rule's closing, not here)."""
        decided: bool | None = None
        try:
            # The answer and its feedback in one transaction (the feedback is read from what
            # the transaction wrote); the feedback is returned only once it has committed.
            with write_connection(self.engine) as conn:
                # The annotator's lock first, as every transaction that may lease (_upcoming).
                params = {**self._counting(), "b_item": item.item_id}
                (state,) = self._window_then(conn, (_RUN_TRAINING_STATE, params))
                known = state.first()
                stored = None
                if known is not None and known.id is not None:
                    stored = TrainingAnswer(known.value, known.correct, known.gold)
                by_phase: dict[str, tuple[int, int]] | None = None
                if stored is None:
                    if known is not None and known.admitted is not None:
                        raise TrainingClosed(
                            "the gate has decided for you: training is closed, and this "
                            "answer was not stored"
                        )
                    gold = None if known is None else known.gold
                    decided, stored, by_phase = self._store_training(
                        conn, item, value, gold, answered_at, flag, comment
                    )
                else:  # a retry, or another tab's different answer (refused)
                    check_retry(self.spec, stored.value, value)
                # Stored now: the counts just read stand, and the gate's word is the one read
                # before storing (none: training was open) or what this answer decided.
                if by_phase is not None:
                    progress = self._progress_in(conn, by_phase, admitted=decided)
                else:
                    progress = self._progress_in(conn)
                feedback = self._feedback_in(conn, item, decided, stored, progress)
                if by_phase is not None:  # stored now (not a retry)
                    upcoming = self._upcoming(conn, progress, decided, answered_at)
                    feedback = replace(feedback, upcoming=upcoming)
        except IntegrityError:  # answered before (a retried commit): the stored answer stands
            return self._feedback(item, None)
        # Where the annotator stands as this commit left it: the feedback's status line.
        self._progress, self._answered_since = progress, True
        return feedback

    def _upcoming(
        self, conn: Connection, progress: Progress, admitted: bool | None, now: datetime
    ) -> ItemView | None:
        """What comes after a training answer's feedback, in its transaction: the next training
        item; or, when this answer admitted the annotator, their first test item, leased now as
        next_item would lease it (a study without catch items: those are served by their own
        rules, on "continue"). Served with the feedback, at `now` (the answer's time)."""
        if progress.phase is Phase.TRAINING:
            return self._next_training(conn, progress, now)
        if admitted is not True or progress.phase is not Phase.TEST:
            return None
        if self.ctx.protocol.catch_rate > 0 or not self._serves_test_items(conn):
            return None
        leased = assignment.lease_next_item(conn, self.ctx, self.annotator_id, now, mine=0)
        self._stream_done = 0  # just admitted: no test or catch answer yet
        return self._test_view(leased, now)

    def _next_training(
        self, conn: Connection, progress: Progress, at: datetime | None = None
    ) -> ItemView | None:
        """The annotator's next training item in the study's order (a training item takes no
        lease), numbered after `progress`, shown `at` (now unless given); None when none is
        left."""
        params = {"b_study": self.ctx.id, "b_annotator": self.annotator_id}
        row = _RUN_NEXT_TRAINING_ITEM.run(conn, params).first()
        if row is None:
            return None
        number = progress.training_done + 1
        return ItemView(
            row.id, row.source_id, TRAINING, dict(row.fields), number, at or self.clock()
        )

    def _store_training(
        self,
        conn: Connection,
        item: ItemView,
        value,
        gold,
        answered_at,
        flag,
        comment,
    ) -> tuple[bool | None, TrainingAnswer, dict[str, tuple[int, int]]]:
        """The training answer's writes, the gate undecided (the caller read it): the stored
        label, and the gate's decision if this answer made one; what the feedback needs (the
        answer, right or not, the gold) and the annotator's counts after it."""
        right = is_correct(self.spec, value, gold)
        row = label_row(
            self.ctx.id, self.annotator_id, item, TRAINING, value, right, answered_at, flag, comment
        )
        _, counts = run_together(
            conn, assignment.inserting_label(row), (_RUN_BY_PHASE, self._counting())
        )
        by_phase = _phase_counts(counts)
        stored = TrainingAnswer(value, right, gold)
        quota = self._study_sizes(conn)[0]
        if by_phase.get(TRAINING, (0, 0))[0] < quota:
            return None, stored, by_phase  # the threshold rule decides after the last item only
        # Undecided (refused above otherwise), with the counts just read: the rule reads
        # neither again.
        done, right = by_phase[TRAINING]
        me = gate.Trainee(self.annotator_id, self.annotator.name, done, right)
        admitted = gate.decide_threshold(conn, self.ctx, self.annotator_id, me, quota)
        return admitted, stored, by_phase

    def _training_answer(self, conn: Connection | Session, item_id: int) -> TrainingAnswer | None:
        params = {"b_study": self.ctx.id, "b_annotator": self.annotator_id, "b_item": item_id}
        row = conn.execute(_TRAINING_ANSWER, params).first()
        return None if row is None else TrainingAnswer(row.value, row.correct, row.gold)

    def _feedback(self, item: ItemView, decided: bool | None) -> Feedback:
        with read_connection(self.engine) as conn:
            return self._feedback_in(conn, item, decided)

    def _feedback_in(
        self,
        conn: Connection | Session,
        item: ItemView,
        decided: bool | None,
        answer: TrainingAnswer | None = None,
        progress: Progress | None = None,
    ) -> Feedback:
        answer = answer or self._training_answer(conn, item.item_id)
        assert answer is not None
        if progress is not None:
            done, correct = progress.training_done, progress.training_correct
        else:
            done, correct, _ = self._counts(conn)
        explanation = None
        if self.ctx.protocol.show_explanation and self.spec.explanation_field:
            explanation = str(item.fields.get(self.spec.explanation_field) or "") or None
        return Feedback(
            correct=answer.correct,
            gold=answer.gold,
            gold_text=describe(self.spec, answer.gold),
            answer_text=describe(self.spec, answer.value),
            explanation=explanation,
            training_done=done,
            training_accuracy=correct / done if done else 0.0,
            gate_decided=decided,
        )

    def _store_test(
        self, item, value, answered_at, flag, comment, *, then_next: bool
    ) -> ItemView | None:
        """The test keypress: one write transaction that counts the label (refused past k or
        without admission), stores it, gives back the lease and, with `then_next`, leases the
        next item (on SQLite the lease moves onto it). Everything that can be prepared is
        prepared before the lock."""
        before = self._moved_on()
        self._forget_progress()  # until this answer is known to be stored
        if item.item_id in self.catch_items:  # a catch item: stored apart, never scored
            retry_transient(
                lambda: catch.store_catch_answer(self, item, value, answered_at, flag, comment)
            )
            if self._stream_done is not None:  # stored once, even by a retried commit
                self._stream_done += 1
            return self.next_item() if then_next else None
        row = label_row(
            self.ctx.id, self.annotator_id, item, TEST, value, None, answered_at, flag, comment
        )
        capped = self.ctx.protocol.max_test_items_per_annotator is not None

        def write(conn: Connection) -> tuple[Refusal | None, Leased | None, _Counted | None]:
            now = self.clock()
            # The annotator's counts, read once where something needs them: the batch's cap
            # (the count and the next lease) and, with no figures kept from before (the page
            # opens a session per request), where this answer leaves them. One statement in
            # place of up to four (two batch counts after, two reads for the status line),
            # sent with the window's check.
            by_phase = None
            if capped or before is None:
                (counts,) = self._window_then(conn, (_RUN_BY_PHASE, self._counting()))
                by_phase = _phase_counts(counts)
            else:
                self.check_window(conn, lock=True)
            mine = None if by_phase is None else by_phase.get(TEST, (0, 0))[0]
            refusal = None
            stored, released = assignment.count_and_store(
                conn, self.ctx, self.annotator_id, row, mine
            )
            if stored:
                assignment.settle(conn, self.ctx, item.item_id)
            else:
                refusal = assignment.why_not_counted(
                    conn, self.ctx, self.annotator_id, item.item_id
                )
                if refusal is Refusal.NOT_ADMITTED:
                    raise UserError("test items need a passing gate decision")
            if refusal is Refusal.ANSWERED_BEFORE:  # a retry: resume the lease it took
                stored = conn.execute(
                    select(Label.value).where(
                        Label.study_id == self.ctx.id,
                        Label.item_id == item.item_id,
                        Label.annotator_id == self.annotator_id,
                        Label.phase == TEST,
                    )
                ).scalar()
                check_retry(self.spec, stored, value)  # another tab's other answer: refused
                leased = None
                if then_next:
                    leased = assignment.lease_next_item(
                        conn, self.ctx, self.annotator_id, now, mine=mine
                    )
                return refusal, leased, None
            # Given back with the count on PostgreSQL (assignment.count_and_store); else, when
            # the next item follows, moved onto it (one statement for two).
            moving = then_next and refusal is None and not released
            if not released and not moving:
                release_leases(conn, self.ctx, self.annotator_id, item.item_id)
            leased, counted = None, None
            if refusal is None and by_phase is not None:
                mine = (mine or 0) + 1
                counted = _Counted({**by_phase, TEST: (mine, 0)})
            if then_next and refusal is None:  # no lease of ours to resume
                leased = assignment.lease_next_item(
                    conn, self.ctx, self.annotator_id, now, resume=False, mine=mine, moving=moving
                )
            return refusal, leased, counted

        def read(written: tuple[Refusal | None, Leased | None, _Counted | None]) -> _Read:
            refusal, _, counted = written
            if refusal is not None:
                return True
            return False if before is not None else (counted or True)

        # Where the annotator now stands, for the status line: the figures kept from before
        # moved on by this answer (see `progress`), or else from the counts the write read.
        (refusal, leased, _), progress = retry_transient(
            lambda: self._write_then_standing(write, read)
        )
        if progress is None:
            assert before is not None
            progress = replace(before, test_done=before.test_done + 1)
        self._standing_now(progress)
        if refusal is Refusal.FULL:  # the lease was given back (committed) before we say so
            raise ItemTaken(
                "your answer was not needed: other annotators completed this item while it "
                "waited; moving on"
            )
        if refusal is Refusal.BATCH_DONE:
            raise UserError("your batch of test items is complete: this answer was not stored")
        return self._test_view(leased)

    # --- going back -------------------------------------------------------------------------
    def last_answer(self) -> tuple[ItemView, Any] | None:
        """The annotator's most recent test answer, to revise it (training answers are final:
        the gold label has been shown). A catch item looks like a test item, so the answer just
        given to one is the one `u` goes back to."""
        with read_session(self.engine) as session:
            label = self._latest_revisable(session)
            if label is None:
                return None
            self._check_not_exited(session, label)
            number = self._stream_count(session)
            return self._view(session, label.item_id, TEST, number), label.value

    def revise(self, item: ItemView, answer: Any) -> None:
        """Change a test answer; the earlier value is kept as a revision."""
        value = validate_answer(self.spec, answer, item.fields)
        self._forget_progress()

        def work() -> None:
            with write_session(self.engine) as session:
                self.check_window(session.connection())
                label = self._latest_revisable(session)
                if label is None:
                    raise UserError(NOTHING_TO_REVISE)
                if label.item_id != item.item_id:  # a form kept from an earlier item
                    raise UserError(NOT_THE_LAST)
                self._check_not_exited(session, label)
                if label.value == value:
                    return
                if label.phase == catch.CATCH:  # a catch answer stays marked against gold
                    gold = session.scalar(select(Item.gold).where(Item.id == item.item_id))
                    label.correct = is_correct(self.spec, value, gold)
                session.add(
                    LabelRevision(
                        label_id=label.id,
                        old_value=label.value,
                        old_answered_at=label.answered_at,
                        revised_at=self.clock(),
                    )
                )
                label.value = value
                label.answered_at = self.clock()
                label.revisions += 1

        retry_transient(work)

    def _latest_revisable(self, session: Session) -> Label | None:
        """The annotator's most recent test (or catch) answer: the only one `u` may change."""
        return session.scalars(
            select(Label)
            .where(
                Label.study_id == self.ctx.id,
                Label.annotator_id == self.annotator_id,
                Label.phase.in_(REVISABLE),
            )
            .order_by(Label.answered_at.desc(), Label.id.desc())
            .limit(1)
        ).first()

    def _check_not_exited(self, session: Session, label: Label) -> None:
        """A crowd worker's answer given before they took an exit (their code), on this window
        or an earlier one, stands: what they were paid for is what the report counts. So does
        every answer of a window that has taken its exit."""
        exited = Visit.outcome_at >= label.answered_at  # type: ignore[operator]
        if self.visit_id is not None:
            exited = or_(exited, Visit.id == self.visit_id)
        taken = select(Visit.id).where(
            Visit.study_id == self.ctx.id,
            Visit.annotator_id == self.annotator_id,
            Visit.outcome.is_not(None),  # type: ignore[union-attr]
            exited,
        )
        if session.scalar(taken.limit(1)) is not None:
            raise UserError(EXITED)

    def idle(self) -> None:
        """The annotator is reading (the app asks a moment after the last keypress): do the
        store upkeep the keypresses left, the log's checkpoint on SQLite
        (annotate/store/checkpoint.py). A failure leaves the log as it is, still valid: a
        later checkpoint copies it."""
        with contextlib.suppress(DBAPIError, UserError):
            checkpoint.when_idle(self.engine)

    def release(self) -> None:
        """Give back the item on the screen (a clean quit); a crash leaves it leased until the
        lease expires, so a restart resumes it."""
        self._forget_progress()

        def work() -> None:
            with write_connection(self.engine) as conn:
                if self.visit_id is not None:
                    windows.depart(conn, self.visit_id, self.clock())
                    if not windows.is_live(conn, self.ctx.id, self.annotator_id, self.visit_id):
                        return  # the item on screen is the newer window's now: keep its lease
                release_leases(conn, self.ctx, self.annotator_id)

        retry_transient(work)
