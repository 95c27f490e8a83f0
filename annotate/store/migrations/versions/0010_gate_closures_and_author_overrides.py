"""Schema 10: who closed a gate (and why, when forced), and the author's override reason.

- gateclosure (new): one row per close of a median gate: who closed it, when, whether it was
  forced past the plan's warnings, those warnings and the reason given. Gates closed before
  this schema have no row: who closed them was never recorded, and `gate` says so.
- curation_decision gains `override_reason`: an example's author may settle a dispute about
  it only with a recorded reason (otherwise someone who took no part settles it). Decisions
  made before keep NULL.

Revision ID: 0010
Revises: 0008
Create Date: 2026-12-10
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "gateclosure",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("study_id", sa.Integer(), nullable=False),
        sa.Column("closed_by", sa.String(), nullable=False),
        sa.Column("forced", sa.Boolean(), nullable=False),
        sa.Column("reason", sa.String(), nullable=False),
        sa.Column("warnings", sa.JSON(), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["study_id"], ["study.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_gateclosure_study_id", "gateclosure", ["study_id"])
    with op.batch_alter_table("curation_decision", schema=None) as batch_op:
        batch_op.add_column(sa.Column("override_reason", sa.String(), nullable=True))
    # Every migration ends by naming its schema number (0.1.0 refuses any number but 1).
    op.execute("UPDATE meta SET value = '10' WHERE key = 'schema_version'")


def downgrade() -> None:
    raise NotImplementedError("stores are upgraded only; restore the backup `migrate` wrote")
