"""Where a study stands: per annotator and per item, flags, the last activity, and warnings
(a stuck study, stalled annotators, an open gate with trainees waiting), for `annotate status`
and the console."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, func, select
from sqlmodel import Session

from annotate.protocol import flags, gate
from annotate.protocol.state import derived_state
from annotate.protocol.studies import TEST, StudyContext
from annotate.store.models import (
    Annotator,
    FlagAction,
    GateDecision,
    Label,
    LabelImport,
    Lease,
    StudyItem,
    utcnow,
)

if TYPE_CHECKING:
    from annotate.protocol.progress import StudyProgress

STALLED_AFTER = timedelta(minutes=30)
"""An annotator mid-phase with no label for this long is reported as stalled."""


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
        quota = gate.training_quota(session, ctx.id)
        trainees = {t.annotator_id: t for t in gate.trainees(session, ctx.id)}
        test_done = dict(
            session.execute(
                select(Label.annotator_id, func.count())
                .where(Label.study_id == ctx.id, Label.phase == TEST)
                .group_by(Label.annotator_id)
            ).all()
        )
        ids = set(trainees) | set(test_done)
        who = {
            aid: (name, bool(synthetic))
            for aid, name, synthetic in session.execute(
                select(Annotator.id, Annotator.name, Annotator.synthetic).where(
                    Annotator.id.in_(ids)
                )
            ).all()
        }
        names = {aid: name for aid, (name, _) in who.items()}
        last_seen = {
            aid: aware(at)
            for aid, at in session.execute(
                select(Label.annotator_id, func.max(Label.answered_at))
                .where(Label.study_id == ctx.id)
                .group_by(Label.annotator_id)
            ).all()
        }
        flagged = flags._flag_rows(session, ctx.id)
        flag_counts = {
            "total": len(flagged),
            **Counter(row.state for row in flagged),
            "excluded_items": len(flags.excluded_items(session, ctx.id)),
        }
        for state in (flags.OPEN, flags.RESOLVED, flags.EXCLUDED):
            flag_counts.setdefault(state, 0)
        raised = Counter(row.annotator for row in flagged)
        state = derived_state(session, ctx.id, ctx.k, ctx.study.state)
        # Labels imported from elsewhere (`annotate import-labels`): no gate of ours decided.
        imported = (
            session.scalar(select(LabelImport.id).where(LabelImport.study_id == ctx.id)) is not None
        )
        annotators = []
        for annotator_id in sorted(ids, key=lambda i: names[i]):
            t = trainees.get(annotator_id)
            decision = gate.latest_decision(session, ctx.id, annotator_id)
            verdict = (
                "pending" if decision is None else ("admitted" if decision.admitted else "rejected")
            )
            if imported and decision is None:
                verdict, phase = "unknown", "imported"
            elif verdict == "admitted":
                phase = "test"
            elif verdict == "rejected":
                phase = "rejected"
            else:
                phase = "training" if t is None or t.done < quota else "waiting"
            annotators.append(
                {
                    "name": names[annotator_id],
                    "synthetic": who[annotator_id][1],
                    "phase": phase,
                    "training_done": t.done if t else 0,
                    "training_quota": quota,
                    "training_accuracy": round(t.accuracy, 4) if t else None,
                    "gate": verdict,
                    "test_done": int(test_done.get(annotator_id, 0)),
                    "gate_reason": (decision.reason or "not recorded") if decision else None,
                    "flags": raised.get(names[annotator_id], 0),
                    "last_activity": _iso(last_seen.get(annotator_id)),
                    "_last": last_seen.get(annotator_id),
                }
            )
        rows = session.execute(
            select(StudyItem.n_labels, StudyItem.remaining).where(
                StudyItem.study_id == ctx.id, StudyItem.phase == TEST
            )
        ).all()
        counts = [n for n, _ in rows]
        leased = (
            session.scalar(
                select(func.count(func.distinct(Lease.item_id))).where(
                    Lease.study_id == ctx.id, Lease.expires_at > now
                )
            )
            or 0
        )
    histogram = Counter(counts)
    # The engine's own counter of labels still wanted (annotate/completion.py): complete when
    # it is 0; an open tie is an item at k or more that still wants one.
    complete = sum(1 for n, left in rows if n > 0 and left == 0)
    open_ties = sum(1 for n, left in rows if n >= ctx.k and left > 0)
    decided_early = sum(1 for n, left in rows if 0 < n < ctx.k and left == 0)
    untouched = histogram.get(0, 0)
    saving = early_stop_saving(ctx.k, rows) if ctx.protocol.stop_when_decided else None
    seen = [a["_last"] for a in annotators if a["_last"] is not None]
    warnings = status_warnings(ctx, annotators, state, len(counts), complete, now)
    for a in annotators:
        del a["_last"]
    return {
        "study": ctx.study.name,
        "task": ctx.spec.name,
        "protocol": ctx.protocol.name,
        "state": state,
        "annotators_per_item": ctx.k,
        "annotators": annotators,
        "items_total": len(counts),
        "items_complete": complete,
        "items_open_ties": open_ties,
        "items_decided_early": decided_early,
        "items_in_progress": len(counts) - complete - untouched,
        "items_untouched": untouched,
        "items_on_screen": int(leased),
        "labels_total": sum(counts),
        "labels_per_item": {str(n): histogram[n] for n in sorted(histogram)},
        "last_activity": _iso(max(seen)) if seen else None,
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
    state: str,
    items_total: int,
    items_complete: int,
    now: datetime,
) -> list[str]:
    """What the researcher should act on, in words (shared by `status` and the console)."""
    k, rule, name = ctx.k, ctx.protocol.gate_rule, ctx.study.name
    out: list[str] = []
    admitted = sum(a["gate"] == "admitted" for a in annotators)
    in_training = [a for a in annotators if a["phase"] in ("training", "waiting")]
    decided = any(a["gate"] in ("admitted", "rejected") for a in annotators)
    if items_complete < items_total and admitted < k and decided and not in_training:
        out.append(
            f"stuck: only {admitted} annotator(s) admitted and each item needs {k}, and nobody "
            "is in training: no item can be completed until more annotators are admitted"
        )
    waiting = [a["name"] for a in annotators if a["phase"] == "waiting"]
    if waiting and rule in ("median", "manual"):
        action = "--close" if rule == "median" else "--admit NAME / --reject NAME"
        out.append(
            f"the gate is open and {len(waiting)} trainee(s) wait for it ({', '.join(waiting)}): "
            f"`annotate gate {name} {action}`"
        )
    for a in annotators:
        last = a["_last"]
        mid = a["phase"] == "training" or (
            a["phase"] == "test" and a["test_done"] < items_total and state != "complete"
        )
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
    return status_warnings(
        ctx, annotators, progress.state, progress.n_sample, progress.items_complete, now
    )
