"""Schema 14: Prolific studies run through Prolific's API (`annotate prolific`).

- prolificstudy (new): the Prolific studies `annotate prolific create` made for an annotate
  study: the link's role (training, test, all), the Prolific id, the last status, the base
  reward and the participant group study B's filter allows.
- prolificrequest (new): the ledger of calls that change money, a submission or a study, each
  under a unique request key written before the call and marked done after it: a second
  `pay` pays nothing twice, and a `sync` killed mid-way makes no transition twice.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "prolificstudy",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("study_id", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(), nullable=False),
        sa.Column("prolific_id", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("reward_cents", sa.Integer(), nullable=False),
        sa.Column("group_id", sa.String(), nullable=True),
        sa.Column("counts", sa.JSON(), nullable=False),
        sa.Column("counted_at", UTC_TIME, nullable=True),
        sa.Column("created_at", UTC_TIME, nullable=False),
        sa.ForeignKeyConstraint(["study_id"], ["study.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("prolific_id"),
        sa.UniqueConstraint("study_id", "role", name="uq_prolificstudy_study_role"),
    )
    op.create_table(
        "prolificrequest",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("study_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("target", sa.String(), nullable=False),
        sa.Column("state", sa.String(), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.Column("created_at", UTC_TIME, nullable=False),
        sa.Column("done_at", UTC_TIME, nullable=True),
        sa.ForeignKeyConstraint(["study_id"], ["study.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("key"),
    )
    op.create_index(
        "ix_prolificrequest_study_kind", "prolificrequest", ["study_id", "kind"], unique=False
    )
    # Every migration ends by naming its schema number (0.1.0 refuses any number but 1).
    op.execute("UPDATE meta SET value = '14' WHERE key = 'schema_version'")


def downgrade() -> None:
    raise NotImplementedError("stores are upgraded only; restore the backup `migrate` wrote")
