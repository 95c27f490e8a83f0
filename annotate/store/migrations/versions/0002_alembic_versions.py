"""Schema 2: Alembic keeps the store's revision (the alembic_version table, written by
`annotate migrate` and `annotate init`); meta.schema_version becomes 2.

No table changes shape. The new number is what keeps annotate 0.1.0 away from an upgraded
store: 0.1.0 refuses any schema version but 1, so it cannot write rows that miss what later
migrations add.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Every migration ends by naming its schema number (0.1.0 refuses any number but 1).
    op.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")


def downgrade() -> None:
    raise NotImplementedError("stores are upgraded only; restore the backup `migrate` wrote")
