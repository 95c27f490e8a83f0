"""Schema 5: curation edits act on pairs, stale reviews, and skips that outlive a session.

- curation_example gains `sentences_version` (the version that brought the current sentences:
  reviews of earlier versions are stale), `sentences_changed_at` and `label_unchecked` (the
  sentences changed and nobody has confirmed the label since). Existing rows get them from
  their history: an example whose sentences were edited before this release has the edit's
  version, and its label is flagged unless it was changed or reviewed after that edit.
- curation_review: one review per example, reviewer *and example version* (was: per example
  and reviewer), so a reviewer can judge the new sentences after an edit.
- curation_skip (new): examples a reviewer passed over, kept at the back of their queue.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("curation_example", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("sentences_version", sa.Integer(), nullable=False, server_default="1")
        )
        batch_op.add_column(
            sa.Column("sentences_changed_at", sa.DateTime(timezone=True), nullable=True)
        )
        batch_op.add_column(
            sa.Column("label_unchecked", sa.Boolean(), nullable=False, server_default="0")
        )
    with op.batch_alter_table("curation_review", schema=None) as batch_op:
        batch_op.drop_constraint("uq_curation_review", type_="unique")
        batch_op.create_unique_constraint(
            "uq_curation_review", ["example_id", "reviewer", "example_version"]
        )
    op.create_table(
        "curation_skip",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("example_id", sa.Integer(), nullable=False),
        sa.Column("reviewer", sa.String(), nullable=False),
        sa.Column("skipped_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["example_id"], ["curation_example.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("example_id", "reviewer", name="uq_curation_skip"),
    )
    _backfill_sentence_versions()
    # Every migration ends by naming its schema number (0.1.0 refuses any number but 1).
    op.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")


def _backfill_sentence_versions() -> None:
    """Examples edited before this schema: find from their revisions when the sentences last
    changed, and flag the label when nothing confirmed it since."""
    conn = op.get_bind()
    meta = sa.MetaData()
    example = sa.Table("curation_example", meta, autoload_with=conn)
    revision_t = sa.Table("curation_revision", meta, autoload_with=conn)
    review = sa.Table("curation_review", meta, autoload_with=conn)
    history: dict[int, list[Any]] = {}
    for row in conn.execute(sa.select(revision_t).order_by(revision_t.c.version)):
        history.setdefault(row.example_id, []).append(row)
    if not history:
        return
    reviewed: dict[int, int] = dict(
        conn.execute(
            sa.select(review.c.example_id, sa.func.max(review.c.example_version)).group_by(
                review.c.example_id
            )
        ).all()
    )
    rows = conn.execute(sa.select(example).where(example.c.id.in_(list(history)))).all()
    for row in rows:
        found = _sentences_change(history[row.id], row)
        if found is None:
            continue
        version, changed_at, label_before = found
        unchecked = label_before == row.label and reviewed.get(row.id, 0) < version
        conn.execute(
            example.update()
            .where(example.c.id == row.id)
            .values(
                sentences_version=version,
                sentences_changed_at=changed_at,
                label_unchecked=unchecked,
            )
        )


def _sentences_change(revisions: list[Any], row: Any) -> tuple[int, datetime, str] | None:
    """(version that brought the current sentences, when, the label before) or None when the
    sentences never changed. Revision v holds the values of version v; the next version (or the
    example itself) holds what the change made of them."""
    versions = [(r.version, _snapshot(r.snapshot)) for r in revisions]
    current = (row.premise, row.hypothesis)
    found = None
    for n, (version, values) in enumerate(versions):
        after = versions[n + 1][1] if n + 1 < len(versions) else {"sentences": current}
        if values["sentences"] != after["sentences"]:
            found = (version + 1, revisions[n].changed_at, values["label"])
    return found


def _snapshot(value: Any) -> dict[str, Any]:
    import json

    data = json.loads(value) if isinstance(value, str) else value
    return {"sentences": (data["premise"], data["hypothesis"]), "label": data["label"]}


def downgrade() -> None:
    raise NotImplementedError("stores are upgraded only; restore the backup `migrate` wrote")
