"""A store made by annotate 0.5.0 (schema 15; tests/migration/store-0.5.0-curators.db, built by
the 0.5.0 code with tests/migration/build_0_5_0_curators_store.py) holds curator names as they
were typed: " lea " beside "lea", "léo" in two Unicode forms. Schema 17 stores them as the
code compares them, so lea is no longer served her own examples and her counts are whole;
where two names become one, the earliest review of the same sentences is kept."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sqlalchemy import create_engine, text
from typer.testing import CliRunner

from annotate.cli import app
from annotate.curation.examples import ExampleQuery, find_examples
from annotate.curation.review import disagreement_queue, review_progress
from annotate.curation.stats import set_statistics
from annotate.store import schema
from annotate.workspace import open_workspace
from tests.migration_stores import earlier_store

STORE = Path(__file__).resolve().parents[1] / "migration" / "store-0.5.0-curators.db"
CURATION_TABLES = (  # in the order their foreign keys need
    "curation_set",
    "curation_example",
    "curation_revision",
    "curation_review",
    "curation_decision",
    "curation_skip",
)
LEO = "l\u00e9o"  # NFC: "é" as one character
LEO_COMBINING = "le\u0301o"
REVIEWS = "SELECT id, example_id, reviewer, label, example_version FROM curation_review ORDER BY id"


def run(url: str, *args: str) -> str:
    result = CliRunner().invoke(app, ["--db", url, *args])
    assert result.exit_code == 0, (args, result.output, result.exception)
    return result.stdout


def rows(url: str, sql: str) -> list[tuple]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(row) for row in conn.execute(text(sql))]
    finally:
        engine.dispose()


def store_0_5_0(backend: str, new_store_url: Callable[[], str], tmp_path: Path) -> str:
    """The fixture on the test's backend (on PostgreSQL its curation rows)."""
    return earlier_store(STORE, "0015", CURATION_TABLES, backend, new_store_url, tmp_path)


def test_a_0_5_0_store_gets_one_name_per_curator_and_keeps_the_earliest_review(
    backend: str, new_store_url: Callable[[], str], tmp_path: Path
):
    url = store_0_5_0(backend, new_store_url, tmp_path)
    assert rows(url, REVIEWS) == [  # as 0.5.0 stored them
        (1, 1, "lea", "contradiction", 1),  # lea, of her own example 1 (by " lea ")
        (2, 5, LEO, "neutral", 1),
        (3, 5, LEO_COMBINING, "entailment", 1),  # léo again, from another terminal
        (4, 7, "lea", "entailment", 1),
        (5, 7, "lea ", "neutral", 2),  # the same sentences (a note-only edit): lea again
        (6, 3, "kim", "entailment", 1),  # stale: lea edited the sentences since
        (7, 3, " kim", "entailment", 2),
    ]
    skips = rows(url, "SELECT skipped_at FROM curation_skip ORDER BY skipped_at")
    assert len(skips) == 2  # léo skipped example 1 in both forms

    out = " ".join(run(url, "migrate").split())
    assert f"from schema 15 to {int(schema.SCHEMA_HEAD)}" in out
    assert (
        "curator names merged: 2 reviews removed, each a curator's second review of the same "
        "sentences under another spelling of their name (the earliest review kept)"
    ) in out
    assert "curator names merged: 1 review of the reviewer's own example removed" in out
    assert "curator names merged: 1 skip of an example skipped twice" in out

    assert rows(url, REVIEWS) == [
        (2, 5, LEO, "neutral", 1),
        (4, 7, "lea", "entailment", 1),
        (6, 3, "kim", "entailment", 1),  # a stale review and a current one: both kept
        (7, 3, "kim", "entailment", 2),
    ]
    assert rows(url, "SELECT DISTINCT author FROM curation_example ORDER BY author") == [
        ("lea",),
        ("sam",),
    ]
    assert rows(url, "SELECT created_by FROM curation_set") == [("lea",)]
    assert rows(url, "SELECT DISTINCT changed_by FROM curation_revision ORDER BY changed_by") == [
        ("lea",),
        ("sam",),
    ]
    assert rows(url, "SELECT example_id, decided_by FROM curation_decision") == [(5, "kim")]
    # One skip of example 1 by léo, at the later time (the last skip sent it to the back).
    assert rows(url, "SELECT example_id, reviewer, skipped_at FROM curation_skip") == [
        (1, LEO, skips[-1][0])
    ]

    engine = open_workspace(url).engine
    try:
        # lea is served only others' examples: sam's 5, 6 and 8 (she reviewed 7).
        progress = review_progress(engine, "sp", " lea ")
        assert (progress.done, progress.remaining) == (1, 3)
        assert len(find_examples(engine, "sp", ExampleQuery(author="lea"))) == 4
        review = set_statistics(engine, "sp")["review"]
        assert review["coders"] == ["kim", "lea", "léo", "sam"]
        assert review["reviews"] == 3  # kim's stale review of example 3 is kept, not counted
        # kim's decision on example 5 covered léo's reviews; the one kept reopens nothing.
        assert disagreement_queue(engine, "sp") == []
    finally:
        engine.dispose()
    if backend == "sqlite":  # the backup `migrate` wrote keeps every review as 0.5.0 stored it
        [backup] = tmp_path.glob(f"{STORE.stem}-schema15-backup*.db")
        assert len(rows(f"sqlite:///{backup}", REVIEWS)) == 7
