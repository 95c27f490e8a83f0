"""Schema 6: how many labels each test item still takes, and the task spec kept with the study.

- studyitem gains `remaining`: the labels the item still takes (annotate/completion.py). It is
  k - n_labels for an ordinary item, 1 while a tie waits for its extra annotator
  (tie_rule = "extra-annotator", which until now was never served), and 0 once the item is
  complete or decided early (stop_when_decided). The next-item index orders by it instead of
  n_labels, so finished items are skipped by a range seek: ix_studyitem_next is rebuilt.
  Existing rows get k - n_labels, or 1 for an item of an extra-annotator study whose k or more
  votes are tied, so those ties now get their extra annotator.
- study gains `task_spec` (JSON): the task spec the study uses, so a study of a custom task
  given by path works after the file is gone. Existing studies get their built-in spec; a task
  that no longer resolves (a custom task whose file is gone) stays NULL and loads by name.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("studyitem", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("remaining", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.drop_index("ix_studyitem_next")
        batch_op.create_index(
            "ix_studyitem_next",
            ["study_id", "phase", "remaining", "position", "item_id"],
            unique=False,
        )
    with op.batch_alter_table("study", schema=None) as batch_op:
        batch_op.add_column(sa.Column("task_spec", sa.JSON(), nullable=True))
    _backfill()
    # Every migration ends by naming its schema number (0.1.0 refuses any number but 1).
    op.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")


def _builtin_spec(task: str) -> dict[str, Any] | None:
    # Imported here: the spec loader is needed only while upgrading, not to list revisions.
    from annotate import specs
    from annotate.errors import UserError

    try:
        return specs.load_task(task).model_dump(mode="json")
    except UserError:
        return None


def _tied(values: list[Any], spec: dict[str, Any] | None) -> bool:
    from annotate import completion

    kind = spec["kind"] if spec else "classification"
    collapse = {
        o["value"]: o.get("collapses_to") or o["value"]
        for o in (spec or {}).get("answer_scale", [])
    }
    return any(completion.tied(u) for u in completion.unit_votes(values, kind, collapse))


def _backfill() -> None:
    conn = op.get_bind()
    study = sa.table(
        "study",
        sa.column("id", sa.Integer),
        sa.column("task", sa.String),
        sa.column("protocol", sa.JSON),
        sa.column("task_spec", sa.JSON),
    )
    item = sa.table(
        "studyitem",
        sa.column("study_id", sa.Integer),
        sa.column("item_id", sa.Integer),
        sa.column("phase", sa.String),
        sa.column("n_labels", sa.Integer),
        sa.column("remaining", sa.Integer),
    )
    label = sa.table(
        "label",
        sa.column("study_id", sa.Integer),
        sa.column("item_id", sa.Integer),
        sa.column("phase", sa.String),
        sa.column("value", sa.JSON),
    )
    for study_id, task, protocol in conn.execute(
        sa.select(study.c.id, study.c.task, study.c.protocol)
    ):
        spec = _builtin_spec(task)
        if spec is not None:
            conn.execute(study.update().where(study.c.id == study_id).values(task_spec=spec))
        k = int(protocol.get("annotators_per_item", 0))
        in_study = (item.c.study_id == study_id) & (item.c.phase == "test")
        conn.execute(
            item.update().where(in_study, item.c.n_labels < k).values(remaining=k - item.c.n_labels)
        )
        if protocol.get("tie_rule") != "extra-annotator":
            continue
        full = conn.execute(sa.select(item.c.item_id).where(in_study, item.c.n_labels >= k))
        for (item_id,) in full.all():
            values = conn.execute(
                sa.select(label.c.value).where(
                    label.c.study_id == study_id,
                    label.c.item_id == item_id,
                    label.c.phase == "test",
                )
            ).scalars()
            if _tied(list(values), spec):
                conn.execute(
                    item.update().where(in_study, item.c.item_id == item_id).values(remaining=1)
                )


def downgrade() -> None:
    raise NotImplementedError("stores are upgraded only; restore the backup `migrate` wrote")
