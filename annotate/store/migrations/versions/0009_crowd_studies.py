"""Schema 9: crowd studies (workers who arrive by a Prolific, MTurk or generic link).

- study gains `crowd` (JSON, NULL for a study whose annotators sign in by name): the platform,
  the platform study ids it accepts, completion codes, consent, guidelines and exit survey.
- annotator gains `platform` and `platform_id` (NULL for annotators added by name), unique
  together: a worker's platform id maps to one pseudonymous annotator.
- visit (new): one window of one annotator on one study, with arrival, last answer, departure,
  the link it came by, consent and the outcome (completed, screened_out, ...). Time on task
  for pay, abandoned sessions, and which of two windows is live.
- surveyanswer (new): exit-survey answers. payment (new): what `annotate pay` wrote.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)


def _study_annotator_table(
    name: str, *columns: sa.Column, unique: tuple[str, list[str]] | None = None
) -> None:
    """Create table `name`: an id, the study and annotator a row belongs to, then `columns`;
    the two foreign keys, the primary key and the `unique` (name, columns) constraint last.
    The constraints are made here, in that order: SQLAlchemy writes them in creation order."""
    op.create_table(
        name,
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("study_id", sa.Integer(), nullable=False),
        sa.Column("annotator_id", sa.Integer(), nullable=False),
        *columns,
        sa.ForeignKeyConstraint(["study_id"], ["study.id"]),
        sa.ForeignKeyConstraint(["annotator_id"], ["annotator.id"]),
        sa.PrimaryKeyConstraint("id"),
        *([sa.UniqueConstraint(*unique[1], name=unique[0])] if unique is not None else []),
    )


def upgrade() -> None:
    with op.batch_alter_table("study", schema=None) as batch_op:
        batch_op.add_column(sa.Column("crowd", sa.JSON(), nullable=True))
    with op.batch_alter_table("annotator", schema=None) as batch_op:
        batch_op.add_column(sa.Column("platform", sa.String(), nullable=True))
        batch_op.add_column(sa.Column("platform_id", sa.String(), nullable=True))
        batch_op.create_unique_constraint("uq_annotator_platform_id", ["platform", "platform_id"])
    _study_annotator_table(
        "visit",
        sa.Column("client", sa.String(), nullable=False),
        sa.Column("arrived_at", UTC_TIME, nullable=False),
        sa.Column("last_seen_at", UTC_TIME, nullable=False),
        sa.Column("departed_at", UTC_TIME, nullable=True),
        sa.Column("superseded_at", UTC_TIME, nullable=True),
        sa.Column("link_role", sa.String(), nullable=True),
        sa.Column("platform_study_id", sa.String(), nullable=True),
        sa.Column("platform_session_id", sa.String(), nullable=True),
        sa.Column("extras", sa.JSON(), nullable=False),
        sa.Column("consent", sa.Boolean(), nullable=True),
        sa.Column("outcome", sa.String(), nullable=True),
        sa.Column("outcome_at", UTC_TIME, nullable=True),
    )
    op.create_index("ix_visit_study_annotator", "visit", ["study_id", "annotator_id", "id"])
    _study_annotator_table(
        "surveyanswer",
        sa.Column("question", sa.String(), nullable=False),
        sa.Column("answer", sa.String(), nullable=False),
        sa.Column("answered_at", UTC_TIME, nullable=False),
        unique=("uq_survey_answer", ["study_id", "annotator_id", "question"]),
    )
    _study_annotator_table(
        "payment",
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("amount", sa.Float(), nullable=False),
        sa.Column("base", sa.Float(), nullable=False),
        sa.Column("currency", sa.String(), nullable=False),
        sa.Column("hourly_rate", sa.Float(), nullable=False),
        sa.Column("paid_at", UTC_TIME, nullable=False),
        sa.Column("run", sa.Integer(), nullable=False),
    )
    op.create_index("ix_payment_study_run", "payment", ["study_id", "run"])
    # Every migration ends by naming its schema number (0.1.0 refuses any number but 1).
    op.execute("UPDATE meta SET value = '9' WHERE key = 'schema_version'")


def downgrade() -> None:
    raise NotImplementedError("stores are upgraded only; restore the backup `migrate` wrote")
