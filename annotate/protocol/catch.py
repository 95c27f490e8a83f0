"""Catch items during the test phase (issue 16): dev items with gold, mixed into an annotator's
test stream at the protocol's `catch_rate`, looking exactly like test items, never counted in
scores, agreement or submission files. They watch for drift: an annotator whose recent catch
accuracy falls below the study's threshold gets a warning (`catch_action = "warn"`) or is sent
back to a short refresher of training items with feedback (`catch_action = "pause"`). The
accuracy that counts as drift is one per study, whoever admitted the annotator
(`catch_threshold`). When a `pause` finds no refresher item left (every training item was
refreshed already), the annotator gets no more test items: the console and `status` warn the
researcher, who can admit them again or leave them out.

Storage, without a schema change:
- the catch pool is the study's StudyItem rows of phase "catch": dev items of the training
  dataset that were not training items (so nobody has seen their gold), drawn in a seeded
  order the first time a catch item is due; when every dev item was a training item, the
  training items themselves (the report says so);
- catch answers are Label rows of phase "catch" (with `correct`), refresher answers Label rows
  of phase "refresher" on StudyItem rows of that phase (copies of the training items).
Every reader of scores, agreement and exports reads phase "test" only.

When a catch item is due is decided from the annotator's count of test-stream answers (test +
catch) with a seeded hash, so it is reproducible and needs no state besides the labels. The
catch item is shown while the next test item stays leased to the annotator, so a catch item is
never served once their test items are done.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import Connection, Engine, func, insert, select

from annotate.protocol.answers import check_retry, describe, is_correct
from annotate.protocol.studies import TEST, TRAINING, StudyContext
from annotate.protocol.views import Feedback, ItemView, label_row
from annotate.store.engine import lock_study, read_connection, write_connection
from annotate.store.models import GateDecision, Item, Label, StudyItem
from annotate.wording import shell_word


class AnnotatorSession(Protocol):
    """What the catch stream needs of the annotator's session (`session.AnnotatorSession`)."""

    engine: Engine
    ctx: StudyContext
    annotator_id: int
    catch_items: set[int]
    refresher_items: set[int]
    clock: Callable[[], datetime]


CATCH = "catch"
REFRESHER = "refresher"
WINDOW = 10
"""Recent catch answers the drift rule looks at."""
MIN_ANSWERS = 5
"""Catch answers needed in the window before drift is judged."""
REFRESHER_ITEMS = 3
"""Items of a refresher round (training items again, with feedback)."""
DEFAULT_MIN_ACCURACY = 0.70
"""Drift threshold of a study whose protocol names none and whose gate gives none (a manual
gate, or a median gate not closed yet)."""

label = Label.__table__  # type: ignore[attr-defined]
study_item = StudyItem.__table__  # type: ignore[attr-defined]


# --- the drift rule (shared by the engine and the report) ------------------------------------


@dataclass(frozen=True)
class Drift:
    recent_accuracy: float
    recent_answers: int
    threshold: float


def drift(correct: Sequence[bool], threshold: float | None) -> Drift | None:
    """The warning, if the last WINDOW catch answers (at least MIN_ANSWERS) are right less often
    than `threshold` (the study's `catch_threshold`); None otherwise."""
    if threshold is None:
        return None
    recent = list(correct)[-WINDOW:]
    if len(recent) < MIN_ANSWERS:
        return None
    accuracy = sum(recent) / len(recent)
    return Drift(accuracy, len(recent), threshold) if accuracy < threshold else None


@dataclass(frozen=True)
class Threshold:
    value: float
    source: str
    """Where it comes from, in words: "catch_min_accuracy", "gate threshold", …"""

    def describe(self) -> str:
        return f"{self.value:.2f} ({self.source})"


def catch_threshold(conn: Any, ctx: StudyContext) -> Threshold:
    """The study's drift threshold, the same for every annotator (admitted by a rule or by
    hand): the protocol's `catch_min_accuracy`, else the gate threshold (threshold rule), else
    the cohort median recorded when the median gate closed, else DEFAULT_MIN_ACCURACY."""
    p = ctx.protocol
    if p.catch_min_accuracy is not None:
        return Threshold(p.catch_min_accuracy, "catch_min_accuracy")
    if p.gate_rule == "threshold" and p.gate_threshold is not None:
        return Threshold(p.gate_threshold, "gate threshold")
    if p.gate_rule == "median":
        median = conn.execute(
            select(GateDecision.threshold)
            .where(
                GateDecision.study_id == ctx.id,
                GateDecision.rule == "median",
                GateDecision.threshold.is_not(None),  # type: ignore[union-attr]
            )
            .order_by(GateDecision.id)  # type: ignore[arg-type]
            .limit(1)
        ).scalar()
        if median is not None:
            return Threshold(float(median), "cohort median at close")
    return Threshold(DEFAULT_MIN_ACCURACY, "default")


