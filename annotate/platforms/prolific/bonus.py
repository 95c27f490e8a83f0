"""Bonuses through Prolific's bulk-bonus API, paid once.

Each worker's bonus is their time on task (annotate/protocol/pay.py) at the hourly rate, less
the base rewards Prolific paid them (not for a submission they returned or that timed out),
less what the ledger says was paid before. It is set up on the Prolific study the worker
took first (every bonus must name a study the participant took part in): set up, shown with
Prolific's total, then paid on confirmation. The pay call is not idempotent, so its request
key is stored before it: a key left pending by a crash counts as paid, and is shown, never
paid again, until the researcher says they checked on Prolific that it was not paid
(`not_paid`).
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass, field

from sqlalchemy import Engine, select
from sqlmodel import Session

from annotate.errors import UserError
from annotate.platforms.prolific import ledger
from annotate.platforms.prolific.client import Prolific, participant_of
from annotate.platforms.prolific.studies import require_studies
from annotate.protocol import pay
from annotate.protocol.studies import StudyContext
from annotate.store.models import Annotator, Visit


@dataclass(frozen=True)
class Owed:
    annotator: str
    platform_id: str
    seconds: float
    base: float
    amount: float
    """The bonus this run pays (what was owed less what was paid)."""
    paid_before: float


@dataclass
class Batch:
    """The bonuses set up on one Prolific study."""

    role: str
    prolific_id: str
    owed: list[Owed]
    bulk_id: str | None = None
    total_cents: float | None = None
    """Prolific's total for the batch (with its fees), in cents."""
    paid: bool = False


@dataclass
class BonusRun:
    batches: list[Batch]
    already: dict[str, float] = field(default_factory=dict)
    """Pseudonym -> what the ledger says was paid before (pending payments included)."""
    unsure: list[str] = field(default_factory=list)
    """Payments whose answer was lost: counted as paid; check them on Prolific."""
    everyone: list[Owed] = field(default_factory=list)
    """Every Prolific worker with their time and base rewards (amount: owed this run)."""
    rejected: list[str] = field(default_factory=list)
    """Pseudonyms with a submission rejected (`sync --reject`): no bonus for that study."""
    unrewarded: list[str] = field(default_factory=list)
    """Pseudonyms with a submission returned or timed out: its reward, which Prolific did not
    pay, is not taken off their bonus."""

    @property
    def total(self) -> float:
        return round(sum(o.amount for b in self.batches for o in b.owed), 2)


def paid_so_far(engine: Engine, ctx: StudyContext) -> tuple[dict[str, float], list[str]]:
    """Pseudonym -> bonus paid (or asked to be paid) before; the keys of unsure payments."""
    paid: dict[str, float] = defaultdict(float)
    unsure = []
    for entry in ledger.entries(engine, ctx, "bonus_pay"):
        if entry.state == ledger.FAILED:
            continue
        if entry.state == ledger.PENDING:
            unsure.append(entry.target)
        for name, amount in entry.detail.get("amounts", {}).items():
            paid[name] = round(paid[name] + float(amount), 2)
    return dict(paid), unsure


def not_paid(engine: Engine, ctx: StudyContext, bulk_ids: list[str]) -> None:
    """The researcher checked on Prolific that these payments, whose answer was lost, were
    not made: their bonuses are owed again, and the next run pays them, on the same set-up.
    Their word is the only guard: Prolific's pay call is not idempotent, and pays a set-up
    again if it paid it before. Every id must be such a payment; none is marked unless all
    are."""
    pending = {e.target: e for e in ledger.entries(engine, ctx, "bonus_pay")}
    unsure = sorted(t for t, e in pending.items() if e.state == ledger.PENDING)
    for bulk_id in bulk_ids:
        if bulk_id not in unsure:
            raise UserError(
                f"{bulk_id} is not a payment whose answer was lost "
                f"({'those are: ' + ', '.join(unsure) if unsure else 'there is none'}); "
                "nothing marked"
            )
    for bulk_id in bulk_ids:
        ledger.finish(engine, pending[bulk_id].key, {"checked": "not paid"}, state=ledger.FAILED)


