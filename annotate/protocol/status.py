"""Where a study stands: per annotator and per item, flags, the last activity, and warnings
(a stuck study, stalled annotators, an open gate with trainees waiting), for `annotate status`
and the console."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine, func, select
from sqlmodel import Session

from annotate.protocol import catch, flags, standing
from annotate.protocol.progress import LabelTally, StudyProgress
from annotate.protocol.studies import TEST, TRAINING, StudyContext
from annotate.store import label_times
from annotate.store.models import FlagAction, GateDecision, Label, Lease, utcnow
from annotate.wording import count_of, plural, shell_word

STALLED_AFTER = timedelta(minutes=30)
"""An annotator mid-phase (training, or test with items left: not done) with no label for this
long is reported as stalled."""


def aware(moment: datetime | None) -> datetime | None:
    """Times read back from SQLite are naive; they were written in UTC."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


def _iso(moment: datetime | None) -> str | None:
    moment = aware(moment)
    return moment.isoformat(timespec="seconds") if moment else None


def change_marker(engine: Engine, study_id: int) -> tuple[int, int, int, int]:
    """A cheap check for "anything new?": (labels, max label id, max gate decision id, max flag
    action id), from indexed aggregates in one short read. Poll it; reload only on change.
    (Revisions change a label without adding one: the label count and the ids miss those.)"""
    with Session(engine) as session:
        row = session.execute(
            select(
                select(func.count(Label.id)).where(Label.study_id == study_id).scalar_subquery(),
                select(func.coalesce(func.max(Label.id), 0))
                .where(Label.study_id == study_id)
                .scalar_subquery(),
                select(func.coalesce(func.max(GateDecision.id), 0))
                .where(GateDecision.study_id == study_id)
                .scalar_subquery(),
                select(func.coalesce(func.max(FlagAction.id), 0))
                .where(FlagAction.study_id == study_id)
                .scalar_subquery(),
            )
        ).one()
    return (int(row[0]), int(row[1]), int(row[2]), int(row[3]))


def study_status(
    engine: Engine, ctx: StudyContext, *, now: datetime | None = None
) -> dict[str, Any]:
    """`now` (default: the clock) decides who counts as stalled."""
    now = now or utcnow()
    with Session(engine) as session:
        members = standing.roster(session, ctx.id)
        last_seen = {
            aid: aware(at)
            for aid, at in session.execute(
                select(Label.annotator_id, func.max(Label.answered_at))
                .where(Label.study_id == ctx.id)
                .group_by(Label.annotator_id)
            ).all()
        }
        times = standing.label_times_of(session, ctx.id)
        if times != label_times.RECORDED:  # made-up dates (or none): no "last label 20794 d ago"
            last_seen = {}
        flagged = flags._flag_rows(session, ctx.id)
        flag_counts = {
            "total": len(flagged),
            **Counter(row.state for row in flagged),
            "excluded_items": len(flags.excluded_items(session, ctx.id)),
        }
        for state in (flags.OPEN, flags.RESOLVED, flags.EXCLUDED):
            flag_counts.setdefault(state, 0)
        raised = Counter(row.annotator for row in flagged)
        annotators = []
        for m in members:
            d = m.decision
            annotators.append(
                {
                    "name": m.name,
                    "synthetic": m.synthetic,
                    "phase": m.phase,
                    "training_done": m.training_done,
                    "training_quota": m.quota,
                    "training_accuracy": None
                    if m.training_accuracy is None
                    else round(m.training_accuracy, 4),
                    "gate": m.gate,
                    "test_done": m.test_done,
                    "gate_reason": (d.reason or "not recorded") if d else None,
                    "flags": raised.get(m.name, 0),
                    "last_activity": _iso(last_seen.get(m.annotator_id)),
                    "_last": last_seen.get(m.annotator_id),
                }
            )
        paused = []
        if ctx.protocol.catch_action == "pause" and ctx.protocol.catch_rate > 0:
            conn = session.connection()
            paused = [
                catch.paused_warning(conn, ctx, m.name)
                for m in members
                if m.gate == "admitted" and catch.refresher_exhausted(conn, ctx, m.annotator_id)
            ]
        rows = standing._item_rows(session, ctx.id)
        leased = (
            session.scalar(
                select(func.count(func.distinct(Lease.item_id))).where(
                    Lease.study_id == ctx.id, Lease.expires_at > now
                )
            )
            or 0
        )
        held = standing.unlabelled_on_screen(session, ctx.id, now)
    items = standing.Completeness.of(rows, ctx.k, on_screen=held)
    state = standing.study_state(items, ctx.study.state, any(m.gate == "admitted" for m in members))
    histogram = Counter(n for n, _ in rows)
    complete = items.complete
    saving = early_stop_saving(ctx.k, rows) if ctx.protocol.stop_when_decided else None
    seen = [a["_last"] for a in annotators if a["_last"] is not None]
    imported = any(m.imported for m in members)
    warnings = status_warnings(ctx, annotators, items, now, imported=imported) + paused
    for a in annotators:
        del a["_last"]
    return {
        "study": ctx.study.name,
        "task": ctx.spec.name,
        "protocol": ctx.protocol.name,
        "state": state,
        "annotators_per_item": ctx.k,
        "annotators": annotators,
        "items_total": items.total,
        "items_complete": complete,
        "items_open_ties": items.open_ties,
        "items_decided_early": items.decided_early,
        "items_in_progress": items.in_progress,
        "items_untouched": items.untouched,  # no label, on nobody's screen
        "items_on_screen": int(leased),  # any live lease, labelled or not
        "items_on_screen_unlabelled": items.on_screen,  # no label yet, held by someone
        "labels_total": items.labels,
        "labels_per_item": {str(n): histogram[n] for n in sorted(histogram)},
        # The labels against the plan in the console's words (an early stop, extra annotators)
        "test_labels": LabelTally.of(items, imported=imported).as_json(),
        "last_activity": _iso(max(seen)) if seen else None,
        # "recorded", or for imported labels "durations only" / "none in the file"
        "label_times": times,
        "flags": flag_counts,
        "flagged_items": [
            {
                "label_id": row.label_id,
                "source_id": row.source_id,
                "annotator": row.annotator,
                "phase": row.phase,
                "comment": row.comment,
                "state": row.state,
            }
            for row in flagged
        ],
        "warnings": warnings,
        **({"early_stop": saving} if saving is not None else {}),
        **({"crowd": crowd_counts(engine, ctx, now)} if ctx.study.crowd else {}),
    }


