"""Schema 12: the answer as given, and one file imported more than one way.

- label gains `raw` (JSON, NULL for labels given in annotate): the answer as the imported file
  wrote it (a slider's number, the platform's answer text) beside the label it was mapped to
  (`value`), so interval-level agreement on the ratings and the export keep it.
- labelimport loses its unique sha256: a file may make several studies when the import's
  options differ (another --values binning, another task); the options are kept in `detail`,
  and sha256 is indexed for the look-up. Imports made before keep their rows as they were.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQLITE_NAMES = {"uq": "uq_%(table_name)s_%(column_0_name)s"}
"""SQLite reflects the unnamed unique constraint without a name: batch mode names it so."""


def upgrade() -> None:
    with op.batch_alter_table("label", schema=None) as batch_op:
        batch_op.add_column(sa.Column("raw", sa.JSON(), nullable=True))
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        with op.batch_alter_table(
            "labelimport", schema=None, naming_convention=SQLITE_NAMES, recreate="always"
        ) as batch_op:
            batch_op.drop_constraint("uq_labelimport_sha256", type_="unique")
    else:
        for unique in sa.inspect(bind).get_unique_constraints("labelimport"):
            if unique["column_names"] == ["sha256"]:
                op.drop_constraint(unique["name"], "labelimport", type_="unique")
    op.create_index("ix_labelimport_sha256", "labelimport", ["sha256"])
    # Every migration ends by naming its schema number (0.1.0 refuses any number but 1).
    op.execute("UPDATE meta SET value = '12' WHERE key = 'schema_version'")


def downgrade() -> None:
    raise NotImplementedError("stores are upgraded only; restore the backup `migrate` wrote")
