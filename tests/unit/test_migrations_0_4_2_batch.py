"""A store made by annotate 0.4.2 (schema 11; tests/migration/store-0.4.2-batch.db, built by the 0.4.2
code with tests/migration/build_0_4_2_batch_store.py) migrates to the newest schema with its imported studies
intact: every label row, each import's record, the reports' numbers. Labels imported then have
no answer as given (raw is NULL) and the export says nothing it does not know; the batch they
came from is still recognised, and can now make a second study when named."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy import MetaData, create_engine, select
from typer.testing import CliRunner

from annotate.cli import app
from annotate.store import schema

FIXTURES = Path(__file__).resolve().parents[1] / "migration"
STORE = FIXTURES / "store-0.4.2-batch.db"
BATCH = FIXTURES / "batch-0.4.2.csv"
EXPECTED = json.loads((FIXTURES / "expected-0.4.2.json").read_text())
BINS = "0-33=contradiction,34-66=neutral,67-100=entailment"


def run(url: str, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["--db", url, *map(str, args)])
    error = "" if result.exception is None else str(result.exception)
    return result.exit_code, result.stdout, result.stderr + error


def rows_in_0_4_2_columns(url: str) -> dict[str, list[tuple]]:
    """Every row of every 0.4.2 table, in the columns 0.4.2 had (schema 12 adds label.raw)."""
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
            out[name] = [tuple(map(str, r)) for r in conn.execute(select(*cols).order_by(*cols))]
    engine.dispose()
    return out


def test_a_0_4_2_store_migrates_with_its_imported_studies_kept(tmp_path: Path):
    path = tmp_path / "store.db"
    shutil.copy(STORE, path)
    url = f"sqlite:///{path}"
    before = rows_in_0_4_2_columns(f"sqlite:///{STORE}")
    assert len(before["label"]) > 100 and len(before["labelimport"]) == 2

    code, out, err = run(url, "migrate")
    assert code == 0, err
    assert f"to {schema.SCHEMA_HEAD.lstrip('0')}" in out
    after = rows_in_0_4_2_columns(url)
    # Schema 20: the import records list their annotators' pseudonyms, not their worker ids
    # (which stay on the annotator rows); the records are otherwise as they were.
    records = zip(after.pop("labelimport"), before.pop("labelimport"), strict=True)
    assert after == before
    for now, then in records:
        old, new = ast.literal_eval(then[-2]), ast.literal_eval(now[-2])  # detail
        assert now[:-2] + now[-1:] == then[:-2] + then[-1:]
        assert new == {
            **{k: v for k, v in old.items() if k != "workers"},
            "annotators": list(old["workers"]),
        }
    engine = create_engine(url)
    with engine.connect() as conn:
        raw = conn.exec_driver_sql("SELECT count(*) FROM label WHERE raw IS NOT NULL").scalar()
    engine.dispose()
    assert raw == 0

    for name in ("report mturk", "report long"):
        study = "old-mturk" if name == "report mturk" else "old-long"
        code, printed, err = run(url, "report", study, "--format", "json", "--bootstrap", "0")
        assert code == 0, err
        report, then = json.loads(printed), EXPECTED[name]
        assert report["n_labels"] == then["n_labels"]
        # The same ties; each settled by the seed and the item's id now (it was the seed and
        # the items' order), so only a tied item's pick may differ.
        ties = {t["item"]: t["votes"] for t in report["ties"]["items"]}
        assert ties == {t["item"]: t["votes"] for t in then["ties"]["items"]}
        for tie in report["ties"]["items"]:
            top = max(tie["votes"].values())
            assert tie["votes"][tie["result"]] == top
        n = then["n_items"]
        accuracy = report["scores"]["accuracy"]["value"]
        assert abs(accuracy - then["scores"]["accuracy"]["value"]) <= len(ties) / n + 1e-12
        assert report["agreement"]["krippendorff_alpha"] == pytest.approx(
            then["agreement"]["krippendorff_alpha"]
        )
        assert report["datasheet"]["collected"] == then["datasheet"]["collected"]

    out_dir = tmp_path / "out"
    code, _, err = run(url, "export", "old-mturk", "--format", "labels", "--to", out_dir)
    assert code == 0, err
    header = (out_dir / "old-mturk-labels.csv").read_text().splitlines()[0]
    assert "raw_answer" not in header  # nothing recorded then, nothing claimed now

    # The batch is recognised as imported (0.4.2 kept no options: any import of it repeats
    # it), and a study named for it makes a second one from the same file.
    code, out, err = run(url, "import-labels", BATCH, "--dataset", "1", "--values", BINS)
    assert code == 0 and "already imported" in out and "'old-mturk'" in out, err
    code, out, err = run(
        url, "import-labels", BATCH, "--dataset", "1", "--values", BINS, "--study", "again"
    )
    assert code == 0 and "study 'again'" in out, err
    code, printed, _ = run(url, "export", "again", "--format", "labels", "--to", out_dir)
    assert "raw_answer" in (out_dir / "again-labels.csv").read_text().splitlines()[0]