def crowd_counts(engine: Engine, ctx: StudyContext, now: datetime) -> dict[str, Any]:
    """A crowd study's exits per platform study and code (as the platform counts its
    submissions), its workers by their latest exit, and who abandoned (crowd_exits.py's one
    definition); shared by `status` and the console."""
    from annotate.protocol import crowd, crowd_exits

    config = crowd.config_of(ctx)
    assert config is not None
    with Session(engine) as session:
        exits = crowd_exits.exit_counts(session, ctx, config)
        abandoned = crowd_exits.abandoned_workers(session, ctx, now)
        return {
            "platform": config.platform,
            "exits": [
                {
                    "platform_study": e.platform_study,
                    "link": e.link,
                    "outcome": e.outcome,
                    "code": e.code,
                    "workers": e.workers,
                }
                for e in exits
            ],
            "outcomes": crowd.outcome_counts(session, ctx.id),
            "abandoned_workers": len(abandoned),
            "abandoned_sessions": crowd.abandoned_visits(session, ctx, now),
        }


def early_stop_saving(k: int, rows: Sequence[tuple[int, int]]) -> dict[str, Any]:
    """What stop_when_decided saved, over the finished items: (n_labels, remaining) rows."""
    done = [n for n, left in rows if n > 0 and left == 0]
    full = sum(max(n, k) for n in done)
    saved = full - sum(done)
    return {
        "items_decided_early": sum(1 for n in done if n < k),
        "labels_collected": sum(n for n, _ in rows),
        "labels_full_k": full,
        "labels_saved": saved,
        "saved_share": round(saved / full, 4) if full else None,
    }


def status_warnings(
    ctx: StudyContext,
    annotators: list[dict[str, Any]],
    items: standing.Completeness,
    now: datetime,
    *,
    imported: bool = False,
) -> list[str]:
    """What the researcher should act on, in words (shared by `status` and the console). Who
    is mid-phase is their phase's word (standing): someone with no test item left is "done",
    never stalled. `imported`: the labels came from import-labels, so no admission here
    could complete an item a refusal left short."""
    k, rule, name = ctx.k, ctx.protocol.gate_rule, ctx.study.name
    items_total = items.total
    out: list[str] = []
    admitted = sum(a["gate"] == "admitted" for a in annotators)
    in_training = [a for a in annotators if a["phase"] in ("training", "waiting")]
    decided = any(a["gate"] in ("admitted", "rejected") for a in annotators)
    # Imported labels: refusing a worker leaves their items short for good (nothing here
    # collects more, as `gate` says), so "admit more annotators" is no advice to give.
    if standing.cannot_complete(items, admitted, decided, len(in_training), imported=imported):
        out.append(
            f"stuck: only {count_of(admitted, 'annotator')} admitted and each item needs {k}, "
            "and nobody is in training: no item can be completed until more annotators are admitted"
        )
    if items.open_ties:
        out.append(
            f"{items.open_ties} of {items_total} items are tied at k = {k} labels and wait for "
            "an extra annotator (tie_rule extra-annotator): the study is not complete until "
            "another admitted annotator labels them"
        )
    waiting = [a["name"] for a in annotators if a["phase"] == "waiting"]
    if waiting and rule in ("median", "manual"):
        action = "--close" if rule == "median" else "--admit NAME / --reject NAME"
        out.append(
            f"the gate is open and {count_of(len(waiting), 'trainee')} "
            f"{plural(len(waiting), 'waits')} for it ({', '.join(waiting)}): "
            f"`annotate gate {shell_word(name)} {action}`"
        )
    for a in annotators:
        last = a["_last"]
        mid = a["phase"] in (TRAINING, TEST)
        if mid and last is not None and now - last > STALLED_AFTER:
            minutes = int((now - last).total_seconds() // 60)
            out.append(f"{a['name']} has stalled: no label for {minutes} min while in {a['phase']}")
    return out


def progress_warnings(ctx: StudyContext, progress: StudyProgress, now: datetime) -> list[str]:
    """`status_warnings` from what the console's progress tracker has already counted (no
    read): the same rules, words and order as `annotate status`. Cheap enough to call again
    on a timer, which the stalled rule needs (it depends on `now`, not on new labels)."""
    annotators = [
        {
            "name": a.name,
            "phase": a.phase,
            "gate": a.gate,
            "test_done": a.test_done,
            "_last": a.last_activity,
        }
        for a in progress.annotators
    ]
    return status_warnings(ctx, annotators, progress.items, now, imported=progress.imported)
