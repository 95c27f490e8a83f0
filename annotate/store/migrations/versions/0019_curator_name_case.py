"""Schema 19: curator names that differ only in letter case are one curator, under the
spelling first recorded.

Up to schema 18 the curation code compared names case-sensitively: Léa typing `--as LÉA` was
another curator, so she was served her own examples to review, could review the same
sentences twice, and her counts were split. The code now takes names equal under Unicode case
folding (after schema 17's rule: trimmed, NFC) for one curator, and stores each under the
spelling first recorded for her. This migration does the same to the names a store holds:
every spelling of a curator in the curation tables (the set's creator, the examples' authors,
the history's editors, the reviewers, the skips and the adjudicators) becomes her earliest
one, the spelling of the row recorded first (the set's, example's, review's, decision's or
skip's time, the history's change time; at equal times, the one that sorts first).

Where two names become one, what the code would have refused from one curator is resolved
as schema 17 resolved it:
- Two reviews by one curator of the same sentences (the same example version, or both of its
  current sentences): the earliest is kept, the later ones removed. The first opinion is the
  blind one the tool meant to collect, and the unique constraint allows one per version.
- A review of the curator's own example (LÉA reviewing Léa's): removed. It is no second
  opinion; the tool refuses it ("you wrote this example") and it would count the author as
  agreeing with herself.
- Two skips of one example by one curator: one is kept, with the later time (skipping again
  sends an example to the back).
- Decisions and history entries are records: only their names change.
A name that is blank once trimmed is left as it is (it names nobody to merge with). On SQLite
`annotate migrate` writes a backup first, which keeps the removed reviews; what was removed is
counted in its output.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-07
"""

import unicodedata
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import context, op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def curator_key(name: str) -> str | None:
    """The rule of annotate/curation/validation.py's `curator_key` when this schema was made
    (schema 17's rule: Python's strip, then NFC; then canonical caseless matching: NFD,
    `str.casefold`, NFC), copied rather than imported: a migration must do what it did when
    it was written, whatever that function becomes. It runs in Python because neither
    SQLite's LOWER (ASCII only) nor PostgreSQL's folds case as `str.casefold` does ("ß" is
    "ss"). None for a name that is blank once trimmed (it names nobody)."""
    trimmed = unicodedata.normalize("NFC", name.strip())
    if not trimmed:
        return None
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", trimmed).casefold())


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
    ("curation_set", "created_by", "created_at"),
    ("curation_example", "author", "created_at"),
    ("curation_revision", "changed_by", "changed_at"),
    ("curation_review", "reviewer", "created_at"),
    ("curation_decision", "decided_by", "decided_at"),
    ("curation_skip", "reviewer", "skipped_at"),
)
"""Every curator name of the curation tables, with the time its row was recorded."""


def upgrade() -> None:
    bind = op.get_bind()
    notes = _merge(bind, set(sa.inspect(bind).get_table_names()))
    context.config.attributes.setdefault("notes", []).extend(notes)
    # Every migration ends by naming its schema number (0.1.0 refuses any number but 1).
    op.execute("UPDATE meta SET value = '19' WHERE key = 'schema_version'")


def _stamp(moment: object) -> float:
    # SQLite gives back naive datetimes (stored as UTC); PostgreSQL aware ones.
    if not isinstance(moment, datetime):
        return float("inf")
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def _spellings(bind: sa.Connection, tables: set[str]) -> dict[str, str]:
    """Each stored name that is not its curator's earliest spelling, with that spelling."""
    first: dict[str, tuple[float, str]] = {}  # by key: (time, spelling) of the earliest
    names: set[str] = set()
    for table, column, time in NAME_COLUMNS:
        if table not in tables:
            continue
        t = sa.table(table, sa.column(column, sa.String), sa.column(time, sa.DateTime))
        for name, when in bind.execute(
            sa.select(t.c[column], sa.func.min(t.c[time])).group_by(t.c[column])
        ):
            key = None if name is None else curator_key(name)
            if key is None:
                continue
            names.add(name)
            candidate = (_stamp(when), name)
            if key not in first or candidate < first[key]:
                first[key] = candidate
    return {
        name: first[key][1]
        for name in names
        if (key := curator_key(name)) is not None and first[key][1] != name
    }


def _merge(bind: sa.Connection, tables: set[str]) -> list[str]:
    """Every curation table is made with the schema, but the code makes them again where
    they are missing (store/curation_models.py): merge in those there are."""
    spelling = _spellings(bind, tables)
    if not spelling:
        return []

    def name_of(name: str) -> str:
        return spelling.get(name, name)

    twice = own = skips = 0
    if {"curation_example", "curation_review"} <= tables:
        twice, own = _drop_reviews(bind, name_of)
    if "curation_skip" in tables:
        skips = _merge_skips(bind, name_of)
    for table, column, _ in NAME_COLUMNS:
        if table not in tables:
            continue
        t = sa.table(table, sa.column(column, sa.String))
        names = bind.execute(sa.select(t.c[column]).distinct()).scalars().all()
        for name in names:
            if name is not None and name_of(name) != name:
                bind.execute(t.update().where(t.c[column] == name).values({column: name_of(name)}))
    notes = []
    if twice:
        notes.append(
            f"curator names merged (letter case): {_count(twice, 'review')} removed, each a "
            "curator's second review of the same sentences under another spelling of their "
            "name (the earliest review kept)"
        )
    if own:
        notes.append(
            f"curator names merged (letter case): {_count(own, 'review')} of the reviewer's own "
            "example removed (the author's name spelt another way; no second opinion)"
        )
    if skips:
        notes.append(
            f"curator names merged (letter case): {_count(skips, 'skip')} of an example "
            "skipped twice by one curator folded into the other (the later time kept)"
        )
    return notes


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _drop_reviews(bind: sa.Connection, name_of: Callable[[str], str]) -> tuple[int, int]:
    """Remove the reviews that become a curator's second review of the same sentences (the
    earliest stays) or a review of their own example. Returns (second reviews, own)."""
    examples = {
        row.id: (name_of(row.author), row.sentences_version)
        for row in bind.execute(sa.select(_example))
    }
    seen: set[tuple[int, str, object]] = set()
    twice: list[int] = []
    own: list[int] = []
    for row in bind.execute(sa.select(_review).order_by(_review.c.id)):
        author, sentences_version = examples[row.example_id]
        reviewer = name_of(row.reviewer)
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


def _merge_skips(bind: sa.Connection, name_of: Callable[[str], str]) -> int:
    """One skip per example and curator: the latest, as skipping again would have left it."""
    kept: dict[tuple[int, str], tuple[object, int]] = {}
    gone: list[int] = []
    for row in bind.execute(sa.select(_skip).order_by(_skip.c.skipped_at, _skip.c.id)):
        key = (row.example_id, name_of(row.reviewer))
        if key in kept:
            gone.append(kept[key][1])
        kept[key] = (row.skipped_at, row.id)
    for start in range(0, len(gone), 500):
        bind.execute(_skip.delete().where(_skip.c.id.in_(gone[start : start + 500])))
    return len(gone)


def downgrade() -> None:
    raise NotImplementedError("stores are upgraded only; restore the backup `migrate` wrote")
