"""Alembic's entry point for annotate's migrations. It is only ever run by
`annotate.store.schema.migrate_store`, which passes an open connection with its transaction
already begun (and, on SQLite, foreign keys off): every migration of one `annotate migrate`
runs in that one transaction."""

from alembic import context
from sqlmodel import SQLModel

from annotate.store import curation_models, models

assert models and curation_models  # the imports register the tables on SQLModel.metadata

context.configure(
    connection=context.config.attributes["connection"],
    target_metadata=SQLModel.metadata,
    # SQLite cannot ALTER most things: batch mode rebuilds the table (copy, drop, rename).
    render_as_batch=True,
    transaction_per_migration=False,
)
with context.begin_transaction():
    context.run_migrations()
