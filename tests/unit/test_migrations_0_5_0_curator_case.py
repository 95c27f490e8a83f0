"""A store made by annotate 0.5.0 (schema 15; tests/migration/store-0.5.0-curator-case.db, built
by the 0.5.0 code with tests/migration/build_0_5_0_curator_case_store.py) holds curator names in
the letter case they were typed: "Léa" beside "LÉA" and "léa", "kim" beside "KIM". Schema 19
stores each curator under the spelling first recorded for her, so Léa is no longer served her
own examples and her counts are whole; where two names become one, the earliest review of the
same sentences is kept and a review of the reviewer's own example is removed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sqlalchemy import create_engine, text
from typer.testing import CliRunner

from annotate.cli import app
from annotate.curation.examples import ExampleQuery, find_examples
from annotate.curation.review import disagreement_queue, next_for_review, review_progress
from annotate.curation.stats import set_statistics
from annotate.store import schema
from annotate.workspace import open_workspace
from tests.migration_stores import earlier_store

STORE = Path(__file__).resolve().parents[1] / "migration" / "store-0.5.0-curator-case.db"
CURATION_TABLES = (  # in the order their foreign keys need
    "curation_set",
    "curation_example",
    "curation_revision",
    "curation_review",
    "curation_decision",
    "curation_skip",
)
LEA = "L\u00e9a"  # how she first wrote her name
LEA_CAPITALS = "L\u00c9A"
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


def test_a_0_5_0_store_gets_one_name_per_curator_whatever_its_letter_case(
    backend: str, new_store_url: Callable[[], str], tmp_path: Path
):
    url = store_0_5_0(backend, new_store_url, tmp_path)
    assert rows(url, REVIEWS) == [  # as 0.5.0 stored them
        (1, 1, LEA_CAPITALS, "contradiction", 1),  # of her own example 1 (by Léa)
        (2, 3, "le\u0301a", "entailment", 1),
        (3, 3, LEA_CAPITALS, "neutral", 2),  # the same sentences (a note-only edit): Léa again
        (4, 5, "kim", "neutral", 1),
        (5, 7, "KIM", "entailment", 1),
        (6, 7, LEA, "entailment", 1),
        (7, 1, "Gro\u00df", "contradiction", 1),
        (8, 4, "GROSS", "entailment", 2),  # "ß" folds to "ss": Groß
        (9, 5, " l\u00e9a ", "entailment", 1),  # of her own example 5 (by LÉA)
    ]
    skips = rows(url, "SELECT skipped_at FROM curation_skip ORDER BY skipped_at")
    assert len(skips) == 2  # kim skipped example 1 as "Kim" and as "kim"

    out = " ".join(run(url, "migrate").split())
    assert f"from schema 15 to {int(schema.SCHEMA_HEAD)}" in out
    assert (
        "curator names merged (letter case): 1 review removed, each a curator's second review "
        "of the same sentences under another spelling of their name (the earliest review kept)"
    ) in out
    assert "curator names merged (letter case): 2 reviews of the reviewer's own example" in out
    assert "curator names merged (letter case): 1 skip of an example skipped twice" in out

    assert rows(url, REVIEWS) == [
        (2, 3, LEA, "entailment", 1),
        (4, 5, "kim", "neutral", 1),
        (5, 7, "kim", "entailment", 1),
        (6, 7, LEA, "entailment", 1),
        (7, 1, "Gro\u00df", "contradiction", 1),
        (8, 4, "Gro\u00df", "entailment", 2),
    ]
    assert rows(url, "SELECT DISTINCT author FROM curation_example ORDER BY author") == [
        (LEA,),
        ("sam",),
    ]
    assert rows(url, "SELECT created_by FROM curation_set") == [(LEA,)]
    assert rows(url, "SELECT DISTINCT changed_by FROM curation_revision") == [("sam",)]
    assert rows(url, "SELECT example_id, decided_by FROM curation_decision") == [(5, "sam")]
    # One skip of example 1 by kim, at the later time (the last skip sent it to the back).
    assert rows(url, "SELECT example_id, reviewer, skipped_at FROM curation_skip") == [
        (1, "kim", skips[-1][0])
    ]

    engine = open_workspace(url).engine
    try:
        # Léa, typing LÉA, is served only others' examples: sam's 4 and 8 (she reviewed 3, 7).
        progress = review_progress(engine, "cc", LEA_CAPITALS)
        assert (progress.done, progress.remaining) == (2, 2)
        served = next_for_review(engine, "cc", "l\u00e9a")
        assert served is not None and served.id in (4, 8)
        assert len(find_examples(engine, "cc", ExampleQuery(author="LE\u0301A"))) == 4
        stats = set_statistics(engine, "cc")
        assert stats["authors"] == {LEA: 4, "sam": 4}
        assert sorted(stats["review"]["coders"]) == sorted(["Gro\u00df", "kim", LEA, "sam"])
        assert stats["review"]["reviews"] == 6
        assert disagreement_queue(engine, "cc") == []
    finally:
        engine.dispose()
    if backend == "sqlite":  # the backup `migrate` wrote keeps every review as 0.5.0 stored it
        [backup] = tmp_path.glob(f"{STORE.stem}-schema15-backup*.db")
        assert len(rows(f"sqlite:///{backup}", REVIEWS)) == 9
