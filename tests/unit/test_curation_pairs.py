"""Issue 15, curation: the review queue serves new and changed work first (with filters, and
skips that outlive a session); edits and retirements act on both directions of a pair; reviews
of edited sentences go stale and a label that may no longer fit is flagged; `show`, `stats`,
export and re-import report what a curator needs."""

from __future__ import annotations

import dataclasses
import os
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from annotate.curation.examples import edit_example, example_history, get_example, save_pair
from annotate.curation.export import export_set
from annotate.curation.importing import import_diagnostic
from annotate.curation.render import review_tables
from annotate.curation.review import (
    ReviewFilter,
    disagreement_queue,
    example_reviews,
    next_for_review,
    review_progress,
    skip_for_review,
    submit_review,
)
from annotate.curation.stats import set_statistics
from annotate.curation.validation import PairDraft
from annotate.errors import UserError
from tests import fixtures as fx

GATE = PairDraft(
    premise="The door is shut.",
    hypothesis="The door is not shut.",
    forward="contradiction",
    backward="contradiction",
    tags=["Negation"],
    domain="Artificial",
    note="negated the copula",
)


@pytest.fixture
def engine(workspace, tmp_path: Path):
    """Set "d": the 4 imported rows (examples 1-4, pairs 1-2), then ana's pair (5 and 6)."""
    path = tmp_path / "diagnostic-full.tsv"
    path.write_text(fx.DIAGNOSTIC_FULL, encoding="utf-8", newline="")
    import_diagnostic(workspace.engine, "d", path)
    save_pair(workspace.engine, "d", "ana", GATE)
    return workspace.engine


def queue_of(engine, reviewer: str, wanted: ReviewFilter = ReviewFilter()) -> list[int]:
    """The ids `reviewer` would be served, in order (skipping each one in this run)."""
    served: list[int] = []
    while (blind := next_for_review(engine, "d", reviewer, set(served), wanted)) is not None:
        served.append(blind.id)
    return served


# --- 13. the review queue -----------------------------------------------------------------------


def test_new_work_comes_before_the_imported_examples(engine):
    assert queue_of(engine, "ben") == [5, 6, 1, 2, 3, 4]
    save_pair(engine, "d", "cara", dataclasses.replace(GATE, premise="The box is shut."))
    assert queue_of(engine, "ben") == [7, 8, 5, 6, 1, 2, 3, 4]  # newest first
    # The imported rest keeps today's order: fewest reviews first.
    submit_review(engine, "d", "cara", 1, "contradiction", ["Negation"])
    assert queue_of(engine, "ben")[4:] == [2, 3, 4, 1]


def test_an_edited_example_returns_as_changed_work(engine):
    for example_id in (5, 6, 1, 2):
        submit_review(engine, "d", "ben", example_id, "contradiction", ["Negation"])
    assert queue_of(engine, "ben") == [3, 4]
    edit_example(engine, "d", 1, "ana", {"hypothesis": "The gate is never open."})
    # Both directions changed: they come back to ben, ahead of the untouched rows.
    assert queue_of(engine, "ben") == [1, 2, 3, 4]
    assert review_progress(engine, "d", "ben").done == 2  # the two stale reviews no longer count


def test_filters_by_author_date_and_tag(engine):
    assert queue_of(engine, "ben", ReviewFilter(author="ana")) == [5, 6]
    assert queue_of(engine, "ben", ReviewFilter(tag="Quantifiers")) == [3]
    assert queue_of(engine, "ben", ReviewFilter(tag="Logic")) == [5, 6, 1, 2]  # a category
    tomorrow = datetime.now(UTC) + timedelta(days=1)
    assert queue_of(engine, "ben", ReviewFilter(since=tomorrow)) == []
    before_the_edit = datetime.now(UTC)
    edit_example(engine, "d", 3, "ana", {"premise": "Ten boats were repaired by the crew."})
    # Only what was written or edited since: the edited pair.
    assert queue_of(engine, "ben", ReviewFilter(since=before_the_edit)) == [3, 4]
    assert review_progress(engine, "d", "ben", ReviewFilter(author="ana")).remaining == 2


def test_a_skip_is_remembered_across_sessions(engine):
    skip_for_review(engine, "d", "ben", 5)
    # A new session (no in-run skips): 5 waits at the back of ben's queue, not of cara's.
    assert queue_of(engine, "ben") == [6, 1, 2, 3, 4, 5]
    assert queue_of(engine, "cara")[0] == 5
    skip_for_review(engine, "d", "ben", 1)
    assert queue_of(engine, "ben")[-2:] == [5, 1]  # the oldest skip first
    # Once the example changes, the skip no longer holds: it is changed work again.
    edit_example(engine, "d", 5, "ana", {"hypothesis": "The door is not quite shut."})
    assert queue_of(engine, "ben")[:2] == [5, 6]


