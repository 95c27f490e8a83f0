"""The tables of diagnostic-set curation: sets, examples with their edit history, blind reviews
and the decisions that settle disagreements.

One example is one NLI direction (premise -> hypothesis), as one row of `diagnostic-full.tsv`;
the two directions of an authored pair share a `pair_id`. Nothing is deleted: an edit or a
retirement first copies the example's previous values into `CurationRevision`, and acts on
both directions of a pair.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Engine, Index, UniqueConstraint
from sqlmodel import Field, SQLModel

from annotate.store.models import utcnow


class CurationSet(SQLModel, table=True):
    """A diagnostic set that curators extend."""

    __tablename__ = "curation_set"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True)
    labels: str = "three-way"
    """Label scheme: three-way (entailment/neutral/contradiction, GLUE) or two-way (AX-b)."""
    created_by: str = ""
    created_at: datetime = Field(default_factory=utcnow)
    sources: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON))
    """Files imported into the set (name, sha256, format, rows, time): a file is imported once."""


class CurationExample(SQLModel, table=True):
    """One labelled direction of a sentence pair, with its phenomenon tags."""

    __tablename__ = "curation_example"

    id: int | None = Field(default=None, primary_key=True)
    set_id: int = Field(foreign_key="curation_set.id")
    position: int
    """Order in the set (and in its exports): imported rows keep their file order."""
    pair_id: int | None = None
    """Shared by the two directions of one sentence pair (numbered within the set)."""
    premise: str
    hypothesis: str
    label: str
    tags: dict[str, list[str]] = Field(sa_column=Column(JSON, nullable=False))
    """Fine tags per coarse category, every category present (empty list when untagged)."""
    domain: str = ""
    note: str = ""
    """Where the sentence came from, what the edit does: the curator's source note."""
    author: str
    origin: str = "authored"
    """Either authored, or the file and line an imported row came from."""
    source_id: str | None = None
    """The row's id in the imported file (its row number for diagnostic-full.tsv)."""
    version: int = 1
    retired: bool = False
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    sentences_version: int = Field(default=1, sa_column_kwargs={"server_default": "1"})
    """The version that brought the current premise and hypothesis: a review of an earlier
    version judged other sentences, so it is stale (kept, but no longer counted)."""
    sentences_changed_at: datetime | None = None
    """When the sentences last changed after the example was created (None: never)."""
    label_unchecked: bool = Field(default=False, sa_column_kwargs={"server_default": "0"})
    """The sentences changed and nobody has confirmed the label since (a review, an
    adjudication or an explicit label edit clears it)."""

    __table_args__ = (
        UniqueConstraint("set_id", "position", name="uq_curation_example_position"),
        Index("ix_curation_example_set", "set_id", "retired", "position"),
    )


class CurationRevision(SQLModel, table=True):
    """The values an example had at `version`, kept when it changed to the next version."""

    __tablename__ = "curation_revision"

    id: int | None = Field(default=None, primary_key=True)
    example_id: int = Field(foreign_key="curation_example.id", index=True)
    version: int
    snapshot: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    changed_by: str
    reason: str
    """One of edit, retire, restore, adjudication."""
    note: str = ""
    changed_at: datetime = Field(default_factory=utcnow)

    __table_args__ = (
        UniqueConstraint("example_id", "version", name="uq_curation_revision_version"),
    )


class CurationReview(SQLModel, table=True):
    """A second opinion given blind: the reviewer never saw the author's label and tags."""

    __tablename__ = "curation_review"

    id: int | None = Field(default=None, primary_key=True)
    example_id: int = Field(foreign_key="curation_example.id")
    reviewer: str
    label: str
    tags: dict[str, list[str]] = Field(sa_column=Column(JSON, nullable=False))
    note: str = ""
    example_version: int
    """The version of the example the reviewer saw (agreement compares with that version)."""
    created_at: datetime = Field(default_factory=utcnow)

    __table_args__ = (
        # One review per reviewer and version: after the sentences change, the old review is
        # stale and the reviewer may give a new one.
        UniqueConstraint("example_id", "reviewer", "example_version", name="uq_curation_review"),
        Index("ix_curation_review_reviewer", "reviewer"),
    )


class CurationDecision(SQLModel, table=True):
    """The final label and tags of a disputed example, settled by its author or an adjudicator."""

    __tablename__ = "curation_decision"

    id: int | None = Field(default=None, primary_key=True)
    example_id: int = Field(foreign_key="curation_example.id", index=True)
    decided_by: str
    label: str
    tags: dict[str, list[str]] = Field(sa_column=Column(JSON, nullable=False))
    note: str = ""
    covers_review_id: int
    """The newest review this decision took into account; a later disagreeing review reopens."""
    decided_at: datetime = Field(default_factory=utcnow)
    override_reason: str | None = None
    """Set when the example's own author settled it (schema 10): why nobody else could. An
    author's decision without one is refused."""


class CurationSkip(SQLModel, table=True):
    """An example a reviewer passed over: it waits at the back of their review queue, in later
    sessions too, until it changes."""

    __tablename__ = "curation_skip"

    id: int | None = Field(default=None, primary_key=True)
    example_id: int = Field(foreign_key="curation_example.id")
    reviewer: str
    skipped_at: datetime = Field(default_factory=utcnow)

    __table_args__ = (UniqueConstraint("example_id", "reviewer", name="uq_curation_skip"),)


CURATION_TABLES = [
    CurationSet.__table__,
    CurationExample.__table__,
    CurationRevision.__table__,
    CurationReview.__table__,
    CurationDecision.__table__,
    CurationSkip.__table__,
]


def ensure_curation_tables(engine: Engine) -> None:
    """Add the curation tables to a store made before they existed (idempotent: tables that
    exist are left alone). The schema version is unchanged: nothing else differs."""
    SQLModel.metadata.create_all(engine, tables=CURATION_TABLES)  # type: ignore[arg-type]
