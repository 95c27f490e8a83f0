"""Schema 1: the tables of annotate 0.1.0, created from nothing.

A 0.1.0 store already has them and is stamped at this revision by `annotate migrate` (0.1.0
kept its version in meta.schema_version only). Running this one from an empty database builds
the 0.1.0 schema, which is how the migration tests make an old store on PostgreSQL.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "annotator",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("token_hash", sa.String(), nullable=True),
        sa.Column("failed_logins", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "curation_set",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("labels", sa.String(), nullable=False),
        sa.Column("created_by", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sources", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "dataset",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("task", sa.String(), nullable=False),
        sa.Column("split", sa.String(), nullable=False),
        sa.Column("path", sa.String(), nullable=False),
        sa.Column("sha256", sa.String(), nullable=False),
        sa.Column("n_items", sa.Integer(), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.Column("imported_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("task", "sha256", name="uq_dataset_task_sha256"),
    )
    with op.batch_alter_table("dataset", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_dataset_task"), ["task"], unique=False)

    op.create_table(
        "meta",
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("value", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_table(
        "curation_example",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("set_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("pair_id", sa.Integer(), nullable=True),
        sa.Column("premise", sa.String(), nullable=False),
        sa.Column("hypothesis", sa.String(), nullable=False),
        sa.Column("label", sa.String(), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("domain", sa.String(), nullable=False),
        sa.Column("note", sa.String(), nullable=False),
        sa.Column("author", sa.String(), nullable=False),
        sa.Column("origin", sa.String(), nullable=False),
        sa.Column("source_id", sa.String(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("retired", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["set_id"],
            ["curation_set.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("set_id", "position", name="uq_curation_example_position"),
    )
    with op.batch_alter_table("curation_example", schema=None) as batch_op:
        batch_op.create_index(
            "ix_curation_example_set", ["set_id", "retired", "position"], unique=False
        )

    op.create_table(
        "item",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.String(), nullable=False),
        sa.Column("fields", sa.JSON(), nullable=False),
        sa.Column("gold", sa.JSON(), nullable=True),
        sa.Column("tags", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["dataset_id"],
            ["dataset.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("dataset_id", "source_id", name="uq_item_dataset_source"),
    )
    with op.batch_alter_table("item", schema=None) as batch_op:
        batch_op.create_index("ix_item_dataset_position", ["dataset_id", "position"], unique=False)

    op.create_table(
        "study",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("task", sa.String(), nullable=False),
        sa.Column("protocol", sa.JSON(), nullable=False),
        sa.Column("train_dataset_id", sa.Integer(), nullable=True),
        sa.Column("test_dataset_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["test_dataset_id"],
            ["dataset.id"],
        ),
        sa.ForeignKeyConstraint(
            ["train_dataset_id"],
            ["dataset.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "curation_decision",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("example_id", sa.Integer(), nullable=False),
        sa.Column("decided_by", sa.String(), nullable=False),
        sa.Column("label", sa.String(), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("note", sa.String(), nullable=False),
        sa.Column("covers_review_id", sa.Integer(), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["example_id"],
            ["curation_example.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("curation_decision", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_curation_decision_example_id"), ["example_id"], unique=False
        )

    op.create_table(
        "curation_review",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("example_id", sa.Integer(), nullable=False),
        sa.Column("reviewer", sa.String(), nullable=False),
        sa.Column("label", sa.String(), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("note", sa.String(), nullable=False),
        sa.Column("example_version", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["example_id"],
            ["curation_example.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("example_id", "reviewer", name="uq_curation_review"),
    )
    with op.batch_alter_table("curation_review", schema=None) as batch_op:
        batch_op.create_index("ix_curation_review_reviewer", ["reviewer"], unique=False)

    op.create_table(
        "curation_revision",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("example_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("snapshot", sa.JSON(), nullable=False),
        sa.Column("changed_by", sa.String(), nullable=False),
        sa.Column("reason", sa.String(), nullable=False),
        sa.Column("note", sa.String(), nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["example_id"],
            ["curation_example.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("example_id", "version", name="uq_curation_revision_version"),
    )
    with op.batch_alter_table("curation_revision", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_curation_revision_example_id"), ["example_id"], unique=False
        )

    op.create_table(
        "gatedecision",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("study_id", sa.Integer(), nullable=False),
        sa.Column("annotator_id", sa.Integer(), nullable=False),
        sa.Column("admitted", sa.Boolean(), nullable=False),
        sa.Column("rule", sa.String(), nullable=False),
        sa.Column("threshold", sa.Float(), nullable=True),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("n_items", sa.Integer(), nullable=False),
        sa.Column("cohort", sa.JSON(), nullable=True),
        sa.Column("decided_by", sa.String(), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["annotator_id"],
            ["annotator.id"],
        ),
        sa.ForeignKeyConstraint(
            ["study_id"],
            ["study.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("gatedecision", schema=None) as batch_op:
        batch_op.create_index("ix_gate_study_annotator", ["study_id", "annotator_id"], unique=False)

    op.create_table(
        "label",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("study_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("annotator_id", sa.Integer(), nullable=False),
        sa.Column("phase", sa.String(), nullable=False),
        sa.Column("value", sa.JSON(), nullable=False),
        sa.Column("correct", sa.Boolean(), nullable=True),
        sa.Column("shown_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("flag", sa.Boolean(), nullable=False),
        sa.Column("comment", sa.String(), nullable=True),
        sa.Column("revisions", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["annotator_id"],
            ["annotator.id"],
        ),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["item.id"],
        ),
        sa.ForeignKeyConstraint(
            ["study_id"],
            ["study.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("study_id", "item_id", "annotator_id", "phase", name="uq_label"),
    )
    with op.batch_alter_table("label", schema=None) as batch_op:
        batch_op.create_index(
            "ix_label_annotator", ["study_id", "annotator_id", "phase"], unique=False
        )

    op.create_table(
        "lease",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("study_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("annotator_id", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["annotator_id"],
            ["annotator.id"],
        ),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["item.id"],
        ),
        sa.ForeignKeyConstraint(
            ["study_id"],
            ["study.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("study_id", "item_id", "annotator_id", name="uq_lease"),
    )
    with op.batch_alter_table("lease", schema=None) as batch_op:
        batch_op.create_index(
            "ix_lease_study_annotator", ["study_id", "annotator_id"], unique=False
        )

    op.create_table(
        "studyitem",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("study_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("phase", sa.String(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("n_labels", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["item.id"],
        ),
        sa.ForeignKeyConstraint(
            ["study_id"],
            ["study.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("study_id", "phase", "item_id", name="uq_studyitem"),
    )
    with op.batch_alter_table("studyitem", schema=None) as batch_op:
        # Breadth-first order (autogenerate cannot compare expression indexes: written by hand).
        batch_op.create_index(
            "ix_studyitem_order",
            ["study_id", "phase", sa.text("n_labels DESC"), "position"],
            unique=False,
        )

    op.create_table(
        "labelrevision",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("label_id", sa.Integer(), nullable=False),
        sa.Column("old_value", sa.JSON(), nullable=False),
        sa.Column("old_answered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revised_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["label_id"],
            ["label.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("labelrevision", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_labelrevision_label_id"), ["label_id"], unique=False)

    op.execute("INSERT INTO meta (key, value) VALUES ('schema_version', '1')")


def downgrade() -> None:
    raise NotImplementedError("stores are upgraded only; restore the backup `migrate` wrote")