def effective_settings(conn: Any, ctx: StudyContext, settings: dict[str, Any]) -> dict[str, Any]:
    """The study's protocol settings with `catch_min_accuracy` the drift threshold in force
    (`catch_threshold`, never the unset None) and `catch_min_accuracy_from` where it comes
    from: what `study show` and the report's effective protocol both print."""
    limit = catch_threshold(conn, ctx)
    return {
        **settings,
        "catch_min_accuracy": limit.value,
        "catch_min_accuracy_from": limit.source,
    }


# --- serving ---------------------------------------------------------------------------------


def is_due(ctx: StudyContext, annotator_id: int, stream_answers: int) -> bool:
    """Whether the annotator's next test-stream item is a catch item (seeded, per position)."""
    key = f"{ctx.protocol.seed}/{ctx.id}/{annotator_id}/{stream_answers}".encode()
    draw = int(hashlib.sha256(key).hexdigest()[:8], 16) / 0x1_0000_0000
    return draw < ctx.protocol.catch_rate


def _answered(conn: Connection, ctx: StudyContext, annotator_id: int, phase: str) -> Any:
    return select(label.c.item_id).where(
        label.c.study_id == ctx.id, label.c.annotator_id == annotator_id, label.c.phase == phase
    )


def _pool_drawn(conn: Connection, ctx: StudyContext, phase: str) -> bool:
    return bool(
        conn.execute(
            select(func.count())
            .select_from(study_item)
            .where(study_item.c.study_id == ctx.id, study_item.c.phase == phase)
        ).scalar()
    )


def _ensure_pool(conn: Connection, ctx: StudyContext, phase: str) -> None:
    """Draw the study's catch (or refresher) pool once. The one study-wide write of the catch
    stream, so the one place it takes the study lock (PostgreSQL; SQLite's write transaction
    holds the database's lock already): only while the pool is not drawn, then read again
    under the lock, so two first catch items at once draw it once and every later one takes
    no lock (the answers and hand-outs of test items take none either: assignment.py)."""
    if _pool_drawn(conn, ctx, phase):
        return
    if conn.dialect.name == "postgresql":
        lock_study(conn, ctx.id)
        if _pool_drawn(conn, ctx, phase):
            return
    pool = _pool_items(conn, ctx, phase)
    if phase == CATCH:
        random.Random(f"{ctx.protocol.seed}/catch").shuffle(pool)
    if pool:
        conn.execute(
            insert(study_item),
            [
                {"study_id": ctx.id, "item_id": i, "phase": phase, "position": n, "n_labels": 0}
                for n, i in enumerate(pool)
            ],
        )


def _pool_items(conn: Connection, ctx: StudyContext, phase: str) -> list[int]:
    """The items a pool is drawn from, in dataset order: for the refresher the training items;
    for catch items the dev items with gold that were not training items, else the training
    items themselves."""
    training = [
        r
        for (r,) in conn.execute(
            select(study_item.c.item_id)
            .where(study_item.c.study_id == ctx.id, study_item.c.phase == TRAINING)
            .order_by(study_item.c.position)
        )
    ]
    if phase == REFRESHER:
        return training
    dataset = ctx.study.train_dataset_id
    fresh: list[int] = []
    if dataset is not None:
        seen = set(training)
        fresh = [
            r
            for (r,) in conn.execute(
                select(Item.id)
                .where(Item.dataset_id == dataset, Item.gold.is_not(None))  # type: ignore[union-attr]
                .order_by(Item.position)
            )
            if r not in seen
        ]
    return fresh or training


def planned(conn: Connection, ctx: StudyContext, annotator_id: int, test_items: int) -> int:
    """How many catch items the annotator's test stream holds if they answer every test item:
    `is_due` at each position, while the pool has an item they have not answered. The
    annotator's screen counts these with the test items, so that its count moves on after a
    catch answer as after any other."""
    pool = conn.execute(
        select(func.count())
        .select_from(study_item)
        .where(study_item.c.study_id == ctx.id, study_item.c.phase == CATCH)
    ).scalar() or len(_pool_items(conn, ctx, CATCH))
    catches = tests = 0
    while tests < test_items:
        if catches < pool and is_due(ctx, annotator_id, catches + tests):
            catches += 1
        else:
            tests += 1
    return catches


