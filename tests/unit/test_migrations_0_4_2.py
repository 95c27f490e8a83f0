"""A store made by annotate 0.4.2 (schema 11; tests/migration/store-0.4.2.db, built by the 0.4.2
code with tests/migration/build_0_4_2_store.py) migrates to schema 13 with every label kept;
the labels 0.4.2 imported from a file without times lose the import moment it stored as both
times: their times are unknown, exported as empty cells and reported as "unknown"."""

from __future__ import annotations

import csv
import shutil
import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from annotate.cli import app
from annotate.store import schema

STORE = Path(__file__).resolve().parents[1] / "migration" / "store-0.4.2.db"


def run(url: str, *args: str) -> str:
    result = CliRunner().invoke(app, ["--db", url, *args])
    assert result.exit_code == 0, (args, result.output, result.exception)
    return result.stdout


def labels(path: Path) -> dict[str, list[tuple]]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT s.name, l.item_id, l.annotator_id, l.phase, l.value, l.shown_at, "
            "l.answered_at, l.flag, l.comment FROM label l JOIN study s ON s.id = l.study_id "
            "ORDER BY l.id"
        ).fetchall()
    out: dict[str, list[tuple]] = {}
    for row in rows:
        out.setdefault(row[0], []).append(row[1:])
    return out


def test_a_0_4_2_store_keeps_its_labels_and_loses_the_made_up_times(tmp_path: Path):
    path = tmp_path / "study.db"
    shutil.copy(STORE, path)
    url = f"sqlite:///{path}"
    before = labels(path)
    assert all(r[4] == r[5] for r in before["untimed"])  # 0.4.2: the import's moment, twice
    assert f"to {int(schema.SCHEMA_HEAD)}" in run(url, "migrate")
    after = labels(path)
    assert after["live"] == before["live"] and after["timed"] == before["timed"]
    assert [r[:4] + r[6:] for r in after["untimed"]] == [r[:4] + r[6:] for r in before["untimed"]]
    assert all(r[4] is None and r[5] is None for r in after["untimed"])

    run(url, "export", "untimed", "--to", str(tmp_path / "out"), "--format", "labels")
    with (tmp_path / "out" / "untimed-labels.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 36
    assert {(r["shown_at"], r["answered_at"], r["seconds"]) for r in rows} == {("", "", "")}
    report = " ".join(run(url, "report", "untimed", "--bootstrap", "0").split())
    assert "unknown (the labels carry no times)" in report
    assert "0.0 min" not in report
    timed = " ".join(run(url, "report", "timed", "--bootstrap", "0").split())
    assert "unknown (the labels carry no times)" not in timed
