"""A custom task given by path: the study keeps its spec, so every later command works after
the TOML file is deleted (and without ANNOTATE_TASKS_PATH); a task without `[submission]` has
no leaderboard file, and says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotate.protocol.session import AnnotatorSession

TOY = """
benchmark = "custom"
title = "Toy: is the headline about sport?"
kind = "classification"
layout = "single"
metrics = ["accuracy"]
guidelines = "Say whether the headline is about sport."

[[fields]]
name = "text"
label = "Headline"

[[labels]]
value = "yes"
text = "Sport"
key = "1"

[[labels]]
value = "no"
text = "Not sport"
key = "2"

[source]
reader = "jsonl"
id = ["id"]
label = ["gold"]
"""


def rows(n: int, start: int) -> str:
    return "".join(
        json.dumps({"id": f"h{i}", "title": f"Headline number {i}", "gold": ["yes", "no"][i % 2]})
        + "\n"
        for i in range(start, start + n)
    )


@pytest.fixture
def toy_study(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("ANNOTATE_TASKS_PATH", raising=False)
    toml = tmp_path / "toy.toml"
    toml.write_text(TOY)
    (tmp_path / "dev.jsonl").write_text(rows(6, 0))
    (tmp_path / "test.jsonl").write_text(rows(10, 100))
    for split in ("dev", "test"):
        result = cli("import", toml, tmp_path / f"{split}.jsonl", "--split", split,
                     "--map", "text=title")  # fmt: skip
        assert result.code == 0, result.stderr
    result = cli("study", "create", "t2", "--task", toml, "--protocol", "quick",
                 "--set", "annotators_per_item=3")  # fmt: skip
    assert result.code == 0, result.stderr
    toml.unlink()  # from here on the study must not need the file
    return tmp_path


def test_every_command_works_after_the_task_file_is_deleted(cli, workspace, toy_study: Path):
    for args in (
        ("status", "t2"),
        ("simulate", "t2", "--annotators", "4", "--accuracy", "0.9"),
        ("gate", "t2"),
        ("status", "t2"),
        ("report", "t2", "--bootstrap", "0"),
        ("export", "t2", "--to", toy_study / "out", "--format", "labels"),
        ("check",),
        ("study", "show", "t2"),
    ):
        result = cli(*args)
        assert result.code == 0, (args, result.stderr)
    report = json.loads(cli("report", "t2", "--format", "json", "--bootstrap", "0").stdout)
    assert report["task"] == "toy" and report["sample"]["n_items_complete"] == 10
    assert (toy_study / "out" / "t2-labels.csv").read_text().count("\n") == 31  # header + 30
    # The annotator's engine (what `annotate label` runs) opens the study too.
    session = AnnotatorSession.open(workspace.engine, "t2", "late", create_annotator=True)
    item = session.next_item()
    assert item is not None and item.fields["text"].startswith("Headline number")


def test_a_task_without_submission_has_no_leaderboard_export(cli, toy_study: Path):
    result = cli("export", "t2", "--to", toy_study / "out", "--format", "glue")
    assert result.code == 1
    assert "has no [submission] section" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_damaged_stored_spec_is_a_one_line_error(cli, workspace, toy_study: Path):
    from sqlalchemy import update

    from annotate.store.models import Study

    with workspace.engine.begin() as conn:
        conn.execute(update(Study).values(task_spec={"title": "no kind"}))
    result = cli("status", "t2")
    assert result.code == 1 and "study 't2': invalid stored task spec" in result.stderr


def test_a_task_file_whose_labels_changed_since_the_import_is_refused(
    cli, toy_study: Path, tmp_path: Path
):
    # The labels renamed after the import: the stored gold would mark every right answer wrong.
    toml = tmp_path / "toy.toml"
    toml.write_text(TOY.replace('value = "yes"', 'value = "sport"'))
    refused = cli("study", "create", "renamed", "--task", toml, "--protocol", "quick")
    assert refused.code == 1 and "Traceback" not in refused.stderr
    assert "has gold 'yes' on item" in refused.stderr and "not a label of toy (no, sport)" in (
        " ".join(refused.stderr.split())
    )
    assert "renamed" not in cli("study", "list").stdout
