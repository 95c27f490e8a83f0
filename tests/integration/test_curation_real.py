"""Curation on the real GLUE diagnostic and SuperGLUE AX-b files: import, the known statistics,
and an export that reproduces every row (skipped when ../shared/data is absent)."""

from __future__ import annotations

import json
from pathlib import Path

from annotate import specs
from annotate.curation.export import export_set
from annotate.curation.importing import import_diagnostic
from annotate.curation.stats import set_statistics
from annotate.formats.readers import FileSummary, read_items
from tests.conftest import shared_file

GLUE = "glue/diagnostic/diagnostic-full.tsv"
AXB = "superglue/AX-b/AX-b.jsonl"


def rows(path: Path, task: str) -> list[tuple]:
    """Every row as the task reader sees it: sentences, label, and the tag set per category."""
    spec = specs.load_task(task)
    first, second = ("premise", "hypothesis") if task == "glue/ax" else ("sentence1", "sentence2")
    return [
        (
            item.fields[first],
            item.fields[second],
            item.gold,
            {c: frozenset(t) for c, t in (item.tags or {}).items()},
        )
        for item in read_items(path, spec, FileSummary())
    ]


def test_real_diagnostic_statistics_match_the_known_counts(workspace):
    import_diagnostic(workspace.engine, "glue-ax", shared_file(GLUE))
    stats = set_statistics(workspace.engine, "glue-ax")
    assert {c: v["count"] for c, v in stats["coarse"].items()} == {
        "Lexical Semantics": 368,
        "Predicate-Argument Structure": 424,
        "Logic": 364,
        "Knowledge": 284,
    }
    assert stats["examples"] == 1104 and stats["pairs"] == 552
    assert stats["labels"] == {"entailment": 460, "neutral": 386, "contradiction": 258}
    assert stats["domains"] == {
        "ACL": 200,
        "Artificial": 300,
        "News": 204,
        "Reddit": 200,
        "Wikipedia": 200,
    }
    fine = {tag: v["count"] for tags in stats["fine"].values() for tag, v in tags.items()}
    assert (fine["Common sense"], fine["Lexical entailment"], fine["Negation"]) == (150, 140, 82)
    assert all(count > 0 for count in fine.values())  # every one of the 33 tags is used


def test_real_diagnostic_round_trip_reproduces_every_row(workspace, tmp_path):
    source = shared_file(GLUE)
    import_diagnostic(workspace.engine, "glue-ax", source)
    out = tmp_path / "diagnostic-full.tsv"
    export_set(workspace.engine, "glue-ax", out, "glue")
    assert rows(out, "glue/ax") == rows(source, "glue/ax")
    assert out.read_bytes() == source.read_bytes()  # CRLF, trailing spaces, tag order and all
    # The export imports back (into a new set) with identical content.
    import_diagnostic(workspace.engine, "again", out)
    export_set(workspace.engine, "again", tmp_path / "again.tsv")
    assert (tmp_path / "again.tsv").read_bytes() == source.read_bytes()


def test_real_axb_round_trip_is_byte_identical(workspace, tmp_path):
    source = shared_file(AXB)
    summary = import_diagnostic(workspace.engine, "axb", source)
    assert summary.rows == 1104 and summary.labels == {"entailment": 460, "not_entailment": 644}
    export_set(workspace.engine, "axb", tmp_path / "AX-b.jsonl")
    assert (tmp_path / "AX-b.jsonl").read_bytes() == source.read_bytes()


def test_the_glue_diagnostic_exported_as_superglue_is_ax_b(workspace, tmp_path):
    """AX-b is the GLUE diagnostic with two-way labels: our conversion gives the same records,
    except two sentences whose trailing space AX-b dropped."""
    import_diagnostic(workspace.engine, "glue-ax", shared_file(GLUE))
    export_set(workspace.engine, "glue-ax", tmp_path / "AX-b.jsonl", "superglue")
    ours = [json.loads(line) for line in (tmp_path / "AX-b.jsonl").read_text().splitlines()]
    theirs = [json.loads(line) for line in shared_file(AXB).read_text().splitlines()]
    differ = [n for n, (a, b) in enumerate(zip(ours, theirs, strict=True)) if a != b]
    assert differ == [688, 689]
    for n in differ:
        stripped = {k: v.rstrip() if k.startswith("sentence") else v for k, v in ours[n].items()}
        assert stripped == theirs[n]


def test_real_diagnostic_through_the_command_line(cli, tmp_path):
    source = shared_file(GLUE)
    assert cli("curate", "import", "glue-ax", source).code == 0
    stats = cli("curate", "stats", "glue-ax", "--format", "json").json()
    assert stats["coarse"]["Predicate-Argument Structure"]["count"] == 424
    assert cli("curate", "export", "glue-ax", tmp_path / "d.tsv").code == 0
    assert (tmp_path / "d.tsv").read_bytes() == source.read_bytes()