def _next_from_pool(
    conn: Connection, ctx: StudyContext, annotator_id: int, phase: str
) -> int | None:
    _ensure_pool(conn, ctx, phase)
    return conn.execute(
        select(study_item.c.item_id)
        .where(
            study_item.c.study_id == ctx.id,
            study_item.c.phase == phase,
            study_item.c.item_id.not_in(_answered(conn, ctx, annotator_id, phase)),
        )
        .order_by(study_item.c.position)
        .limit(1)
    ).scalar()


def _stream_answers(conn: Connection, ctx: StudyContext, annotator_id: int) -> int:
    return int(
        conn.execute(
            select(func.count())
            .select_from(label)
            .where(
                label.c.study_id == ctx.id,
                label.c.annotator_id == annotator_id,
                label.c.phase.in_([TEST, CATCH]),
            )
        ).scalar()
        or 0
    )


def serve_catch(session: AnnotatorSession, number: int) -> ItemView | None:
    """A catch item in place of the next test item when one is due (the test item stays
    leased to this annotator and comes next), else None."""
    ctx = session.ctx
    with read_connection(session.engine) as conn:  # a read: most items are not catch items
        if not is_due(ctx, session.annotator_id, _stream_answers(conn, ctx, session.annotator_id)):
            return None
    with write_connection(session.engine) as conn:
        item_id = _next_from_pool(conn, ctx, session.annotator_id, CATCH)
        if item_id is None:
            return None
        row = conn.execute(select(Item.source_id, Item.fields).where(Item.id == item_id)).one()
    session.catch_items.add(item_id)
    # The same phase and numbering as a test item: the screen cannot tell them apart.
    return ItemView(item_id, row.source_id, TEST, dict(row.fields), number, session.clock())


def store_catch_answer(
    session: AnnotatorSession,
    item: ItemView,
    value: Any,
    answered_at: Any,
    flag: bool,
    comment: str | None,
) -> None:
    """Store a catch answer (phase "catch", marked right or wrong against gold)."""
    ctx = session.ctx
    with write_connection(session.engine) as conn:
        session.check_window(conn)
        gold = conn.execute(select(Item.gold).where(Item.id == item.item_id)).scalar()
        already = conn.execute(
            select(label.c.value).where(
                label.c.study_id == ctx.id,
                label.c.item_id == item.item_id,
                label.c.annotator_id == session.annotator_id,
                label.c.phase == CATCH,
            )
        ).first()
        if already is not None:  # a retry (the stored answer stands), or another tab's
            check_retry(ctx.spec, already[0], value)  # different answer: refused
        else:
            right = is_correct(ctx.spec, value, gold)
            conn.execute(
                insert(label),
                label_row(
                    ctx.id,
                    session.annotator_id,
                    item,
                    CATCH,
                    value,
                    right,
                    answered_at,
                    flag,
                    comment,
                ),
            )
    session.catch_items.discard(item.item_id)


def catch_answers(conn: Any, ctx: StudyContext, annotator_id: int) -> list[tuple[int, bool]]:
    """(label id, right) of the annotator's catch answers, in the order given."""
    rows = conn.execute(
        select(label.c.id, label.c.correct)
        .where(
            label.c.study_id == ctx.id,
            label.c.annotator_id == annotator_id,
            label.c.phase == CATCH,
        )
        .order_by(label.c.answered_at, label.c.id)
    ).all()
    return [(int(i), bool(c)) for i, c in rows]


def refresher_due(conn: Any, ctx: StudyContext, annotator_id: int) -> bool:
    """`pause`: the annotator is drifting at their latest catch answer and has not yet done a
    refresher round since it."""
    done = refresher_round(conn, ctx, annotator_id)
    return done is not None and done < REFRESHER_ITEMS


def refresher_round(conn: Any, ctx: StudyContext, annotator_id: int) -> int | None:
    """`pause`: the refresher answers given since the annotator's latest catch answer, when
    they were drifting at it (a round is due or under way); None otherwise."""
    if ctx.protocol.catch_action != "pause":
        return None
    answers = catch_answers(conn, ctx, annotator_id)
    if not answers or drift([c for _, c in answers], catch_threshold(conn, ctx).value) is None:
        return None
    since = conn.execute(
        select(func.count())
        .select_from(label)
        .where(
            label.c.study_id == ctx.id,
            label.c.annotator_id == annotator_id,
            label.c.phase == REFRESHER,
            label.c.id > max(i for i, _ in answers),
        )
    ).scalar()
    return int(since or 0)


