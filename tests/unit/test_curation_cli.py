"""`annotate curate` as a user runs it: one mode per call, clear errors, JSON for programs."""

from __future__ import annotations

from pathlib import Path

from sqlmodel import SQLModel

from annotate.store.curation_models import CURATION_TABLES
from annotate.workspace import open_workspace
from tests import fixtures as fx


def write_diagnostic(tmp_path: Path) -> Path:
    path = tmp_path / "diagnostic-full.tsv"
    path.write_text(fx.DIAGNOSTIC_FULL, encoding="utf-8", newline="")
    return path


def test_import_list_stats_and_export(cli, tmp_path):
    source = write_diagnostic(tmp_path)
    result = cli("curate", "d", "--import", source, "--as", "glue")
    assert result.code == 0, result.stderr
    assert "4 examples (2 pairs" in " ".join(result.stdout.split())
    assert "already imported" in cli("curate", "d", "--import", source).stderr

    rows = cli("curate", "d", "--list", "--format", "json").json()
    assert [r["label"] for r in rows] == ["contradiction", "contradiction", "entailment", "neutral"]
    assert rows[0]["author"] == "glue"
    assert [
        r["id"] for r in cli("curate", "d", "--tag", "negation", "--format", "json").json()
    ] == [1, 2]
    assert [
        r["id"]
        for r in cli(
            "curate", "d", "--search", "boats", "--label", "neutral", "--format", "json"
        ).json()
    ] == [4]
    assert cli("curate", "d", "--tag", "Predicate-Argument Structure").stdout.startswith(
        "1 example in d"
    )

    stats = cli("curate", "d", "--stats", "--format", "json").json()
    assert {c: v["count"] for c, v in stats["coarse"].items()} == {
        "Lexical Semantics": 1,
        "Predicate-Argument Structure": 1,
        "Logic": 2,
        "Knowledge": 1,
    }
    table = cli("curate", "d").stdout  # a bare set name shows the statistics
    assert "Examples per coarse category" in table and "Second opinions" in table

    out = tmp_path / "out.tsv"
    result = cli("curate", "d", "--export", out)
    assert result.code == 0 and "annotate import glue/ax" in " ".join(result.stdout.split())
    assert out.read_bytes().decode("utf-8") == fx.DIAGNOSTIC_FULL
    assert cli("curate", "d", "--export", tmp_path / "o.jsonl", "--format", "superglue").code == 0
    assert (tmp_path / "o.jsonl").read_text().count("\n") == 4


def test_create_edit_show_retire_restore(cli, tmp_path):
    assert "created (entailment, neutral, contradiction)" in cli("curate", "d", "--create").stdout
    cli("curate", "d", "--import", write_diagnostic(tmp_path))
    edited = cli(
        "curate",
        "d",
        "--edit",
        "3",
        "--as",
        "ana",
        "--set",
        "label=neutral",
        "--set",
        "tags=Quantifiers;world knowledge",
        "--reason",
        "weaker",
        "--format",
        "json",
    ).json()
    assert edited["version"] == 2 and edited["label"] == "neutral"
    assert edited["tags"]["Knowledge"] == ["World knowledge"]
    shown = cli("curate", "d", "--show", "3", "--format", "json").json()
    assert [h["label"] for h in shown["history"]] == ["entailment", "neutral"]
    assert shown["history"][0]["change_note"] == "weaker"
    assert "weaker" in cli("curate", "d", "--show", "3").stdout

    assert "retired" in cli("curate", "d", "--retire", "3", "--as", "ana", "--reason", "x").stdout
    assert len(cli("curate", "d", "--list", "--format", "json").json()) == 3
    assert [r["id"] for r in cli("curate", "d", "--retired", "--format", "json").json()] == [3]
    assert "active again" in cli("curate", "d", "--restore", "3", "--as", "ana").stdout
    sets = cli("curate", "--format", "json").json()
    assert sets == [
        {**sets[0], "name": "d", "labels": "three-way", "examples": 4, "retired": 0},
    ]


def test_mistakes_get_one_clear_line(cli, tmp_path):
    assert "no annotate store" in cli("curate", "nope", "--stats").stderr  # nothing created
    cli("curate", "d", "--create")
    assert "no curation set named 'nope'" in cli("curate", "nope", "--stats").stderr
    assert "choose one of --list, --stats" in cli("curate", "d", "--stats", "--list").stderr
    assert "add --as NAME" in cli("curate", "d", "--retire", "1").stderr
    assert "add --as NAME" in cli("curate", "d", "--review").stderr
    assert (
        "with --export use glue or superglue"
        in cli("curate", "d", "--export", tmp_path / "x", "--format", "json").stderr
    )
    assert "use table or json" in cli("curate", "d", "--stats", "--format", "glue").stderr
    assert "no active examples" in cli("curate", "d", "--export", tmp_path / "x.tsv").stderr
    assert (
        "unknown tag 'Negatoin'; did you mean 'Negation'"
        in cli("curate", "d", "--tag", "Negatoin").stderr
    )
    assert "exists already" in cli("curate", "d", "--create").stderr
    assert "needs a set name" in cli("curate", "--stats").stderr
    assert "no example 7" in cli("curate", "d", "--show", "7").stderr
    assert "no curation set named 'nope'" in cli("curate", "nope", "--as", "ana").stderr


def test_the_taxonomy_is_printed(cli):
    out = " ".join(cli("curate", "--tags").stdout.split())
    assert "Predicate-Argument Structure" in out and "Genitives/Partitives" in out


def test_a_store_made_before_curation_gets_its_tables(cli, db_url):
    ws = open_workspace(db_url, create=True)
    SQLModel.metadata.drop_all(ws.engine, tables=list(reversed(CURATION_TABLES)))
    ws.engine.dispose()
    assert cli("curate", "d", "--create").code == 0
    assert cli("curate", "--format", "json").json()[0]["name"] == "d"
