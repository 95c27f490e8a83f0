"""Verify the invariants of a store (`annotate check`): what the engine promises, checked on the
rows themselves, so a store that went through crashes, full disks or a restore can be trusted.

Each check is one query that returns the offending rows; a healthy store returns none. The
checks read only, on any backend; SQLite stores also get SQLite's own integrity checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import JSON, Engine, and_, exists, func, or_, select, text
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session, SQLModel

from annotate import completion
from annotate.store.engine import StorageError
from annotate.store.json_cells import not_json
from annotate.store.models import (
    Annotator,
    GateDecision,
    Item,
    Label,
    LabelImport,
    Lease,
    Study,
    StudyItem,
)

TEST = "test"
SET_ASIDE = "set-aside"
"""The phase of test labels set aside with their annotator's refusal (protocol/set_aside.py;
written out here, as TEST is: the store knows nothing of the protocol)."""


@dataclass(frozen=True)
class Violation:
    check: str
    """Which invariant is broken (one of CHECKS' names)."""
    detail: str
    study: str | None = None
    item: str | None = None
    """The item's id in its source file."""
    annotator: str | None = None


@dataclass
class CheckReport:
    checks: list[str]
    """The checks that ran, in order."""
    studies: int = 0
    labels: int = 0
    violations: list[Violation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def damaged(self) -> bool:
        """The file itself is damaged (SQLite's integrity check failed): restore a backup."""
        return any(v.check in SQLITE_CHECKS for v in self.violations)

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "checks": self.checks,
            "studies": self.studies,
            "labels": self.labels,
            "violations": [asdict(v) for v in self.violations],
        }


def _votes_reader(task_spec: dict[str, Any] | None) -> Callable[[list[Any]], list[list[int]]]:
    """Label values -> votes per unit, as the engine counts them (the study's stored spec)."""
    kind = (task_spec or {}).get("kind", "classification")
    collapse = {
        o["value"]: o.get("collapses_to") or o["value"]
        for o in (task_spec or {}).get("answer_scale", [])
    }
    return lambda values: completion.unit_votes(values, kind, collapse)


def _item_values(session: Session, study_id: int) -> dict[tuple[int, str], list[Any]]:
    """Each test item's label values in the order they were stored."""
    found: dict[tuple[int, str], list[Any]] = {}
    rows = session.execute(
        select(Item.id, Item.source_id, Label.value)
        .select_from(Label)
        .join(Item, Item.id == Label.item_id)
        .where(Label.study_id == study_id, Label.phase == TEST)
        .order_by(Label.item_id, Label.id)
    )
    for item_id, source_id, value in rows:
        found.setdefault((item_id, source_id), []).append(value)
    return found


def _labels_over_k(session: Session) -> Iterator[Violation]:
    """No test item has labels from more than k annotators (k: the study's protocol), except
    the extra annotators of a tie (tie_rule extra-annotator): each label past k must have come
    while the item was tied (annotate/completion.py). Not for a study of imported labels
    (`annotate import-labels`): its k describes the file, whose platform handed out the items."""
    # One query per study: k lives in the study's JSON protocol, which PostgreSQL cannot group.
    studies = select(Study.id, Study.name, Study.protocol, Study.task_spec).where(
        ~exists().where(LabelImport.study_id == Study.id)
    )
    for study_id, study, protocol, task_spec in session.execute(studies):
        rule = completion.Rule.of(protocol)
        k = rule.k
        rows = session.execute(
            select(Item.source_id, func.count(Label.id))
            .select_from(Label)
            .join(Item, Item.id == Label.item_id)
            .where(Label.study_id == study_id, Label.phase == TEST)
            .group_by(Label.item_id, Item.source_id)
            .having(func.count(Label.id) > k)
        ).all()
        if not rows:
            continue
        votes = _votes_reader(task_spec)
        values = {source: v for (_, source), v in _item_values(session, study_id).items()}
        # An item past k by extra annotators whose tie a set-aside label was part of: its
        # labels were earned as they came, the order they leave is no proof either way.
        aside = set(
            session.execute(
                select(Item.source_id)
                .join(Label, Label.item_id == Item.id)
                .where(Label.study_id == study_id, Label.phase == SET_ASIDE)
            ).scalars()
        )
        for item, n in rows:
            seq = values.get(item, [])
            earned = rule.tie_rule == completion.EXTRA_ANNOTATOR and (
                item in aside
                or all(completion.labels_wanted(votes(seq[:m]), m, rule) > 0 for m in range(k, n))
            )
            if not earned:
                yield Violation("labels_over_k", f"{n} test labels, k = {k}", study, item)


def _remaining_mismatch(session: Session) -> Iterator[Violation]:
    """The labels each test item still takes (which assignment trusts) are what the study's
    rule gives for its stored labels: k - n, 1 for an open extra-annotator tie, 0 when
    complete or decided early (annotate/completion.py, shared with status and the report)."""
    studies = select(Study.id, Study.name, Study.protocol, Study.task_spec)
    for study_id, study, protocol, task_spec in session.execute(studies):
        rule = completion.Rule.of(protocol)
        votes = _votes_reader(task_spec)
        values = _item_values(session, study_id) if rule.needs_votes else {}
        # Judged on the labels stored, not the counter (label_counter checks that one).
        stored = (
            select(func.count(Label.id))
            .where(
                Label.study_id == StudyItem.study_id,
                Label.item_id == StudyItem.item_id,
                Label.phase == TEST,
            )
            .scalar_subquery()
        )
        rows = session.execute(
            select(Item.id, Item.source_id, stored, StudyItem.remaining)
            .select_from(StudyItem)
            .join(Item, Item.id == StudyItem.item_id)
            .where(StudyItem.study_id == study_id, StudyItem.phase == TEST)
        )
        for item_id, source_id, n, remaining in rows:
            seq = values.get((item_id, source_id), [])
            units = votes(seq) if rule.needs_votes else []
            wanted = completion.labels_wanted(units, n, rule)
            if remaining != wanted:
                yield Violation(
                    "labels_remaining",
                    f"takes {remaining} more labels by its counter, {wanted} by the study's rule",
                    study,
                    source_id,
                )


def _counter_mismatch(session: Session) -> Iterator[Violation]:
    """The per-item label counter (which assignment trusts) equals the labels stored."""
    stored = (
        select(func.count(Label.id))
        .where(
            Label.study_id == StudyItem.study_id,
            Label.item_id == StudyItem.item_id,
            Label.phase == TEST,
        )
        .scalar_subquery()
    )
    rows = session.execute(
        select(Study.name, Item.source_id, StudyItem.n_labels, stored)
        .select_from(StudyItem)
        .join(Study, Study.id == StudyItem.study_id)
        .join(Item, Item.id == StudyItem.item_id)
        .where(StudyItem.phase == TEST, StudyItem.n_labels != stored)
    )
    for study, item, counted, n in rows:
        yield Violation("label_counter", f"counter says {counted}, {n} labels stored", study, item)


def _lease_counter_mismatch(session: Session) -> Iterator[Violation]:
    """The per-item lease counter (which the next-item walk trusts, store/lease_tally.py)
    equals the item's leases, and its floor is no later than their earliest expiry."""
    leases = (
        select(
            Lease.study_id,
            Lease.item_id,
            func.count(Lease.id).label("n"),
            func.min(Lease.expires_at).label("first"),
        )
        .group_by(Lease.study_id, Lease.item_id)
        .subquery()
    )
    n = func.coalesce(leases.c.n, 0)
    floor = StudyItem.lease_floor
    rows = session.execute(
        select(Study.name, Item.source_id, StudyItem.leased, n, floor, leases.c.first)
        .select_from(StudyItem)
        .join(Study, Study.id == StudyItem.study_id)
        .join(Item, Item.id == StudyItem.item_id)
        .outerjoin(
            leases,
            and_(leases.c.study_id == StudyItem.study_id, leases.c.item_id == StudyItem.item_id),
        )
        .where(
            StudyItem.phase == TEST,
            or_(
                StudyItem.leased != n,
                and_(n > 0, or_(floor.is_(None), floor > leases.c.first)),
            ),
        )
    )
    for study, item, counted, stored, first_floor, first in rows:
        detail = f"lease counter says {counted}, the store holds {stored}"
        if counted == stored:
            detail = f"lease floor {first_floor} is after the first lease's expiry {first}"
        yield Violation("lease_counter", detail, study, item)


def _test_labels_without_gate(session: Session) -> Iterator[Violation]:
    """Every test label's annotator has a recorded passing gate decision in that study (a
    study of imported labels has no gate of ours: its report says "gate unknown")."""
    admitted = exists().where(
        and_(
            GateDecision.study_id == Label.study_id,
            GateDecision.annotator_id == Label.annotator_id,
            GateDecision.admitted.is_(True),
        )
    )
    rows = session.execute(
        select(Study.name, Item.source_id, Annotator.name)
        .select_from(Label)
        .join(Study, Study.id == Label.study_id)
        .join(Item, Item.id == Label.item_id)
        .join(Annotator, Annotator.id == Label.annotator_id)
        .where(
            Label.phase == TEST,
            ~admitted,
            ~exists().where(LabelImport.study_id == Label.study_id),
        )
        .order_by(Label.id)
    )
    for study, item, annotator in rows:
        yield Violation(
            "test_label_without_gate", "no passing gate decision", study, item, annotator
        )


def _duplicate_labels(session: Session) -> Iterator[Violation]:
    """Nobody labels an item twice in a phase (the unique constraint should make this moot;
    the check covers stores restored or edited by other tools)."""
    rows = session.execute(
        select(Study.name, Item.source_id, Annotator.name, Label.phase, func.count(Label.id))
        .select_from(Label)
        .join(Study, Study.id == Label.study_id)
        .join(Item, Item.id == Label.item_id)
        .join(Annotator, Annotator.id == Label.annotator_id)
        .group_by(Study.name, Item.source_id, Annotator.name, Label.phase, Label.item_id)
        .having(func.count(Label.id) > 1)
    )
    for study, item, annotator, phase, n in rows:
        yield Violation("duplicate_label", f"{n} {phase} labels", study, item, annotator)


def _labels_outside_the_study(session: Session) -> Iterator[Violation]:
    """Labels only on items drawn into that study for that phase (a set-aside label: test)."""
    drawn = exists().where(
        and_(
            StudyItem.study_id == Label.study_id,
            StudyItem.item_id == Label.item_id,
            or_(
                StudyItem.phase == Label.phase,
                and_(Label.phase == SET_ASIDE, StudyItem.phase == TEST),
            ),
        )
    )
    rows = session.execute(
        select(Study.name, Item.source_id, Annotator.name, Label.phase)
        .select_from(Label)
        .join(Study, Study.id == Label.study_id)
        .join(Item, Item.id == Label.item_id)
        .join(Annotator, Annotator.id == Label.annotator_id)
        .where(~drawn)
    )
    for study, item, annotator, phase in rows:
        yield Violation(
            "label_outside_study", f"{phase} label on an item not drawn", study, item, annotator
        )


def _sqlite_integrity(session: Session) -> Iterator[Violation]:
    """SQLite's own page-level check and its foreign-key check."""
    for (message,) in session.execute(text("PRAGMA integrity_check")):
        if message != "ok":
            yield Violation("sqlite_integrity", str(message))
    for table, rowid, parent, _ in session.execute(text("PRAGMA foreign_key_check")):
        yield Violation("foreign_key", dangling_row(table, rowid, parent))
    yield from _unreadable_json(session)


def _unreadable_json(session: Session) -> Iterator[Violation]:
    """A JSON cell that is not JSON (edited by hand): SQLite stores it as any text, and every
    report or export that reads it would fail (PostgreSQL refuses it when written)."""
    from annotate.store import curation_models

    assert curation_models  # the import registers the curation tables on SQLModel.metadata
    try:
        session.execute(text("SELECT json_valid('1')"))
    except DBAPIError:
        return  # a SQLite built without its JSON functions (before 3.38 they were optional)
    present = set(session.scalars(text("SELECT name FROM sqlite_master WHERE type = 'table'")))
    for table in SQLModel.metadata.sorted_tables:
        if table.name not in present:
            continue  # the curation tables, before curation first made them
        for column in table.columns:
            if not isinstance(column.type, JSON):
                continue
            bad = session.execute(
                text(
                    f'SELECT rowid FROM "{table.name}" WHERE "{column.name}" IS NOT NULL '
                    f'AND NOT json_valid("{column.name}") ORDER BY rowid'
                )
            )
            for (rowid,) in bad:
                yield Violation("json_value", not_json(table.name, rowid, column.name))


def dangling_row(table: str, rowid: object, parent: str) -> str:
    """A row of SQLite's `PRAGMA foreign_key_check`, in words (check and migrate say it)."""
    return f"{table} row {rowid} points to a missing {parent} row"


CHECKS: dict[str, Callable[[Session], Iterator[Violation]]] = {
    "labels_over_k": _labels_over_k,
    "label_counter": _counter_mismatch,
    "labels_remaining": _remaining_mismatch,
    "lease_counter": _lease_counter_mismatch,
    "test_label_without_gate": _test_labels_without_gate,
    "duplicate_label": _duplicate_labels,
    "label_outside_study": _labels_outside_the_study,
}
SQLITE_CHECKS: dict[str, Callable[[Session], Iterator[Violation]]] = {
    "sqlite_integrity": _sqlite_integrity,
}


def check_store(engine: Engine) -> CheckReport:
    """Run every check on the store; the report lists each violation found. SQLite's own
    integrity check runs first: on a damaged file the other checks would read garbage (or
    fail), so they are skipped and the damage is the report."""
    checks = dict(SQLITE_CHECKS) if engine.dialect.name == "sqlite" else {}
    checks.update(CHECKS)
    report = CheckReport(checks=list(checks))
    with Session(engine) as session:
        for name, run in checks.items():
            try:
                report.violations.extend(run(session))
            except (DBAPIError, StorageError) as exc:  # StorageError: the engine's error hook
                reason = exc.reason if isinstance(exc, StorageError) else str(exc.orig)
                report.violations.append(Violation(name, f"cannot be read: {reason}"))
            if report.violations and name in SQLITE_CHECKS:
                report.checks = list(SQLITE_CHECKS)
                return report
        report.studies = int(session.scalar(select(func.count(Study.id))) or 0)
        report.labels = int(session.scalar(select(func.count(Label.id))) or 0)
    return report