def _refresher_left(conn: Any, ctx: StudyContext, annotator_id: int) -> int:
    """Refresher items the annotator has not answered (each training item is refreshed once)."""
    drawn = [
        i
        for (i,) in conn.execute(
            select(study_item.c.item_id).where(
                study_item.c.study_id == ctx.id, study_item.c.phase == REFRESHER
            )
        )
    ]
    pool = drawn or _pool_items(conn, ctx, REFRESHER)  # not drawn yet: what it is drawn from
    answered = set(conn.execute(_answered(conn, ctx, annotator_id, REFRESHER)).scalars())
    return sum(1 for i in pool if i not in answered)


def refresher_round_size(conn: Any, ctx: StudyContext, annotator_id: int, done: int) -> int:
    """The items of the refresher round under way, `done` of them answered: REFRESHER_ITEMS,
    or fewer when fewer training items are left to refresh (the last round of a study whose
    training items are not a multiple of it), so the notice and the status line do not
    promise items that never come."""
    return min(REFRESHER_ITEMS, done + _refresher_left(conn, ctx, annotator_id))


def refresher_exhausted(conn: Any, ctx: StudyContext, annotator_id: int) -> bool:
    """`pause`: a refresher round is due but no refresher item is left that the annotator has
    not answered (each training item is refreshed once). Such an annotator is served no more
    test items (`session.next_item`), and the researcher is warned (`paused_warning`)."""
    if ctx.protocol.catch_rate <= 0:
        return False
    done = refresher_round(conn, ctx, annotator_id)
    if done is None or done >= REFRESHER_ITEMS:
        return False
    return _refresher_left(conn, ctx, annotator_id) == 0


def paused_warning(conn: Any, ctx: StudyContext, name: str) -> str:
    """The researcher's warning about an annotator `refresher_exhausted` (status, console)."""
    reject = f"annotate gate {shell_word(ctx.study.name)} --reject {shell_word(name)} --reason …"
    return (
        f"{name} is paused: recent catch accuracy is below "
        f"{catch_threshold(conn, ctx).describe()} and no refresher item is left, so they are "
        f"served no more test items (`{reject}` records that they leave)"
    )


def serve_refresher(session: AnnotatorSession) -> ItemView | None:
    """The next refresher item (shown as a training item, with feedback), when one is due."""
    ctx = session.ctx
    with read_connection(session.engine) as conn:
        done = refresher_round(conn, ctx, session.annotator_id)
    if done is None or done >= REFRESHER_ITEMS:
        return None
    with write_connection(session.engine) as conn:
        item_id = _next_from_pool(conn, ctx, session.annotator_id, REFRESHER)
        if item_id is None:  # every training item refreshed already: nothing more to show
            return None
        row = conn.execute(select(Item.source_id, Item.fields).where(Item.id == item_id)).one()
    session.refresher_items.add(item_id)
    fields = dict(row.fields)
    return ItemView(
        item_id, row.source_id, TRAINING, fields, done + 1, session.clock(), refresher=True
    )


def store_refresher_answer(
    session: AnnotatorSession,
    item: ItemView,
    value: Any,
    answered_at: Any,
    flag: bool,
    comment: str | None,
) -> Feedback:
    """Store a refresher answer and give the training feedback for it."""
    ctx = session.ctx
    with write_connection(session.engine) as conn:
        session.check_window(conn)
        gold = conn.execute(select(Item.gold).where(Item.id == item.item_id)).scalar()
        right = is_correct(ctx.spec, value, gold)
        mine = _answered(conn, ctx, session.annotator_id, REFRESHER)
        if item.item_id not in set(conn.execute(mine).scalars()):
            conn.execute(
                insert(label),
                label_row(
                    ctx.id,
                    session.annotator_id,
                    item,
                    REFRESHER,
                    value,
                    right,
                    answered_at,
                    flag,
                    comment,
                ),
            )
        rows = conn.execute(
            select(label.c.correct).where(
                label.c.study_id == ctx.id,
                label.c.annotator_id == session.annotator_id,
                label.c.phase == REFRESHER,
            )
        ).all()
    session.refresher_items.discard(item.item_id)
    explanation = None
    if ctx.protocol.show_explanation and ctx.spec.explanation_field:
        explanation = str(item.fields.get(ctx.spec.explanation_field) or "") or None
    done = len(rows)
    return Feedback(
        correct=right,
        gold=gold,
        gold_text=describe(ctx.spec, gold),
        answer_text=describe(ctx.spec, value),
        explanation=explanation,
        training_done=done,
        training_accuracy=sum(bool(c) for (c,) in rows) / done if done else 0.0,
        gate_decided=None,
    )