def rejected_studies(engine: Engine, ctx: StudyContext) -> dict[str, set[str] | None]:
    """Pseudonym -> the Prolific studies whose submission of theirs was rejected (asked for,
    and not refused by Prolific); None: every study (a rejection that did not record its
    study)."""
    out: dict[str, set[str] | None] = {}
    for entry in ledger.entries(engine, ctx, "reject"):
        worker = entry.detail.get("worker")
        if entry.state == ledger.FAILED or not worker:
            continue
        study = entry.detail.get("study")
        known = out.get(worker, set())
        out[worker] = None if study is None or known is None else {*known, str(study)}
    return out


UNREWARDED = frozenset({"RETURNED", "TIMED-OUT"})
"""Submission statuses Prolific pays no reward for (a rejected one: `rejected_studies`)."""


def unrewarded(client: Prolific, engine: Engine, ctx: StudyContext) -> frozenset[tuple[str, str]]:
    """(participant id, Prolific study id) of each place Prolific paid no reward for: every
    submission of that participant to that study returned or timed out. Their time there is
    still paid, and no reward they never had is taken off it."""
    paid, unpaid = set(), set()
    for row in require_studies(engine, ctx):
        for submission in client.submissions(row.prolific_id):
            place = (participant_of(submission), row.prolific_id)
            status = str(submission.get("status") or "")
            (unpaid if status in UNREWARDED else paid).add(place)
    return frozenset(unpaid - paid)


def plan(
    engine: Engine,
    ctx: StudyContext,
    hourly_rate: float,
    *,
    max_bonus: float | None = None,
    unrewarded: frozenset[tuple[str, str]] = frozenset(),
) -> BonusRun:
    """What this run would pay, per Prolific study (computed, nothing sent). `unrewarded`:
    the places whose reward Prolific did not pay (`unrewarded`), not taken off."""
    rows = require_studies(engine, ctx)
    by_id = {r.prolific_id: r for r in rows}
    times = pay.plan_pay(engine, ctx, "prolific", hourly_rate, base=0.0)
    pay.check_max_bonus(max_bonus)
    with Session(engine) as session:
        visits = session.execute(
            select(Annotator.name, Visit.platform_study_id)
            .join(Annotator, Annotator.id == Visit.annotator_id)
            .where(Visit.study_id == ctx.id)
            .order_by(Visit.id)
        ).all()
    taken: dict[str, list[str]] = defaultdict(list)
    for name, platform_study in visits:
        if platform_study in by_id and platform_study not in taken[name]:
            taken[name].append(platform_study)
    already, unsure = paid_so_far(engine, ctx)
    rejected = rejected_studies(engine, ctx)

    def counts(name: str, study: str | None) -> bool:
        """A rejected submission earns no bonus: its time is not paid, nor its reward
        (which Prolific did not pay either) taken off."""
        if name not in rejected:
            return True
        studies = rejected[name]
        return studies is not None and study not in studies

    owed_by_study: dict[str, list[Owed]] = defaultdict(list)
    everyone = []
    without: list[str] = []
    # `plan_pay` gives a line per worker and platform study; the bonus is over the worker's
    # whole time in both studies, less both rewards.
    seconds: dict[str, float] = defaultdict(float)
    workers: dict[str, pay.WorkerPay] = {}
    for line in times.workers:
        workers.setdefault(line.annotator, line)
        if counts(line.annotator, line.platform_study):
            seconds[line.annotator] += line.seconds
    for w in workers.values():
        studies = [s for s in taken.get(w.annotator, []) if counts(w.annotator, s)]
        if not studies:
            continue  # never came by a Prolific study of this annotate study, or rejected
        rewarded = [s for s in studies if (w.platform_id, s) not in unrewarded]
        if len(rewarded) < len(studies):
            without.append(w.annotator)
        base = sum(by_id[s].reward_cents for s in rewarded) / 100
        amount = max(0.0, seconds[w.annotator] / 3600 * hourly_rate - base)
        if max_bonus is not None:
            amount = min(amount, max_bonus)
        before = already.get(w.annotator, 0.0)
        owe = round(round(amount, 2) - before, 2)
        owed = Owed(w.annotator, w.platform_id, seconds[w.annotator], base, max(0.0, owe), before)
        everyone.append(owed)
        if owe >= 0.01:
            owed_by_study[studies[0]].append(owed)
    batches = [
        Batch(r.role, r.prolific_id, owed_by_study[r.prolific_id])
        for r in rows
        if owed_by_study.get(r.prolific_id)
    ]
    return BonusRun(batches, already, unsure, everyone, sorted(rejected), sorted(without))


