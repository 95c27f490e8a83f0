"""The tables of a store (SQLModel). One store holds datasets, studies and everything people did.

Values that differ in shape between tasks (item fields, gold labels, answers) are JSON columns,
so one schema serves every task; what they hold is described by the task spec.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, UniqueConstraint, false, text
from sqlmodel import Field, SQLModel

from annotate.store import lease_tally


def utcnow() -> datetime:
    return datetime.now(UTC)


class Meta(SQLModel, table=True):
    """Key/value facts about the store itself: schema_version (mirrors the Alembic revision,
    annotate/store/schema.py) and annotate_version (the release that last set the schema).
    Any change to these tables needs a migration script in annotate/store/migrations/."""

    key: str = Field(primary_key=True)
    value: str


class Dataset(SQLModel, table=True):
    """One imported file: a split of a task."""

    id: int | None = Field(default=None, primary_key=True)
    task: str = Field(index=True)
    split: str
    path: str
    sha256: str
    n_items: int
    detail: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    """Extra counts for nested formats (MultiRC paragraphs/answers, ReCoRD passages)."""
    imported_at: datetime = Field(default_factory=utcnow)

    __table_args__ = (UniqueConstraint("task", "sha256", name="uq_dataset_task_sha256"),)


class Item(SQLModel, table=True):
    """One unit an annotator answers: a sentence, a pair, a MultiRC question, a ReCoRD query."""

    id: int | None = Field(default=None, primary_key=True)
    dataset_id: int = Field(foreign_key="dataset.id")
    position: int
    """0-based order in the source file."""
    source_id: str
    """The item's id in the source file (the value written to submissions)."""
    fields: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    gold: Any = Field(default=None, sa_column=Column(JSON, nullable=True))
    """Gold label as written in the source (normalised to text); None where the file has none."""
    tags: dict[str, list[str]] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    """Phenomenon tags per coarse category (diagnostic sets)."""

    __table_args__ = (
        UniqueConstraint("dataset_id", "source_id", name="uq_item_dataset_source"),
        Index("ix_item_dataset_position", "dataset_id", "position"),
    )


class Study(SQLModel, table=True):
    """One run of the protocol on one task."""

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True)
    task: str
    protocol: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    """The effective protocol (preset + task overrides + the study's own settings)."""
    train_dataset_id: int | None = Field(default=None, foreign_key="dataset.id")
    test_dataset_id: int = Field(foreign_key="dataset.id")
    state: str = "training"
    """training -> (gate closed) -> test."""
    created_at: datetime = Field(default_factory=utcnow)
    task_spec: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    """The task spec the study was created with (schema 6), so a study of a custom task given
    by path needs no file on disk afterwards; None only for a task no longer resolvable."""
    crowd: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    """A crowd study's platform settings (schema 9; annotate/protocol/crowd_config.py): the
    platform, the platform study ids it accepts, completion codes, consent, guidelines and
    exit survey. None for a study whose annotators sign in by name."""


class StudyItem(SQLModel, table=True):
    """An item drawn into a study for one phase, with its place in the order."""

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id")
    item_id: int = Field(foreign_key="item.id")
    phase: str
    position: int
    n_labels: int = 0
    """Labels received so far (test phase): kept here so choosing the next item stays cheap."""
    remaining: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    """Labels the item still takes (test phase; schema 6): k - n_labels, then 1 while an
    extra-annotator tie is open, 0 once decided early or complete (annotate/completion.py)."""
    leased: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    """The item's leases, live or run out (test phase; schema 16): kept by triggers on the
    lease table (store/lease_tally.py)."""
    lease_floor: datetime | None = None
    """No later than the earliest expiry of the item's leases; None without leases (schema 16)."""

    __table_args__ = (
        UniqueConstraint("study_id", "phase", "item_id", name="uq_studyitem"),
        # The next-item query on its own (covering: the item id comes with the order): open
        # items (remaining > 0, a range the index seeks to) closest to complete first, then
        # the sample order.
        Index("ix_studyitem_next", "study_id", "phase", "remaining", "position", "item_id"),
    )


