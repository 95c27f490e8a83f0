"""Pay for a crowd study: each worker's time on task from their visits, times an hourly rate.

Time on task is the union of the worker's visits (arrival to departure, or to the last answer
of a window that was abandoned), so it covers consent, guidelines, training, waiting and test,
and two windows open at once are not paid twice. The bonus file pays that time at the rate,
less the base reward the platform already pays, plus an optional bonus for catch accuracy.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, Integer, func, select
from sqlmodel import Session

from annotate.errors import UserError
from annotate.protocol.catch import CATCH
from annotate.protocol.status import aware
from annotate.protocol.studies import StudyContext
from annotate.store.engine import write_session
from annotate.store.models import Annotator, Label, Payment, Visit, utcnow


@dataclass(frozen=True)
class WorkerPay:
    annotator: str
    """The pseudonym (what the summary prints)."""
    platform_id: str
    """For the bonus file only."""
    assignment_id: str | None
    """MTurk: the assignment the bonus is paid on (the worker's latest)."""
    seconds: float
    base: float
    amount: float
    """The bonus: what the file pays."""
    catch_accuracy: float | None

    @property
    def hours(self) -> float:
        return self.seconds / 3600

    @property
    def effective_hourly(self) -> float | None:
        return (self.base + self.amount) / self.hours if self.seconds > 0 else None


@dataclass(frozen=True)
class PayPlan:
    workers: list[WorkerPay]
    hourly_rate: float
    currency: str

    @property
    def total(self) -> float:
        return round(sum(w.amount for w in self.workers), 2)

    @property
    def median_effective_hourly(self) -> float | None:
        rates = [r for w in self.workers if (r := w.effective_hourly) is not None]
        return statistics.median(rates) if rates else None

    @property
    def below_rate(self) -> list[WorkerPay]:
        """Workers paid less than the rate for their time (a --max-bonus cap)."""
        return [
            w
            for w in self.workers
            if (r := w.effective_hourly) is not None and r < self.hourly_rate - 0.005
        ]


def _intervals_seconds(spans: list[tuple[datetime, datetime]]) -> float:
    """Length of the union of time spans."""
    total, end = 0.0, None
    start = None
    for a, b in sorted(spans):
        if end is None or a > end:
            if end is not None and start is not None:
                total += (end - start).total_seconds()
            start, end = a, b
        elif b > end:
            end = b
    if end is not None and start is not None:
        total += (end - start).total_seconds()
    return total


def time_on_task(session: Session, study_id: int) -> dict[int, float]:
    """annotator id -> seconds on the study, from their visits."""
    spans: dict[int, list[tuple[datetime, datetime]]] = defaultdict(list)
    for annotator_id, arrived, seen, departed in session.execute(
        select(Visit.annotator_id, Visit.arrived_at, Visit.last_seen_at, Visit.departed_at).where(
            Visit.study_id == study_id
        )
    ).all():
        start = aware(arrived)
        end = aware(departed or seen)
        assert start is not None and end is not None
        spans[annotator_id].append((start, max(start, end)))
    return {aid: _intervals_seconds(s) for aid, s in spans.items()}


def parse_catch_bonus(text: str | None) -> tuple[float, float] | None:
    """`MIN:AMOUNT`, e.g. `0.8:0.50`: AMOUNT more for catch accuracy of at least MIN."""
    if text is None:
        return None
    least, sep, amount = text.partition(":")
    try:
        pair = (float(least), float(amount))
    except ValueError:
        pair = (-1.0, -1.0)
    if not sep or not 0 <= pair[0] <= 1 or pair[1] < 0:
        raise UserError(
            f"--bonus-catch-accuracy expects MIN:AMOUNT (MIN between 0 and 1), got {text!r}"
        )
    return pair


def plan_pay(
    engine: Engine,
    ctx: StudyContext,
    platform: str,
    hourly_rate: float,
    *,
    currency: str = "GBP",
    base: float = 0.0,
    max_bonus: float | None = None,
    catch_bonus: tuple[float, float] | None = None,
) -> PayPlan:
    if hourly_rate <= 0:
        raise UserError("--hourly-rate must be more than 0")
    if base < 0:
        raise UserError("--base-pay cannot be negative")
    with Session(engine) as session:
        seconds = time_on_task(session, ctx.id)
        people = session.execute(
            select(Annotator.id, Annotator.name, Annotator.platform_id).where(
                Annotator.id.in_(list(seconds)), Annotator.platform == platform
            )
        ).all()
        catch = {
            aid: (int(n), int(right))
            for aid, n, right in session.execute(
                select(
                    Label.annotator_id,
                    func.count(),
                    func.coalesce(func.sum(Label.correct.cast(Integer)), 0),
                )
                .where(Label.study_id == ctx.id, Label.phase == CATCH)
                .group_by(Label.annotator_id)
            ).all()
        }
        assignments = {
            aid: visit_extras.get("assignment_id")
            for aid, visit_extras in session.execute(
                select(Visit.annotator_id, Visit.extras)
                .where(Visit.study_id == ctx.id)
                .order_by(Visit.id)
            ).all()
            if visit_extras.get("assignment_id")
        }
    workers = []
    for annotator_id, name, platform_id in sorted(people, key=lambda p: p[1]):
        secs = seconds[annotator_id]
        amount = max(0.0, secs / 3600 * hourly_rate - base)
        if max_bonus is not None:
            amount = min(amount, max_bonus)
        n, right = catch.get(annotator_id, (0, 0))
        accuracy = right / n if n else None
        if catch_bonus is not None and accuracy is not None and accuracy >= catch_bonus[0]:
            amount += catch_bonus[1]
        workers.append(
            WorkerPay(
                name,
                str(platform_id),
                assignments.get(annotator_id),
                secs,
                base,
                round(amount, 2),
                accuracy,
            )
        )
    return PayPlan(workers, hourly_rate, currency)


def bonus_lines(plan: PayPlan, platform: str) -> list[str]:
    """The platform's bulk-bonus file. Prolific: `participant_id,amount` a line, as its bulk
    bonus box takes them (no heading). MTurk: worker id, assignment id, amount, with a
    heading (for a script that calls SendBonus). Workers owed nothing are left out."""
    paid = [w for w in plan.workers if w.amount > 0]
    if platform == "prolific":
        return [f"{w.platform_id},{w.amount:.2f}" for w in paid]
    if platform == "mturk":
        missing = [w.annotator for w in paid if not w.assignment_id]
        if missing:
            raise UserError(f"no MTurk assignment recorded for {', '.join(missing)}")
        return ["worker_id,assignment_id,amount"] + [
            f"{w.platform_id},{w.assignment_id},{w.amount:.2f}" for w in paid
        ]
    raise UserError(f"no bonus file format for platform {platform!r} (prolific or mturk)")


def record_pay(engine: Engine, ctx: StudyContext, plan: PayPlan) -> int:
    """Keep what the file paid (the datasheet reports it); the run's number."""
    with write_session(engine) as session:
        run = (
            int(
                session.scalar(
                    select(func.coalesce(func.max(Payment.run), 0)).where(
                        Payment.study_id == ctx.id
                    )
                )
                or 0
            )
            + 1
        )
        ids = dict(
            session.execute(
                select(Annotator.name, Annotator.id).where(
                    Annotator.name.in_([w.annotator for w in plan.workers])
                )
            ).all()
        )
        now = utcnow()
        for w in plan.workers:
            session.add(
                Payment(
                    study_id=ctx.id,
                    annotator_id=ids[w.annotator],
                    seconds=w.seconds,
                    amount=w.amount,
                    base=w.base,
                    currency=plan.currency,
                    hourly_rate=plan.hourly_rate,
                    paid_at=now,
                    run=run,
                )
            )
    return run


def paid_hourly(session: Session, study_id: int) -> tuple[float | None, str | None]:
    """The median effective hourly pay of the latest `annotate pay` run, and its currency."""
    run = session.scalar(select(func.max(Payment.run)).where(Payment.study_id == study_id))
    if run is None:
        return None, None
    rows = session.execute(
        select(Payment.seconds, Payment.amount, Payment.base, Payment.currency).where(
            Payment.study_id == study_id, Payment.run == run
        )
    ).all()
    rates = [(amount + base) / (secs / 3600) for secs, amount, base, _ in rows if secs > 0]
    return (statistics.median(rates) if rates else None), (rows[0][3] if rows else None)
