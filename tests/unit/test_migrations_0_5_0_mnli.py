"""A store made by annotate 0.5.0 (schema 15; tests/migration/store-0.5.0-mnli.db, built by the
0.5.0 code with tests/migration/build_0_5_0_mnli_store.py) holding the Hub's combined `mnli`
folder imported as both halves: 0.5.0 stored MNLI-m's dev and test as `dev_matched` and
`test_matched` (MNLI-mm's as `..._mismatched`), so no study found them. Migrated, each half's
own splits are `dev` and `test`, a study finds them, and nothing else changed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import create_engine
from typer.testing import CliRunner

from annotate.cli import app
from annotate.store import schema
from tests.migration_stores import earlier_store

STORE = Path(__file__).resolve().parents[1] / "migration" / "store-0.5.0-mnli.db"
TABLES = {"sqlite": (), "postgresql": ("dataset", "item")}


def run(url: str, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["--db", url, *map(str, args)])
    error = "" if result.exception is None else str(result.exception)
    return result.exit_code, result.stdout, result.stderr + error


def rows(url: str, sql: str) -> list[tuple]:
    engine = create_engine(url)
    with engine.connect() as conn:
        found = [tuple(r) for r in conn.exec_driver_sql(sql)]
    engine.dispose()
    return found


def test_mnli_halves_from_the_hubs_combined_folder_get_their_plain_split_names(
    backend: str, new_store_url: Callable[[], str], tmp_path: Path
):
    # On PostgreSQL the datasets and their items (the study and its labels stay on SQLite).
    url = earlier_store(STORE, "0015", TABLES[backend], backend, new_store_url, tmp_path)
    datasets = "SELECT id, task, split, n_items, sha256 FROM dataset ORDER BY id"
    kept = "SELECT * FROM item ORDER BY id", "SELECT * FROM label ORDER BY id"
    before = rows(url, datasets)
    before_kept = [rows(url, sql) for sql in kept]
    assert ("glue/mnli-m", "test_matched") in {(t, s) for _, t, s, _, _ in before}

    code, out, err = run(url, "migrate")
    assert code == 0, err
    assert f"to {schema.SCHEMA_HEAD.lstrip('0')}" in out
    for line in (
        "glue/mnli-m dataset 1: split test_matched is now test",
        "glue/mnli-m dataset 4: split dev_matched is now dev",
        "glue/mnli-mm dataset 7: split test_mismatched is now test",
        "glue/mnli-mm dataset 10: split dev_mismatched is now dev",
    ):
        assert line in out, out

    renamed = {
        ("glue/mnli-m", "dev_matched"): "dev",
        ("glue/mnli-m", "test_matched"): "test",
        ("glue/mnli-mm", "dev_mismatched"): "dev",
        ("glue/mnli-mm", "test_mismatched"): "test",
    }
    expected = [(i, t, renamed.get((t, s), s), n, sha) for i, t, s, n, sha in before]
    assert rows(url, datasets) == expected
    # The other half's splits keep the names that say what they are.
    assert ("glue/mnli-m", "dev_mismatched") in {(t, s) for _, t, s, _, _ in expected}
    assert [rows(url, sql) for sql in kept] == before_kept

    # A study of either half now finds its own dev and test sets, with no ids given.
    by_split = {(t, s): i for i, t, s, _, _ in expected}
    for task in ("glue/mnli-m", "glue/mnli-mm"):
        name = task.rsplit("/", 1)[1]
        code, out, err = run(
            url, "study", "create", name, "--task", task, "--protocol", "quick", "--format", "json"
        )
        assert code == 0, err
        made = json.loads(out)
        assert made["train_dataset"] == by_split[task, "dev"], made
        assert made["test_dataset"] == by_split[task, "test"], made

    if backend != "sqlite":
        return
    # The study 0.5.0 made by naming the datasets keeps them, and reports as before.
    code, out, err = run(url, "report", "mm-by-id", "--format", "json", "--bootstrap", "0")
    assert code == 0, err
    assert json.loads(out)["n_labels"] == len(before_kept[1]) - 12  # less the training answers
