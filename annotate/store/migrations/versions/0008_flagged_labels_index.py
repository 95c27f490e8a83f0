"""Schema 8: a partial index of the flagged labels.

`status`, the report and the console list a study's flagged labels. Without this index SQLite
seeks every label of the study through ix_label_annotator to test its flag (0.45 s at 500,000
labels, for a handful of flags); the partial index holds the flagged labels only, so the list
costs what the flags are, and a label without a flag costs nothing more to write.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-08
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_label_flagged",
        "label",
        ["study_id"],
        sqlite_where=sa.text("flag = 1"),
        postgresql_where=sa.text("flag"),
    )
    # Every migration ends by naming its schema number (0.1.0 refuses any number but 1).
    op.execute("UPDATE meta SET value = '8' WHERE key = 'schema_version'")


def downgrade() -> None:
    raise NotImplementedError("stores are upgraded only; restore the backup `migrate` wrote")