class Annotator(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True)
    token_hash: str | None = None
    """Salted scrypt hash of the annotator's token, when the study asks for one."""
    failed_logins: int = 0
    created_at: datetime = Field(default_factory=utcnow)
    synthetic: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    """Made by `annotate simulate`, which writes as no other annotator (schema 4)."""
    platform: str | None = None
    """prolific, mturk or link for a worker who arrived by a platform link (schema 9); their
    name is then a pseudonym (w07), and the id below is shown only where payment needs it."""
    platform_id: str | None = None
    """The worker's id on the platform (PROLIFIC_PID, MTurk workerId, the link's id)."""

    __table_args__ = (UniqueConstraint("platform", "platform_id", name="uq_annotator_platform_id"),)


class CrowdNumber(SQLModel, table=True):
    """The numbers of crowd pseudonyms (schema 15): a worker's first arrival inserts a row and
    is named after its id (w07), so arrivals at the same moment never compete for a name (the
    database hands each its own number, on SQLite and PostgreSQL alike)."""

    __tablename__ = "crowdnumber"

    id: int | None = Field(default=None, primary_key=True)


class Label(SQLModel, table=True):
    """One answer of one annotator to one item in one phase of a study."""

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id")
    item_id: int = Field(foreign_key="item.id")
    annotator_id: int = Field(foreign_key="annotator.id")
    phase: str
    value: Any = Field(sa_column=Column(JSON, nullable=False))
    correct: bool | None = None
    """Training phase only: whether the answer matched gold."""
    shown_at: datetime | None = None
    answered_at: datetime | None = None
    """Both None for a label imported from a file without times (schema 13): unknown, not 0."""
    flag: bool = False
    """The annotator marked a problem with the item."""
    comment: str | None = None
    revisions: int = 0
    raw: Any = Field(default=None, sa_column=Column(JSON(none_as_null=True), nullable=True))
    """Imported labels (schema 12): the answer as the file wrote it (a slider's number, the
    platform's answer text), before `--values` mapped it to `value`; None for labels given here."""

    __table_args__ = (
        UniqueConstraint("study_id", "item_id", "annotator_id", "phase", name="uq_label"),
        Index("ix_label_annotator", "study_id", "annotator_id", "phase"),
        # The flagged labels only (schema 8): listing a study's flags reads just those.
        Index(
            "ix_label_flagged",
            "study_id",
            sqlite_where=text("flag = 1"),
            postgresql_where=text("flag"),
        ),
    )


class LabelRevision(SQLModel, table=True):
    """The earlier value of a label the annotator went back and changed."""

    id: int | None = Field(default=None, primary_key=True)
    label_id: int = Field(foreign_key="label.id", index=True)
    old_value: Any = Field(sa_column=Column(JSON, nullable=False))
    old_answered_at: datetime
    revised_at: datetime = Field(default_factory=utcnow)


class Lease(SQLModel, table=True):
    """A test item on an annotator's screen: reserved so it is not handed to a (k+1)-th person."""

    # A test answer inserts a lease and deletes one, so its foreign keys and indexes are paid at
    # every answer. Kept: on PostgreSQL (1,000 paced crowd workers, issue 38), dropping the
    # foreign keys of both label and lease and the index on (study_id, annotator_id) saved 2%
    # of the CPU per answer, PostgreSQL's own included (3.43 against 3.50 ms, two pairs).
    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id")
    item_id: int = Field(foreign_key="item.id")
    annotator_id: int = Field(foreign_key="annotator.id")
    expires_at: datetime

    __table_args__ = (
        UniqueConstraint("study_id", "item_id", "annotator_id", name="uq_lease"),
        Index("ix_lease_study_annotator", "study_id", "annotator_id"),
        # The next-item query counts an item's live leases from the index alone (schema 15).
        Index("ix_lease_item_expiry", "study_id", "item_id", "expires_at"),
    )


