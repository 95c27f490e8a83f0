"""Pay for a crowd study: each worker's time on task from their visits, times an hourly rate.

Time on task is the union of the worker's visits (arrival to departure, or to the last answer
of a window that was abandoned), so it covers consent, guidelines, training, waiting and test,
and two windows open at once are not paid twice. The bonus file pays that time at the rate,
less the base reward the platform already pays, plus an optional bonus for catch accuracy.

Pay is worked out per platform study, as the platforms pay it: a two-study gate's training
study A and test study B each paid their own base reward to the workers who took them, and
Prolific sets a bonus up within one study. So each (worker, platform study) gets its own line:
the time of the worker's visits by that study's link at the rate, less that study's base
reward (`--base-pay A=1.50,B=2.00`; a plain number is the base reward of every platform
study), capped by --max-bonus; the catch bonus goes with the platform study of the worker's
latest visit. `bonus_lines` writes one study's lines.
"""

from __future__ import annotations

import hashlib
import math
import statistics
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, Integer, func, select
from sqlmodel import Session

from annotate.errors import UserError
from annotate.protocol.catch import CATCH
from annotate.protocol.crowd import refuse_other_platform
from annotate.protocol.status import aware
from annotate.protocol.studies import StudyContext
from annotate.store.engine import write_session
from annotate.store.models import Annotator, Label, Payment, Visit, utcnow
from annotate.text import neutralised


@dataclass(frozen=True)
class BasePay:
    """The base reward each platform study already pays a worker who takes it."""

    every: float = 0.0
    """For a platform study not named in `per_study` (a plain `--base-pay` number)."""
    per_study: dict[str, float] | None = None
    """Platform study id -> its base reward (`--base-pay A=1.50,B=2.00`)."""

    def of(self, platform_study: str | None) -> float:
        if self.per_study is None:
            return self.every
        if platform_study is None or platform_study not in self.per_study:
            named = ", ".join(self.per_study)
            raise UserError(
                f"--base-pay names {named}, not the platform study {platform_study or '(none)'} "
                "workers also took: give each platform study its base reward"
            )
        return self.per_study[platform_study]


def positive_rate(value: float, option: str = "--hourly-rate") -> float:
    """A pay rate: a finite number above 0 (`nan` and `inf` parse as floats, and an
    infinite rate would be paid, and stored as the pay of record)."""
    if not (math.isfinite(value) and value > 0):
        raise UserError(f"{option} must be a number more than 0, not {value}")
    return value


def check_max_bonus(max_bonus: float | None) -> None:
    if max_bonus is not None and not (math.isfinite(max_bonus) and max_bonus >= 0):
        raise UserError(f"--max-bonus must be a number of at least 0, not {max_bonus}")


def parse_base_pay(text: str | None) -> BasePay:
    """`2.00` (every platform study pays 2.00) or `STUDY=AMOUNT,STUDY=AMOUNT`."""
    if text is None or not text.strip():
        return BasePay()
    try:
        if "=" not in text:
            every = float(text)
            if not every >= 0 or every == math.inf:
                raise ValueError
            return BasePay(every)
        per: dict[str, float] = {}
        for part in text.split(","):
            study, _, amount = part.partition("=")
            value = float(amount)
            if not study.strip() or not 0 <= value < math.inf or study.strip() in per:
                raise ValueError
            per[study.strip()] = value
    except ValueError:
        raise UserError(
            f"--base-pay expects an amount (2.00) or STUDY=AMOUNT,STUDY=AMOUNT with each "
            f"platform study once and no amount below 0, got {text!r}"
        ) from None
    return BasePay(per_study=per)


@dataclass(frozen=True)
class WorkerPay:
    annotator: str
    """The pseudonym (what the summary prints)."""
    platform_id: str
    """For the bonus file only."""
    assignment_id: str | None
    """MTurk: the assignment the bonus is paid on (the worker's latest in this study)."""
    platform_study: str | None
    """The platform study this line pays within (None: a link naming none)."""
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
    """One line per worker and platform study."""
    hourly_rate: float
    currency: str
    study: str = ""
    """The annotate study (in MTurk's reason and request token)."""

    @property
    def platform_studies(self) -> list[str | None]:
        """The platform studies paid within, in order (a bonus file each)."""
        return sorted({w.platform_study for w in self.workers}, key=lambda s: s or "")

    @property
    def people(self) -> int:
        return len({w.annotator for w in self.workers})

    def within(self, platform_study: str | None) -> PayPlan:
        """The lines of one platform study."""
        lines = [w for w in self.workers if w.platform_study == platform_study]
        return PayPlan(lines, self.hourly_rate, self.currency, self.study)

    @property
    def total(self) -> float:
        return round(sum(w.amount for w in self.workers), 2)

    @property
    def median_effective_hourly(self) -> float | None:
        """Over workers, each over all the platform studies they were paid within."""
        per: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        for w in self.workers:
            per[w.annotator][0] += w.seconds
            per[w.annotator][1] += w.base + w.amount
        rates = [paid / (secs / 3600) for secs, paid in per.values() if secs > 0]
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