# --- 14. edits act on the pair -------------------------------------------------------------------


def test_editing_one_direction_edits_the_pair(engine):
    edited = edit_example(
        engine,
        "d",
        5,
        "lea",
        {"hypothesis": "The door is not closed.", "tags": ["Negation", "Lexical entailment"]},
        "closed, not shut",
    )
    reverse = get_example(engine, "d", 6)
    assert (edited.premise, edited.hypothesis) == ("The door is shut.", "The door is not closed.")
    assert (reverse.premise, reverse.hypothesis) == ("The door is not closed.", "The door is shut.")
    assert reverse.fine_tags == edited.fine_tags == ["Lexical entailment", "Negation"]
    assert reverse.label == "contradiction" and reverse.version == 2
    # Both labels may no longer fit: flagged, for both directions.
    assert edited.label_unchecked and reverse.label_unchecked
    for example_id in (5, 6):
        history = example_history(engine, "d", example_id)
        assert [h["version"] for h in history] == [1, 2]
        assert history[1]["made_by"] == "lea" and history[1]["made_note"] == "closed, not shut"
    assert example_history(engine, "d", 6)[0]["premise"] == "The door is not shut."
    # Shared values follow too; a label stays per direction.
    edit_example(engine, "d", 6, "lea", {"domain": "News", "note": "n", "label": "neutral"})
    forward, reverse = get_example(engine, "d", 5), get_example(engine, "d", 6)
    assert (forward.domain, forward.note, forward.label) == ("News", "n", "contradiction")
    assert not reverse.label_unchecked and forward.label_unchecked  # only 6's label was given


def test_a_label_flag_is_cleared_by_a_review_or_an_explicit_label(engine):
    edit_example(engine, "d", 5, "lea", {"premise": "The door was shut."})
    stats = set_statistics(engine, "d")
    assert stats["labels_unchecked"] == 2
    submit_review(engine, "d", "ben", 5, "contradiction", ["Negation"])
    assert not get_example(engine, "d", 5).label_unchecked
    edit_example(engine, "d", 6, "ana", {"label": "contradiction"})  # the same label, confirmed
    assert not get_example(engine, "d", 6).label_unchecked
    assert get_example(engine, "d", 6).version == 2  # confirming is no new version
    assert set_statistics(engine, "d")["labels_unchecked"] == 0


def test_reviews_of_edited_sentences_are_stale(engine):
    submit_review(engine, "d", "ben", 5, "neutral", ["Negation"])  # disagrees on the label
    submit_review(engine, "d", "cara", 5, "contradiction", ["Negation"])
    assert [e.example.id for e in disagreement_queue(engine, "d")] == [5]
    assert set_statistics(engine, "d")["review"]["reviews"] == 2
    edit_example(engine, "d", 5, "ana", {"hypothesis": "The door is not quite shut."})
    review = set_statistics(engine, "d")["review"]
    assert disagreement_queue(engine, "d") == []
    assert (review["reviews"], review["reviewed_examples"]) == (0, 0)
    # ben may judge the new sentences (once); the old review stays on record, marked stale.
    submit_review(engine, "d", "ben", 5, "neutral", ["Negation"])
    with pytest.raises(UserError, match="already"):
        submit_review(engine, "d", "ben", 5, "neutral", ["Negation"])
    assert [e.example.id for e in disagreement_queue(engine, "d")] == [5]
    reviews = example_reviews(engine, "d", 5)
    assert [(r.reviewer, r.stale) for r in reviews] == [
        ("ben", True),
        ("cara", True),
        ("ben", False),
    ]


def test_retiring_and_restoring_act_on_the_pair(engine):
    from annotate.curation.examples import set_retired

    set_retired(engine, "d", 6, "ana", True, "unnatural")
    assert get_example(engine, "d", 5).retired and get_example(engine, "d", 6).retired
    set_retired(engine, "d", 5, "ana", False)
    assert not get_example(engine, "d", 5).retired and not get_example(engine, "d", 6).retired
    assert [h["made_change"] for h in example_history(engine, "d", 6)] == [
        "authored",
        "retire",
        "restore",
    ]


def test_an_edit_cannot_make_the_reverse_a_duplicate(engine):
    # 5 -> "The gate is open." / "The gate is not open." would duplicate imported examples 1, 2.
    with pytest.raises(UserError, match="duplicate"):
        edit_example(
            engine,
            "d",
            5,
            "ana",
            {"premise": "The gate is open.", "hypothesis": "The gate is not open."},
        )


