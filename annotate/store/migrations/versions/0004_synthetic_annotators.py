"""Schema 4: annotators made by `annotate simulate` are marked synthetic
(`annotator.synthetic`), so simulate never writes as a real annotator.

Every annotator already in the store migrates as not synthetic (the default): an earlier
simulate run left no mark to tell its annotators apart, and treating a real person as synthetic
would let simulate write in their name. Rename or remove old simulated annotators by hand if
simulate refuses their names.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "annotator",
        sa.Column("synthetic", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    # Every migration ends by naming its schema number (0.1.0 refuses any number but 1).
    op.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")


def downgrade() -> None:
    raise NotImplementedError("stores are upgraded only; restore the backup `migrate` wrote")