def time_by_platform_study(session: Session, study_id: int) -> dict[tuple[int, str | None], float]:
    """(annotator id, platform study) -> seconds of the worker's visits by that study's link."""
    spans: dict[tuple[int, str | None], list[tuple[datetime, datetime]]] = defaultdict(list)
    for annotator_id, platform_study, arrived, seen, departed in session.execute(
        select(
            Visit.annotator_id,
            Visit.platform_study_id,
            Visit.arrived_at,
            Visit.last_seen_at,
            Visit.departed_at,
        ).where(Visit.study_id == study_id)
    ).all():
        start = aware(arrived)
        end = aware(departed or seen)
        assert start is not None and end is not None
        spans[(annotator_id, platform_study)].append((start, max(start, end)))
    return {key: _intervals_seconds(s) for key, s in spans.items()}


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
    base: BasePay | float = 0.0,
    max_bonus: float | None = None,
    catch_bonus: tuple[float, float] | None = None,
) -> PayPlan:
    """Each worker's pay line per platform study (see the module docstring)."""
    hourly_rate = positive_rate(hourly_rate)
    check_max_bonus(max_bonus)
    bases = base if isinstance(base, BasePay) else BasePay(float(base))
    if bases.every < 0:
        raise UserError("--base-pay cannot be negative")
    refuse_other_platform(ctx, platform, "--format", ("prolific", "mturk", "link"))
    with Session(engine) as session:
        seconds = time_by_platform_study(session, ctx.id)
        people = {
            aid: (name, platform_id)
            for aid, name, platform_id in session.execute(
                select(Annotator.id, Annotator.name, Annotator.platform_id).where(
                    Annotator.id.in_({aid for aid, _ in seconds}), Annotator.platform == platform
                )
            ).all()
        }
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
        assignments: dict[tuple[int, str | None], str] = {}
        latest_study: dict[int, str | None] = {}
        for aid, platform_study, visit_extras in session.execute(
            select(Visit.annotator_id, Visit.platform_study_id, Visit.extras)
            .where(Visit.study_id == ctx.id)
            .order_by(Visit.id)
        ).all():
            latest_study[aid] = platform_study
            if visit_extras.get("assignment_id"):
                assignments[(aid, platform_study)] = visit_extras["assignment_id"]
    workers = []
    for (aid, platform_study), secs in sorted(
        seconds.items(), key=lambda kv: (people.get(kv[0][0], ("",))[0], kv[0][1] or "")
    ):
        if aid not in people:
            continue
        name, platform_id = people[aid]
        study_base = bases.of(platform_study)
        amount = max(0.0, secs / 3600 * hourly_rate - study_base)
        if max_bonus is not None:
            amount = min(amount, max_bonus)
        n, right = catch.get(aid, (0, 0))
        accuracy = right / n if n else None
        last = latest_study.get(aid) == platform_study
        if last and catch_bonus is not None and accuracy is not None:
            amount += catch_bonus[1] if accuracy >= catch_bonus[0] else 0.0
        workers.append(
            WorkerPay(
                name,
                str(platform_id),
                assignments.get((aid, platform_study)),
                platform_study,
                secs,
                study_base,
                round(amount, 2),
                accuracy,
            )
        )
    return PayPlan(workers, hourly_rate, currency, ctx.study.name)


MTURK_HEADER = "WorkerId,AssignmentId,BonusAmount,Reason,UniqueRequestToken"
"""MTurk has no bulk-bonus upload: each line is one SendBonus call, with the parameters it
requires under their API names. The token makes a repeated call (a script run twice) pay
once: MTurk refuses a second bonus with a token it has seen."""


