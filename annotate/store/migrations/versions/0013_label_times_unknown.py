"""Schema 13: a label's times may be unknown.

label.shown_at and label.answered_at become nullable: a label imported from a file that records
no times (`annotate import-labels` of a batch without them) has none, where it used to get the
moment of the import as both times (exported as 0.000 s, reported as 0.0 s per item). The
labels of studies imported so from a store made before get their times cleared: their import
record says the file had none.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-03
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NO_TIMES = "none in the file"
"""What an import record's detail says of a file without times (formats/label_import.py)."""


def upgrade() -> None:
    with op.batch_alter_table("label", schema=None) as batch_op:
        for column in ("shown_at", "answered_at"):
            batch_op.alter_column(column, existing_type=sa.DateTime(), nullable=True)
    bind = op.get_bind()
    imports = sa.table(
        "labelimport", sa.column("study_id", sa.Integer), sa.column("detail", sa.Text)
    )
    label = sa.table(
        "label",
        sa.column("study_id", sa.Integer),
        sa.column("shown_at", sa.DateTime),
        sa.column("answered_at", sa.DateTime),
    )
    cleared = []
    for study_id, detail in bind.execute(sa.select(imports.c.study_id, imports.c.detail)):
        if isinstance(detail, str):
            detail = json.loads(detail)
        if isinstance(detail, dict) and detail.get("times") == NO_TIMES:
            cleared.append(study_id)
    if cleared:
        bind.execute(
            label.update()
            .where(label.c.study_id.in_(cleared))
            .values(shown_at=None, answered_at=None)
        )
    # Every migration ends by naming its schema number (0.1.0 refuses any number but 1).
    op.execute("UPDATE meta SET value = '13' WHERE key = 'schema_version'")


def downgrade() -> None:
    raise NotImplementedError("stores are upgraded only; restore the backup `migrate` wrote")
