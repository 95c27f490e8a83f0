"""A label imported from a file without times has no time: the exports leave its time cells
empty and the report says "unknown", never 0.0 s (issue 36, item 7)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from annotate.api import open_store
from annotate.formats.importer import import_file
from annotate.formats.label_import import import_labels
from annotate.specs import load_task
from tests import label_fixtures as lf


@pytest.fixture
def db_url(store_url: str) -> str:
    """Both backends: SQLite hands the times back as text, PostgreSQL as datetimes."""
    return store_url


def _untimed_study(engine, tmp_path: Path) -> None:
    items = [
        {"premise": f"Premise {i}.", "hypothesis": f"Claim {i}.", "label": "entailment", "idx": i}
        for i in range(6)
    ]
    data = lf.write_jsonl(tmp_path / "val.jsonl", items)
    dataset = import_file(engine, load_task("superglue/rte"), data, split="dev")
    rows = ["item,annotator,label"]
    rows += [f"{i},{w},entailment" for i in range(6) for w in ("w1", "w2", "w3")]
    (tmp_path / "labels.csv").write_text("\n".join(rows) + "\n")
    import_labels(engine, tmp_path / "labels.csv", study="imp", dataset_id=dataset.dataset_id)


def test_imported_labels_without_times_have_none(cli, workspace, db_url, tmp_path: Path):
    _untimed_study(workspace.engine, tmp_path)
    out = tmp_path / "out"
    assert cli("export", "imp", "--to", out, "--format", "labels").code == 0
    rows = list(csv.DictReader((out / "imp-labels.csv").open()))
    assert len(rows) == 18
    assert {(r["shown_at"], r["answered_at"], r["seconds"]) for r in rows} == {("", "", "")}
    assert cli("export", "imp", "--to", out, "--format", "labels", "--jsonl").code == 0
    first = json.loads((out / "imp-labels.jsonl").read_text().splitlines()[0])
    assert first["shown_at"] is None and first["seconds"] is None
    with open_store(db_url) as store:
        frame = store.study("imp").labels()
    assert frame["seconds"].isna().all() and frame["shown_at"].isna().all()
    report = cli("report", "imp", "--bootstrap", "0")
    assert report.code == 0, report.stderr
    text = " ".join(report.stdout.split())
    assert "unknown (the labels carry no times)" in text
    data = cli("report", "imp", "--bootstrap", "0", "--format", "json").json()
    times = data["datasheet"]["time_on_task"]
    assert times["total_minutes"] is None
    assert all(a["total_minutes"] is None for a in times["annotators"])
    assert all(a["seconds_per_item"] is None for a in data["annotators"])
    assert cli("status", "imp").code == 0


@pytest.mark.parametrize("fmt", ["table", "markdown", "html"])
def test_benchmark_row_of_an_untimed_study(cli, workspace, tmp_path: Path, fmt: str):
    """The benchmark's datasheet overview says "–" for a task whose labels carry no times: its
    total minutes were formatted as a number and the table, Markdown and HTML stopped."""
    _untimed_study(workspace.engine, tmp_path)
    result = cli("report", "--benchmark", "superglue", "--bootstrap", "0", "--format", fmt)
    assert result.code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "superglue/rte" in text
    assert "0.0" not in [cell.strip() for cell in text.split("|")]
