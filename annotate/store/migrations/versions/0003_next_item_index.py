"""Schema 3: the index that serves the next-item query on its own.

Choosing an annotator's next test item walks a study's open test items fullest first, then in
sample order, and needs each candidate's item id. ix_studyitem_order had the order but not the
id, so every candidate cost a lookup in the table as well; ix_studyitem_next carries the id
(a covering index) and replaces it.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("studyitem", schema=None) as batch_op:
        batch_op.drop_index("ix_studyitem_order")
        # Expression index (n_labels DESC): autogenerate cannot compare it, written by hand.
        batch_op.create_index(
            "ix_studyitem_next",
            ["study_id", "phase", sa.text("n_labels DESC"), "position", "item_id"],
            unique=False,
        )
    # Every migration ends by naming its schema number (0.1.0 refuses any number but 1).
    op.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")


def downgrade() -> None:
    raise NotImplementedError("stores are upgraded only; restore the backup `migrate` wrote")
