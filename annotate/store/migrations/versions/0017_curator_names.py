"""Schema 17: curator names as the curation code compares them (trimmed, NFC).

annotate 0.5.0 stored a curator's name as it was typed: `curate import --as " lea "` credited
" lea ", and a terminal that sends "é" as "e" plus a combining accent made "léo" a second
curator. The code now takes every name through one normaliser, so a store from before holds
names that no longer match their owner: lea was served her own examples by " lea " to
review, and her counts were split. This migration stores every curator name of the curation
tables by that rule: the set's creator, the examples' authors, the history's editors, the
reviewers, the skips and the adjudicators.

Where two names become one, what the code would have refused from one curator is resolved:
- Two reviews by one curator of the same sentences (the same example version, or both of its
  current sentences): the earliest is kept, the later ones removed. The first opinion is the
  blind one the tool meant to collect, and the unique constraint allows one per version.
- A review of the curator's own example (lea reviewing " lea "'s): removed. It is no second
  opinion; the tool refuses it ("you wrote this example") and it would count the author as
  agreeing with herself.
- Two skips of one example by one curator: one is kept, with the later time (skipping again
  sends an example to the back).
- Decisions and history entries are records: only their names change.
A name that is blank once trimmed is left as it is (it names nobody to merge with). On SQLite
`annotate migrate` writes a backup first, which keeps the removed reviews; what was removed is
counted in its output.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-06
"""

import unicodedata
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import context, op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def curator_name(name: str) -> str:
    """The rule of annotate/curation/validation.py's `curator_name` when this schema was made
    (Python's strip, which takes every Unicode space, then NFC), copied rather than imported:
    a migration must do what it did when it was written, whatever that function becomes. It
    runs in Python because neither SQLite nor PostgreSQL's TRIM strips every Unicode space,
    and SQLite has no NFC. Unlike that function, a blank result keeps the name as stored."""
    return unicodedata.normalize("NFC", name.strip()) or name


_example = sa.table(
    "curation_example",
    sa.column("id", sa.Integer),
    sa.column("author", sa.String),
    sa.column("sentences_version", sa.Integer),
)
_review = sa.table(
    "curation_review",
    sa.column("id", sa.Integer),
    sa.column("example_id", sa.Integer),
    sa.column("reviewer", sa.String),
    sa.column("example_version", sa.Integer),
)
_skip = sa.table(
    "curation_skip",
    sa.column("id", sa.Integer),
    sa.column("example_id", sa.Integer),
    sa.column("reviewer", sa.String),
    sa.column("skipped_at", sa.DateTime),
)
NAME_COLUMNS = (
    ("curation_set", "created_by"),
    ("curation_example", "author"),
    ("curation_revision", "changed_by"),
    ("curation_review", "reviewer"),
    ("curation_decision", "decided_by"),
    ("curation_skip", "reviewer"),
)


def upgrade() -> None:
    bind = op.get_bind()
    notes = _merge(bind, set(sa.inspect(bind).get_table_names()))
    context.config.attributes.setdefault("notes", []).extend(notes)
    # Every migration ends by naming its schema number (0.1.0 refuses any number but 1).
    op.execute("UPDATE meta SET value = '17' WHERE key = 'schema_version'")


def _merge(bind: sa.Connection, tables: set[str]) -> list[str]:
    """Every curation table is made with the schema, but the code makes them again where
    they are missing (store/curation_models.py): merge in those there are."""
    twice = own = skips = 0
    if {"curation_example", "curation_review"} <= tables:
        twice, own = _drop_reviews(bind)
    if "curation_skip" in tables:
        skips = _merge_skips(bind)
    for table, column in NAME_COLUMNS:
        if table not in tables:
            continue
        t = sa.table(table, sa.column(column, sa.String))
        names = bind.execute(sa.select(t.c[column]).distinct()).scalars().all()
        for name in names:
            if name is not None and curator_name(name) != name:
                bind.execute(
                    t.update().where(t.c[column] == name).values({column: curator_name(name)})
                )
    notes = []
    if twice:
        notes.append(
            f"curator names merged: {_count(twice, 'review')} removed, each a curator's second "
            "review of the same sentences under another spelling of their name (the earliest "
            "review kept)"
        )
    if own:
        notes.append(
            f"curator names merged: {_count(own, 'review')} of the reviewer's own example "
            "removed (the author's name spelt another way; no second opinion)"
        )
    if skips:
        notes.append(
            f"curator names merged: {_count(skips, 'skip')} of an example skipped twice by one "
            "curator folded into the other (the later time kept)"
        )
    return notes


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _drop_reviews(bind: sa.Connection) -> tuple[int, int]:
    """Remove the reviews that become a curator's second review of the same sentences (the
    earliest stays) or a review of their own example. Returns (second reviews, own)."""
    examples = {
        row.id: (curator_name(row.author), row.sentences_version)
        for row in bind.execute(sa.select(_example))
    }
    seen: set[tuple[int, str, object]] = set()
    twice: list[int] = []
    own: list[int] = []
    for row in bind.execute(sa.select(_review).order_by(_review.c.id)):
        author, sentences_version = examples[row.example_id]
        reviewer = curator_name(row.reviewer)
        if reviewer == author:
            own.append(row.id)
            continue
        # Every review of the current sentences judged the same text; a stale one, the text
        # of its own version (the unique constraint's key).
        judged = "current" if row.example_version >= sentences_version else row.example_version
        key = (row.example_id, reviewer, judged)
        if key in seen:
            twice.append(row.id)
        seen.add(key)
    gone = twice + own
    for start in range(0, len(gone), 500):
        bind.execute(_review.delete().where(_review.c.id.in_(gone[start : start + 500])))
    return len(twice), len(own)


def _merge_skips(bind: sa.Connection) -> int:
    """One skip per example and curator: the latest, as skipping again would have left it."""
    kept: dict[tuple[int, str], tuple[object, int]] = {}
    gone: list[int] = []
    for row in bind.execute(sa.select(_skip).order_by(_skip.c.skipped_at, _skip.c.id)):
        key = (row.example_id, curator_name(row.reviewer))
        if key in kept:
            gone.append(kept[key][1])
        kept[key] = (row.skipped_at, row.id)
    for start in range(0, len(gone), 500):
        bind.execute(_skip.delete().where(_skip.c.id.in_(gone[start : start + 500])))
    return len(gone)


def downgrade() -> None:
    raise NotImplementedError("stores are upgraded only; restore the backup `migrate` wrote")
