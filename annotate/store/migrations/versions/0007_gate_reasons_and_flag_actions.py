"""Schema 7: every gate decision says why, and what the researcher did about flagged items.

- gatedecision gains `reason` ("4 of 5 required training items", "accuracy 0.60 < median
  0.80", or the researcher's words for a manual decision). Decisions made before this schema
  keep NULL: their reason was never recorded, and the report says so rather than invent one.
- flagaction (new): a log of what the researcher did about a flagged item: `resolve` a flag
  (one label's flag), `exclude` an item from scoring, `include` it again (undo). Each row says
  who, when and why. An item is excluded when its latest exclude/include row is an exclude.

Revision ID: 0007
Revises: 0005
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("gatedecision", schema=None) as batch_op:
        batch_op.add_column(sa.Column("reason", sa.String(), nullable=True))
    op.create_table(
        "flagaction",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("study_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("label_id", sa.Integer(), nullable=True),
        sa.Column("action", sa.String(), nullable=False),
        sa.Column("by", sa.String(), nullable=False),
        sa.Column("reason", sa.String(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["study_id"], ["study.id"]),
        sa.ForeignKeyConstraint(["item_id"], ["item.id"]),
        sa.ForeignKeyConstraint(["label_id"], ["label.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_flag_action_study_item", "flagaction", ["study_id", "item_id"])
    # Every migration ends by naming its schema number (0.1.0 refuses any number but 1).
    op.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")


def downgrade() -> None:
    raise NotImplementedError("stores are upgraded only; restore the backup `migrate` wrote")