# --- 15. smaller fixes ---------------------------------------------------------------------------


def test_show_lists_reviews_and_who_made_each_version(engine, cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # a wide terminal: one table row per version
    submit_review(engine, "d", "ben", 5, "neutral", ["Negation"], "not sure")
    edit_example(engine, "d", 5, "lea", {"label": "neutral"}, "ben is right")
    shown = cli("curate", "show", "d", "5", "--format", "json").json()
    assert [(h["version"], h["made_by"], h["made_change"]) for h in shown["history"]] == [
        (1, "ana", "authored"),
        (2, "lea", "edit"),
    ]
    assert [(r["reviewer"], r["label"], r["stale"]) for r in shown["reviews"]] == [
        ("ben", "neutral", False)
    ]
    table = " ".join(cli("curate", "show", "d", "5").stdout.split())
    assert "Reviews (1)" in table and "not sure" in table
    assert "lea (edit," in table  # on version 2's row: lea made version 2, not version 1
    assert table.index("ana (authored,") < table.index("lea (edit,")


def test_the_tag_agreement_table_files_tags_under_their_category(engine):
    submit_review(engine, "d", "ben", 3, "entailment", ["Quantifiers", "Active/Passive"])
    submit_review(engine, "d", "ben", 5, "contradiction", ["Negation"])
    tables = review_tables(set_statistics(engine, "d")["review"])
    per_tag = tables[1]
    first_column = [str(cell) for cell in per_tag.columns[0]._cells]
    # Each category, then its own tags.
    assert first_column.index("Lexical Semantics") < first_column.index("  Quantifiers")
    assert first_column.index("  Quantifiers") < first_column.index("Predicate-Argument Structure")
    assert first_column.index("Predicate-Argument Structure") < first_column.index(
        "  Active/Passive"
    )
    assert first_column.index("  Active/Passive") < first_column.index("Logic")
    assert first_column.index("Logic") < first_column.index("  Negation")


def test_an_export_respects_the_umask(engine, tmp_path: Path):
    previous = os.umask(0o022)
    try:
        export_set(engine, "d", tmp_path / "a.tsv")
        os.umask(0o077)
        export_set(engine, "d", tmp_path / "b.tsv")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "a.tsv").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "b.tsv").stat().st_mode) == 0o600


def test_reimporting_an_identical_file_names_the_file_given(cli, tmp_path: Path):
    first = tmp_path / "first.tsv"
    first.write_text(fx.DIAGNOSTIC_FULL, encoding="utf-8", newline="")
    again = tmp_path / "again.tsv"
    again.write_text(fx.DIAGNOSTIC_FULL, encoding="utf-8", newline="")
    assert cli("import", "glue/ax", first, "--split", "test").code == 0
    result = cli("import", "glue/ax", again, "--split", "dev")
    message = " ".join(result.stderr.split())
    assert message.startswith(f"{again.resolve()}: skipped, identical"), message
    assert f"identical (same sha256) to {first.resolve()}" in message
    rows = cli("import", "glue/ax", again, "--split", "dev", "--format", "json").json()
    assert rows[0]["path"] == str(again.resolve())
    assert rows[0]["identical_to"] == str(first.resolve())


# --- the migration ------------------------------------------------------------------------------


def test_migrating_finds_sentence_edits_made_before_the_schema(tmp_path: Path, monkeypatch):
    """A 0.1.0 store whose example 4 had its sentences edited (version 1 -> 2) and reviewed at
    version 1: after `annotate migrate`, that review is stale and the label is flagged."""
    import shutil
    import sqlite3

    from typer.testing import CliRunner

    from annotate.cli import app
    from annotate.workspace import open_workspace

    path = tmp_path / "old.db"
    shutil.copy(Path(__file__).resolve().parents[1] / "migration" / "store-0.1.0.db", path)
    with sqlite3.connect(path) as con:
        con.execute("UPDATE curation_example SET premise = 'No lorries are allowed.' WHERE id = 4")
    monkeypatch.delenv("ANNOTATE_DB", raising=False)
    result = CliRunner().invoke(app, ["--db", f"sqlite:///{path}", "migrate"])
    assert result.exit_code == 0, result.stdout
    engine = open_workspace(f"sqlite:///{path}").engine
    try:
        edited, retired_only = get_example(engine, "diag", 4), get_example(engine, "diag", 5)
        assert (edited.sentences_version, edited.label_unchecked) == (2, True)
        assert (retired_only.sentences_version, retired_only.label_unchecked) == (1, False)
        assert [r.stale for r in example_reviews(engine, "diag", 4)] == [True]
        assert [r.stale for r in example_reviews(engine, "diag", 3)] == [False]
    finally:
        engine.dispose()
