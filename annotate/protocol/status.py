"""Where a study stands: per annotator and per item (for `annotate status`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Engine, func, select
from sqlmodel import Session

from annotate.protocol import gate
from annotate.protocol.studies import TEST, StudyContext
from annotate.store.models import Annotator, Label, Lease, StudyItem, utcnow


def study_status(engine: Engine, ctx: StudyContext) -> dict[str, Any]:
    now = utcnow()
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
        names = dict(
            session.execute(select(Annotator.id, Annotator.name).where(Annotator.id.in_(ids))).all()
        )
        annotators = []
        for annotator_id in sorted(ids, key=lambda i: names[i]):
            t = trainees.get(annotator_id)
            decision = gate.latest_decision(session, ctx.id, annotator_id)
            verdict = (
                "pending" if decision is None else ("admitted" if decision.admitted else "rejected")
            )
            if verdict == "admitted":
                phase = "test"
            elif verdict == "rejected":
                phase = "rejected"
            else:
                phase = "training" if t is None or t.done < quota else "waiting"
            annotators.append(
                {
                    "name": names[annotator_id],
                    "phase": phase,
                    "training_done": t.done if t else 0,
                    "training_quota": quota,
                    "training_accuracy": round(t.accuracy, 4) if t else None,
                    "gate": verdict,
                    "test_done": int(test_done.get(annotator_id, 0)),
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
    return {
        "study": ctx.study.name,
        "task": ctx.spec.name,
        "protocol": ctx.protocol.name,
        "state": ctx.study.state,
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