lease_tally.install(Lease.__table__)  # type: ignore[attr-defined]


class GateDecision(SQLModel, table=True):
    """Admission to (or refusal of) the test phase, with the evidence it was based on."""

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id")
    annotator_id: int = Field(foreign_key="annotator.id")
    admitted: bool
    rule: str
    threshold: float | None = None
    """The accuracy needed: the fixed threshold or the cohort median."""
    score: float | None = None
    n_items: int = 0
    cohort: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON))
    """Each trainee's name, count and accuracy when the decision was made."""
    decided_by: str = "rule"
    decided_at: datetime = Field(default_factory=utcnow)
    reason: str | None = None
    """Why, in words: "4 of 5 required training items", "accuracy 0.60 < median 0.80", or the
    researcher's own for a manual decision (schema 7; None for older decisions)."""

    __table_args__ = (Index("ix_gate_study_annotator", "study_id", "annotator_id"),)


class GateClosure(SQLModel, table=True):
    """Who closed a study's training (median rule) and when (schema 10); a close forced past
    the plan's warnings also keeps the warnings and the researcher's reason for overriding."""

    __tablename__ = "gateclosure"

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    closed_by: str
    forced: bool = False
    reason: str = ""
    """Required when forced: why the researcher went past the warnings."""
    warnings: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    closed_at: datetime = Field(default_factory=utcnow)


class FlagAction(SQLModel, table=True):
    """What the researcher did about a flagged item, with who, when and why (schema 7):
    `resolve` one label's flag, `exclude` the item from scoring, or `include` it again. The
    latest exclude/include row of an item decides whether it is excluded."""

    __tablename__ = "flagaction"

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id")
    item_id: int = Field(foreign_key="item.id")
    label_id: int | None = Field(default=None, foreign_key="label.id")
    """The flagged label a `resolve` answers (None for exclude/include, which act on items)."""
    action: str
    by: str
    reason: str
    at: datetime = Field(default_factory=utcnow)

    __table_args__ = (Index("ix_flag_action_study_item", "study_id", "item_id"),)


class Visit(SQLModel, table=True):
    """One window of one annotator on one study (schema 9): a terminal app, a browser tab, an
    arrival by platform link. The latest visit of an annotator on a study is the live one: an
    older window may no longer answer ("continued in another window"). Arrival and departure
    give time on task for pay; a visit that never departs was abandoned."""

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id")
    annotator_id: int = Field(foreign_key="annotator.id")
    client: str = "terminal"
    """terminal, web or link."""
    arrived_at: datetime = Field(default_factory=utcnow)
    last_seen_at: datetime = Field(default_factory=utcnow)
    """The last answer (or consent, survey) of this window."""
    departed_at: datetime | None = None
    """A clean quit or an exit with a completion code; None while open or once abandoned."""
    superseded_at: datetime | None = None
    """When a newer window of the same annotator took over."""
    link_role: str | None = None
    """Which platform link it came by: training, test or all (the two-study median gate)."""
    platform_study_id: str | None = None
    platform_session_id: str | None = None
    """Prolific SESSION_ID, MTurk assignmentId."""
    extras: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    """The link's platform fields (crowd.LinkEntry.extras: MTurk's assignment_id and
    turk_submit_to, to submit and pay the work; the platform study and session) and the
    survey questions skipped; never the worker's platform id, which is on the annotator."""
    consent: bool | None = None
    """True: agreed to the consent text; False: did not (the no-consent code)."""
    outcome: str | None = None
    """completed, screened_out, study_full, no_consent, training_done or not_admitted."""
    outcome_at: datetime | None = None

    __table_args__ = (Index("ix_visit_study_annotator", "study_id", "annotator_id", "id"),)


