"""Schema 18: MNLI's halves imported from the Hub's combined `mnli` folder by 0.5.0 get their
plain split names.

0.5.0 stored MNLI-m's dev and test from that folder as `dev_matched` and `test_matched`, and
MNLI-mm's as `dev_mismatched` and `test_mismatched`, so `study create` found no dev or test set
of either (it looks for `dev` and `test`, as this release stores them). A dataset whose split is
its own task's half of a split is renamed to that split; nothing else changes. The other half's
splits 0.5.0 stored under each task (MNLI-m's `dev_mismatched`) keep their names, which say what
they are: a study made with one by its id keeps it, and no default picks it.

The tasks and their suffixes are written out here, as of this schema (tasks/glue/mnli-*.toml's
`split_suffix`): a migration must not read files that later releases may change.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import context, op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OWN_HALVES = {
    "glue/mnli-m": {"dev_matched": "dev", "test_matched": "test"},
    "glue/mnli-mm": {"dev_mismatched": "dev", "test_mismatched": "test"},
}
"""Per task, the split names 0.5.0 stored for its own half, and the name each has now."""


def upgrade() -> None:
    bind = op.get_bind()
    dataset = sa.table(
        "dataset", sa.column("id", sa.Integer), sa.column("task"), sa.column("split")
    )
    notes = []
    for task, names in OWN_HALVES.items():
        for old, new in names.items():
            mine = (dataset.c.task == task) & (dataset.c.split == old)
            ids = list(bind.execute(sa.select(dataset.c.id).where(mine).order_by(dataset.c.id)))
            if ids:
                bind.execute(sa.update(dataset).where(mine).values(split=new))
                numbers = ", ".join(str(i) for (i,) in ids)
                which = "dataset" if len(ids) == 1 else "datasets"
                notes.append(f"{task} {which} {numbers}: split {old} is now {new}")
    context.config.attributes.setdefault("notes", []).extend(notes)
    # Every migration ends by naming its schema number (0.1.0 refuses any number but 1).
    op.execute("UPDATE meta SET value = '18' WHERE key = 'schema_version'")


def downgrade() -> None:
    raise NotImplementedError("stores are upgraded only; restore the backup `migrate` wrote")