def request_token(plan: PayPlan, w: WorkerPay) -> str:
    """The same for the same payment (study, worker, assignment, amount), in every run: a new
    amount (the worker worked on) is a new payment."""
    key = f"{plan.study}|{w.platform_id}|{w.assignment_id}|{w.amount:.2f}|{plan.currency}"
    return "annotate-" + hashlib.sha256(key.encode()).hexdigest()[:40]


def mturk_reason(plan: PayPlan, w: WorkerPay) -> str:
    """What the worker reads with the bonus (no comma: one CSV cell without quotes)."""
    minutes = w.seconds / 60
    return (
        f"Time on task for {plan.study}: {minutes:.0f} min at "
        f"{plan.hourly_rate:.2f} {plan.currency}/h less the reward"
    )


def bonus_lines(plan: PayPlan, platform: str) -> list[str]:
    """The platform's bonus file of the plan's lines (`plan.within(study)`: one platform
    study's). Prolific: `participant_id,amount` a line, as its bulk bonus box takes them (no
    heading). MTurk: one SendBonus call a line (MTURK_HEADER). Workers owed nothing are left
    out."""
    paid = [w for w in plan.workers if w.amount > 0]
    if platform == "prolific":
        return [f"{w.platform_id},{w.amount:.2f}" for w in paid]
    if platform == "mturk":
        missing = [w.annotator for w in paid if not w.assignment_id]
        if missing:
            raise UserError(f"no MTurk assignment recorded for {', '.join(missing)}")
        return [MTURK_HEADER] + [
            f"{w.platform_id},{w.assignment_id},{w.amount:.2f},{mturk_reason(plan, w)},"
            f"{request_token(plan, w)}"
            for w in paid
        ]
    if platform == "link":
        # The study's own payment system: the id each worker's link carried, and the amount.
        return [LINK_HEADER] + [f"{neutralised(w.platform_id or '')},{w.amount:.2f}" for w in paid]
    raise UserError(f"no bonus file format for platform {platform!r} (prolific, mturk or link)")


LINK_HEADER = "id,amount"
"""The generic link's pay file: the `id` each worker's link carried (`?id=…`), the amount."""


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


MTURK_CURRENCY = "USD"
"""MTurk pays bonuses in US dollars, whatever the requester's country."""
DEFAULT_CURRENCY = "GBP"
"""The rate's currency elsewhere when none is given (Prolific's own, for most accounts)."""


def pay_currency(engine: Engine, ctx: StudyContext, platform: str) -> tuple[str, str | None]:
    """The currency of a pay run given none, and a warning when it is not MTurk's own. On MTurk
    US dollars, unless an earlier run of the study was in another currency (annotate 0.5.0
    named GBP whatever the platform): that one is kept, since its request tokens include the
    currency and new tokens for the same bonuses would let MTurk pay them twice."""
    if platform != "mturk":
        return DEFAULT_CURRENCY, None
    with Session(engine) as session:
        _, earlier = paid_hourly(session, ctx.id)
    if earlier is None or earlier == MTURK_CURRENCY:
        return MTURK_CURRENCY, None
    return earlier, (
        f"warning: MTurk pays bonuses in {MTURK_CURRENCY}; this study's earlier `annotate pay` "
        f"wrote {earlier} in each bonus's reason and request token, and {earlier} is kept so "
        f"that the tokens repeat (MTurk pays a token once). --currency {MTURK_CURRENCY} writes "
        "new tokens: send no bonus of the earlier file again then"
    )


def paid_hourly(session: Session, study_id: int) -> tuple[float | None, str | None]:
    """The median effective hourly pay of the latest `annotate pay` run, and its currency:
    per worker, over all the platform studies they were paid within."""
    run = session.scalar(select(func.max(Payment.run)).where(Payment.study_id == study_id))
    if run is None:
        return None, None
    rows = session.execute(
        select(
            Payment.annotator_id, Payment.seconds, Payment.amount, Payment.base, Payment.currency
        ).where(Payment.study_id == study_id, Payment.run == run)
    ).all()
    per: dict[int, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for aid, secs, amount, base, _ in rows:
        per[aid][0] += secs
        per[aid][1] += amount + base
    rates = [paid / (secs / 3600) for secs, paid in per.values() if secs > 0]
    return (statistics.median(rates) if rates else None), (rows[0][4] if rows else None)