def csv_lines(owed: list[Owed]) -> str:
    """`participant_id,amount` a line, as Prolific's csv_bonuses takes them."""
    return "".join(f"{o.platform_id},{o.amount:.2f}\n" for o in owed)


def _reusable(engine: Engine, ctx: StudyContext, batch: Batch) -> ledger.Entry | None:
    """A set-up of the same bonuses made before and never paid (a run without --yes)."""
    paid = {e.target for e in ledger.entries(engine, ctx, "bonus_pay") if e.state != ledger.FAILED}
    amounts = {o.annotator: o.amount for o in batch.owed}
    for entry in reversed(ledger.entries(engine, ctx, "bonus_setup")):
        if (
            entry.state == ledger.DONE
            and entry.detail.get("study") == batch.prolific_id
            and entry.detail.get("amounts") == amounts
            and entry.detail.get("bulk_id") not in paid
        ):
            return entry
    return None


def set_up(engine: Engine, ctx: StudyContext, client: Prolific, run: BonusRun) -> None:
    """Set every batch up on Prolific (nothing is paid): its bulk id and Prolific's total."""
    for batch in run.batches:
        amounts = {o.annotator: o.amount for o in batch.owed}
        found = _reusable(engine, ctx, batch)
        if found is not None:
            batch.bulk_id = str(found.detail["bulk_id"])
            batch.total_cents = found.detail.get("total_cents")
            continue
        key = f"bonus_setup:{batch.prolific_id}:{uuid.uuid4().hex[:12]}"
        ledger.begin(
            engine, ctx, key, "bonus_setup", batch.prolific_id,
            {"study": batch.prolific_id, "amounts": amounts},
        )  # fmt: skip
        with ledger.asking(engine, key):
            answer = client.set_up_bonuses(batch.prolific_id, csv_lines(batch.owed))
        batch.bulk_id = str(answer["id"])
        batch.total_cents = answer.get("total_amount")
        ledger.finish(engine, key, {"bulk_id": batch.bulk_id, "total_cents": batch.total_cents})


def pay_all(
    engine: Engine,
    ctx: StudyContext,
    client: Prolific,
    run: BonusRun,
    *,
    hourly_rate: float,
    currency: str,
) -> None:
    """Pay every set-up batch once: its request key first, then the call, then done. The
    amounts are also kept as an `annotate pay` run, for the datasheet."""
    for batch in run.batches:
        if batch.bulk_id is None:
            raise UserError("set the bonuses up before paying them")
        amounts = {o.annotator: o.amount for o in batch.owed}
        key = f"pay:{batch.bulk_id}"
        asked = ledger.get(engine, key)
        if asked is not None and asked.state != ledger.FAILED:
            continue  # asked before (paid, or unsure after a crash): never a second time
        ledger.begin(engine, ctx, key, "bonus_pay", batch.bulk_id, {"amounts": amounts})
        with ledger.asking(engine, key):  # refused for certain: failed, and asked again later
            client.pay_bonuses(batch.bulk_id)
        ledger.finish(engine, key)
        batch.paid = True
    now = {o.annotator: o.amount for b in run.batches if b.paid for o in b.owed}
    if now:
        # The pay of record (the datasheet's effective hourly pay): each worker's bonuses in
        # all, this run's and the earlier ones.
        workers = [
            # One line per worker over both studies: their base is both rewards.
            pay.WorkerPay(
                o.annotator, o.platform_id, None, None, o.seconds, o.base,
                round(o.paid_before + now.get(o.annotator, 0.0), 2), None,
            )
            for o in run.everyone
        ]  # fmt: skip
        pay.record_pay(engine, ctx, pay.PayPlan(workers, hourly_rate, currency))
