"""A store made by annotate 0.2.0 (schema 8; tests/migration/store-0.2.0.db, built by the 0.2.0
code with tests/migration/build_0_2_0_store.py) migrates in place to today's schema with every
row and every recorded decision kept: gate reasons (a manual admission of someone with no labels,
a forced median close), flag actions (a resolved flag, an excluded item), catch answers and the
curation history."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from sqlalchemy import MetaData, create_engine, select
from typer.testing import CliRunner

from annotate.cli import app
from annotate.store import schema
from tests.migration_expectations import tags_counted_once

FIXTURES = Path(__file__).resolve().parents[1] / "migration"
STORE = FIXTURES / "store-0.2.0.db"
EXPECTED = json.loads((FIXTURES / "expected-0.2.0.json").read_text())
HEAD = int(schema.SCHEMA_HEAD)


def run(url: str, *args: str) -> str:
    result = CliRunner().invoke(app, ["--db", url, *args])
    assert result.exit_code == 0, (args, result.output, result.exception)
    return result.stdout


def rows_in_0_2_0_columns(url: str) -> dict[str, list[tuple]]:
    """Every row of every 0.2.0 table, in the columns 0.2.0 had (later schemas add columns)."""
    old = MetaData()
    old.reflect(create_engine(f"sqlite:///{STORE}"))
    now = MetaData()
    engine = create_engine(url)
    now.reflect(engine)
    out = {}
    with engine.connect() as conn:
        for name, table in old.tables.items():
            if name in ("meta", "alembic_version"):
                continue
            cols = [now.tables[name].c[c.name] for c in table.columns]
            rows = conn.execute(select(*cols).order_by(*cols)).all()
            out[name] = [tuple(map(str, r)) for r in rows]
    engine.dispose()
    return out


def as_old(now, old):
    """`now` cut to the keys `old` has, in every dict at every depth."""
    if isinstance(old, dict) and isinstance(now, dict):
        return {k: as_old(now[k], v) if k in now else None for k, v in old.items()}
    if isinstance(old, list) and isinstance(now, list) and len(old) == len(now):
        return [as_old(n, o) for n, o in zip(now, old, strict=True)]
    return now


def test_a_0_2_0_store_migrates_with_every_row_and_decision_kept(tmp_path: Path):
    path = tmp_path / "study.db"
    shutil.copy(STORE, path)
    url = f"sqlite:///{path}"
    before = rows_in_0_2_0_columns(f"sqlite:///{STORE}")
    assert before["flagaction"] and before["gatedecision"] and before["curation_decision"]

    out = run(url, "migrate")
    assert f"to {HEAD}" in out or f"schema {HEAD} already" in out
    assert rows_in_0_2_0_columns(url) == before
    with sqlite3.connect(path) as con:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert "no violation" in run(url, "check")

    for name in ("datasets", "flags rte", "curation stats"):
        now = json.loads(run(url, *EXPECTED["_commands"][name]))
        # What 0.2.0 printed is printed the same; later releases may add keys (a flag's value),
        # and after 0.5.0 each sentence pair's tags count once in the tag agreement.
        old = tags_counted_once(EXPECTED[name], now) if name == "curation stats" else EXPECTED[name]
        assert as_old(now, old) == old, name

    def decisions(gate: dict) -> set[tuple]:
        return {(t["name"], t["gate"], t["reason"]) for t in gate["trainees"] if t["gate"]}

    gate_now = json.loads(run(url, *EXPECTED["_commands"]["gate sst2"]))
    assert decisions(EXPECTED["gate sst2"]) <= decisions(gate_now)

    for name in ("report rte", "report sst2"):
        then, now = EXPECTED[name], json.loads(run(url, *EXPECTED["_commands"][name]))
        assert (now["n_items"], now["n_labels"]) == (then["n_items"], then["n_labels"]), name
        for metric, score in then["scores"].items():
            assert now["scores"][metric]["value"] == score["value"], (name, metric)
