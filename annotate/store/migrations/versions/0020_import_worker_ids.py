"""Schema 20: an import's record no longer repeats its workers' platform ids.

Up to schema 19 `annotate import-labels` kept each worker's platform id (an MTurk WorkerId, a
Prolific PID, a tool's user name) twice: on the worker's annotator row (annotator.platform and
platform_id, which payment files, allow-lists and `annotator show` read) and in the import's
record (`labelimport.detail["workers"]`: pseudonym -> id), which nothing needs: a platform id
is personal data, kept only where payment needs it. The code now records the pseudonyms alone
(`detail["annotators"]`, in the file's order); this migration does the same to the records a
store holds.

An id is removed from a record only once its annotator row holds it. Every release wrote both
in one transaction, so the row holds it; a row that has no platform id (cleared by hand) gets
the record's back first, so nothing payment reads is lost. Where the row holds another id, or
no annotator has that name, the pair stays in `workers` (it may be the only copy) and migrate
says so. On SQLite `annotate migrate` writes a backup first, which keeps every record as it was.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-07
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import context, op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_import = sa.table("labelimport", sa.column("id", sa.Integer), sa.column("detail", sa.JSON))
_annotator = sa.table(
    "annotator",
    sa.column("id", sa.Integer),
    sa.column("name", sa.String),
    sa.column("platform", sa.String),
    sa.column("platform_id", sa.String),
)


def upgrade() -> None:
    bind = op.get_bind()
    notes = _drop_worker_ids(bind)
    context.config.attributes.setdefault("notes", []).extend(notes)
    # Every migration ends by naming its schema number (0.1.0 refuses any number but 1).
    op.execute("UPDATE meta SET value = '20' WHERE key = 'schema_version'")


def _drop_worker_ids(bind: sa.Connection) -> list[str]:
    people = {
        row.name: dict(row._mapping)
        for row in bind.execute(sa.select(_annotator).order_by(_annotator.c.id))
    }
    holders = {(p["platform"], p["platform_id"]) for p in people.values()}
    records = n_removed = n_restored = 0
    kept: list[str] = []
    for row in bind.execute(sa.select(_import).order_by(_import.c.id)).all():
        detail: dict[str, Any] = dict(row.detail or {})
        workers = detail.get("workers")
        if not isinstance(workers, dict):
            continue
        platform = detail.get("platform")
        left: dict[str, str] = {}
        for name, worker in workers.items():
            person = people.get(name)
            on_row = (
                person is not None
                and person["platform_id"] == worker
                and (platform is None or person["platform"] == platform)
            )
            if person is not None and not on_row and person["platform_id"] is None:
                where = platform if platform is not None else person["platform"]
                if (where, worker) not in holders:  # the unique (platform, platform_id)
                    bind.execute(
                        sa.update(_annotator)
                        .where(_annotator.c.id == person["id"])
                        .values(platform=where, platform_id=worker)
                    )
                    person.update(platform=where, platform_id=worker)
                    holders.add((where, worker))
                    n_restored += 1
                    on_row = True
            if on_row:
                n_removed += 1
            else:
                left[name] = worker
        # The pseudonyms stay, in the file's order: what the record says about its annotators.
        new = {key: value for key, value in detail.items() if key != "workers"}
        new["annotators"] = list(workers)
        if left:
            new["workers"] = left
            kept.append(f"{row.id} ({', '.join(left)})")
        bind.execute(sa.update(_import).where(_import.c.id == row.id).values(detail=new))
        records += 1
    notes = []
    if records:
        notes.append(
            f"label imports: {_count(n_removed, 'worker id')} removed from "
            f"{_count(records, 'import record')} (each kept on its annotator row only)"
        )
    if n_restored:
        notes.append(
            f"label imports: {_count(n_restored, 'annotator')} without a platform id given the "
            "one its import recorded"
        )
    if kept:
        notes.append(
            "label imports: worker ids kept in import record(s) "
            f"{'; '.join(kept)}: no annotator of that name holds them; check with "
            "`annotate annotator show NAME`"
        )
    return notes


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def downgrade() -> None:
    raise NotImplementedError("stores are upgraded only; restore the backup `migrate` wrote")