class SurveyAnswer(SQLModel, table=True):
    """One answer to one question of a crowd study's exit survey (schema 9)."""

    __tablename__ = "surveyanswer"

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id")
    annotator_id: int = Field(foreign_key="annotator.id")
    question: str
    answer: str
    answered_at: datetime = Field(default_factory=utcnow)

    __table_args__ = (
        UniqueConstraint("study_id", "annotator_id", "question", name="uq_survey_answer"),
    )


class Payment(SQLModel, table=True):
    """What `annotate pay` wrote into a bonus file for one worker (schema 9), so the datasheet
    can report the effective hourly pay that was actually paid."""

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id")
    annotator_id: int = Field(foreign_key="annotator.id")
    seconds: float
    """Time on task the amount pays for."""
    amount: float
    """Bonus written to the file (the base reward paid on the platform is `base`)."""
    base: float = 0.0
    currency: str
    hourly_rate: float
    paid_at: datetime = Field(default_factory=utcnow)
    run: int
    """Which `annotate pay` run (the latest run is the pay of record)."""

    __table_args__ = (Index("ix_payment_study_run", "study_id", "run"),)


class LabelImport(SQLModel, table=True):
    """A study whose labels came from a file made outside annotate (schema 11): MTurk batch
    results, a Qualtrics export, Potato or Label Studio output, a long CSV. The file's sha256
    with the import's options (`detail["options"]`, schema 12) recognises a second import of
    it; other options make another study from the same file. `detail` keeps what the report's
    datasheet says about the collection (assignments, what was left out, notes) and the
    pseudonyms of its annotators (`annotators`, in the file's order). A worker's platform id is
    on their annotator row only (schema 20: up to 19 `workers` repeated it, name -> id)."""

    __tablename__ = "labelimport"

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id", unique=True)
    format: str
    path: str
    sha256: str = Field(index=True)
    n_labels: int
    detail: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    imported_at: datetime = Field(default_factory=utcnow)


class ProlificStudy(SQLModel, table=True):
    """A Prolific study made for an annotate study by `annotate prolific create` (schema 13):
    which link it carries (training, test or all), its Prolific id, the participant group its
    filter admits (study B), its reward and the last status annotate set or read."""

    __tablename__ = "prolificstudy"

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id")
    role: str
    """training, test or all: which of the crowd link's roles the Prolific study carries."""
    prolific_id: str = Field(unique=True)
    status: str = "UNPUBLISHED"
    reward_cents: int = 0
    """The base reward of one approved submission (cents of the workspace's currency)."""
    group_id: str | None = None
    """The participant group the study's filter allows (the test study of a two-study gate)."""
    counts: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    """Prolific's submissions per status, as the last `prolific sync` or `status` read them
    (what `annotate status` shows without asking Prolific)."""
    counted_at: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)

    __table_args__ = (UniqueConstraint("study_id", "role", name="uq_prolificstudy_study_role"),)


class ProlificRequest(SQLModel, table=True):
    """The ledger of calls to Prolific that change money, a submission or a study (schema 13).
    A row is written under its request key before the call (state `pending`) and marked `done`
    after it, so a rerun after a crash knows what was asked: it checks, and never asks twice."""

    __tablename__ = "prolificrequest"

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id")
    key: str = Field(unique=True)
    """What the call does, to what: `approve:SUBMISSION`, `pay:BULK_ID`, `publish:STUDY:3` …"""
    kind: str
    """create, publish, pause, stop, group, approve, reject, bonus_setup or bonus_pay."""
    target: str
    """The Prolific id the call acts on (a study, a submission, a bulk bonus payment)."""
    state: str = "pending"
    """pending (asked, answer not recorded), done or failed."""
    detail: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    """What was asked and answered: amounts by pseudonym, a rejection's reason, totals."""
    created_at: datetime = Field(default_factory=utcnow)
    done_at: datetime | None = None

    __table_args__ = (Index("ix_prolificrequest_study_kind", "study_id", "kind"),)
