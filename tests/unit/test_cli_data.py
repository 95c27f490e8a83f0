"""The data commands as a user runs them: init, tasks, protocols, import, datasets."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests import fixtures as fx

CUSTOM_TASK = """
benchmark = "custom"
title = "Headline tone"
kind = "classification"
layout = "single"
metrics = ["accuracy", "macro_f1"]
guidelines = "Is the headline's tone positive, neutral or negative?"
fields = [{ name = "headline", label = "Headline", source = ["text"] }]
labels = [
  { value = "pos", text = "Positive", key = "1" },
  { value = "neu", text = "Neutral", key = "2" },
  { value = "neg", text = "Negative", key = "3" },
]
source = { reader = "csv", id = ["id"], label = ["tone"] }
submission = { file = "tone.tsv", style = "glue-tsv" }
"""


def test_import_then_datasets_json(cli, tmp_path: Path):
    fx.write_jsonl(tmp_path / "RTE" / "val.jsonl", fx.SG_RTE)
    result = cli("import", "superglue/rte", tmp_path / "RTE")
    assert result.code == 0, result.stderr
    assert "superglue/rte dev, 3 items with gold labels" in " ".join(result.stdout.split())
    rows = cli("datasets", "--format", "json").json()
    assert len(rows) == 1
    assert {"id", "task", "split", "items", "sha256", "path"} <= set(rows[0])
    assert (rows[0]["task"], rows[0]["split"], rows[0]["items"]) == ("superglue/rte", "dev", 3)


def test_bad_file_error_and_unchanged_datasets(cli, tmp_path: Path):
    fx.write_jsonl(tmp_path / "val.jsonl", fx.SG_RTE)
    assert cli("import", "superglue/rte", tmp_path / "val.jsonl").code == 0
    before = cli("datasets", "--format", "json").stdout
    bad = fx.write_text(tmp_path / "bad" / "dev.tsv", fx.MRPC_DEV + "1\t9\t9\tshort\n")
    result = cli("import", "MRPC", bad)
    assert result.code == 1
    assert f"{bad}:4: row has 4 fields, expected 5 (ragged row)" in result.stderr
    assert cli("datasets", "--format", "json").stdout == before


def test_custom_csv_task_with_field_mapping(cli, tmp_path: Path):
    task = fx.write_text(tmp_path / "tone.toml", CUSTOM_TASK)
    data = fx.write_text(
        tmp_path / "headlines.csv",
        'id,title,tone\nh1,"Markets rally, traders cheer",pos\nh2,"Rain expected, again",neu\n',
    )
    result = cli(
        "import", task, data, "--split", "test", "--map", "headline=title", "--format", "json"
    )
    assert result.code == 0, result.stderr
    assert result.json()[0]["items"] == 2
    wrong = cli("import", task, data, "--split", "test", "--map", "colour=title")
    assert wrong.code == 1 and "unknown field" in wrong.stderr


def test_reading_commands_do_not_create_a_store(cli, db_url: str):
    result = cli("datasets")
    assert result.code == 1 and "no annotate store" in result.stderr
    assert not Path(db_url.removeprefix("sqlite:///")).exists()
    assert cli("init").code == 0
    assert cli("datasets", "--format", "json").json() == []


def test_tasks_and_protocols_list(cli):
    tasks = cli("tasks", "--format", "json").json()
    assert {"glue/cola", "superglue/multirc"} <= {t["name"] for t in tasks}
    protocols = cli("protocols", "--format", "json").json()
    assert {"superglue-2019", "glue-2019", "quick"} <= {p["name"] for p in protocols}


def test_store_of_another_schema_version_is_refused(cli, workspace):
    with workspace.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0999'")
    result = cli("datasets")
    assert result.code == 1 and "has schema 999 (written by" in result.stderr
    assert "upgrade annotate to use this store" in result.stderr


def test_console_script_prints_one_line_not_a_traceback(tmp_path: Path):
    env = {**os.environ, "ANNOTATE_DB": str(tmp_path / "none.db")}
    proc = subprocess.run(
        [sys.executable, "-m", "annotate", "datasets"], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: no annotate store") and "Traceback" not in proc.stderr


def test_a_command_run_in_a_folder_without_the_store_names_the_folder(tmp_path: Path):
    """A newcomer in the wrong folder read "no annotate store at sqlite:///annotate.db",
    which does not say where it looked; the line names the folder."""
    env = {k: v for k, v in os.environ.items() if k not in ("ANNOTATE_DB", "ANNOTATE_CONFIG")}
    proc = subprocess.run(
        [sys.executable, "-m", "annotate", "status", "rte-2026"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 1
    assert proc.stderr == (
        f"error: no annotate store at sqlite:///annotate.db in {tmp_path.resolve()}; "
        "run `annotate init` (or import data)\n"
    )


def test_study_create_says_at_once_that_test_items_without_gold_give_no_score(cli, tmp_path: Path):
    """SuperGLUE's own test.jsonl has no labels: a study of it was made without a word, and
    the report said "scores omitted" only once people had labelled it."""
    from tests.engine_helpers import rte_rows, write_jsonl

    write_jsonl(tmp_path / "RTE" / "val.jsonl", rte_rows(8))
    unlabelled = [{k: v for k, v in row.items() if k != "label"} for row in rte_rows(6, 100)]
    write_jsonl(tmp_path / "RTE" / "test.jsonl", unlabelled)
    assert cli("import", "superglue/rte", tmp_path / "RTE").code == 0
    made = cli(
        "study", "create", "t", "--task", "superglue/rte", "--train", "val", "--test", "test"
    )
    assert made.code == 0, made.stderr
    assert "note: the test items (dataset 2, test) have no gold labels: the report will give " in (
        made.stderr
    )
    scored = cli(
        "study", "create", "v", "--task", "superglue/rte", "--train", "val", "--test", "val"
    )
    assert scored.code == 0 and "no gold" not in scored.stderr


def test_study_create_names_datasets_by_split_or_file_and_counts_training_items(
    cli, tmp_path: Path
):
    """--train/--test take a dataset id, a split or the imported file's name, not just an id
    that reads like a count; --training-items is the number of training items."""
    from tests.engine_helpers import rte_rows, write_jsonl

    write_jsonl(tmp_path / "RTE" / "val.jsonl", rte_rows(8))
    write_jsonl(tmp_path / "RTE" / "test.jsonl", rte_rows(12, 100))
    write_jsonl(tmp_path / "other" / "test.jsonl", rte_rows(6, 500))
    assert cli("import", "superglue/rte", tmp_path / "RTE").code == 0
    assert cli("import", "superglue/rte", tmp_path / "other" / "test.jsonl").code == 0
    ids = {
        (d["path"].split("/")[-2], d["split"]): d["id"]
        for d in cli("datasets", "--format", "json").json()
    }

    made = cli(
        "study",
        "create",
        "a",
        "--task",
        "superglue/rte",
        "--protocol",
        "quick",
        "--train",
        "val",
        "--test",
        str(ids[("RTE", "test")]),
        "--training-items",
        "4",
        "--sample",
        "all",
        "--format",
        "json",
    )
    assert made.code == 0, made.stderr
    assert (made.json()["training_items"], made.json()["test_items"]) == (4, 12)
    assert made.json()["train_dataset"] == ids[("RTE", "dev")]

    by_file = cli(
        "study",
        "create",
        "b",
        "--task",
        "superglue/rte",
        "--protocol",
        "quick",
        "--train",
        "val.jsonl",
        "--test",
        "test",
        "--sample",
        "all",
        "--format",
        "json",
    )
    assert by_file.code == 0, by_file.stderr
    # "test" is the latest test import: the other folder's 6 items.
    assert by_file.json()["test_dataset"] == ids[("other", "test")]
    assert by_file.json()["test_items"] == 6

    wrong = cli("study", "create", "c", "--task", "superglue/rte", "--train", "holdout")
    assert wrong.code == 1 and "no dataset of superglue/rte is 'holdout'" in wrong.stderr
    assert "val.jsonl, dev" in wrong.stderr


def test_a_sample_that_uses_up_the_shared_dataset_warns_of_zero_training_items(cli, tmp_path: Path):
    """29.7: training and test from one dataset never overlap; `--sample all` takes it whole
    and leaves no training item: said at once, not found out at the gate."""
    from tests.engine_helpers import rte_rows, write_jsonl

    write_jsonl(tmp_path / "RTE" / "val.jsonl", rte_rows(8))
    assert (
        cli("import", "superglue/rte", tmp_path / "RTE" / "val.jsonl", "--split", "test").code == 0
    )

    def create(name: str, sample: str):  # type: ignore[no-untyped-def]
        """A study trained and tested on the one imported dataset, asking for 4 training items."""
        return cli(
            "study", "create", name, "--task", "superglue/rte", "--protocol", "quick",
            "--train", "test", "--test", "test", "--training-items", "4", "--sample", sample,
        )  # fmt: skip

    made = create("all-of-it", "all")
    assert made.code == 0, made.stderr
    told = " ".join(made.stderr.split())
    assert "warning: 0 training items instead of the 4 asked for" in told
    assert "which training shares" in told and "nobody will be trained" in told
    fine = create("some", "4")
    assert fine.code == 0 and "warning" not in fine.stderr


def test_a_test_sample_larger_than_its_dataset_warns_as_a_short_training_sample_does(
    cli, tmp_path: Path
):
    """`--sample 1000` on an 8-item test set took 8 items without a word, where training
    short of its number is a warning: the test sample's shortfall is one too."""
    from tests.engine_helpers import rte_rows, write_jsonl

    write_jsonl(tmp_path / "RTE" / "val.jsonl", rte_rows(8))
    write_jsonl(tmp_path / "RTE" / "test.jsonl", rte_rows(8, start=100))
    assert cli("import", "superglue/rte", tmp_path / "RTE").code == 0

    def create(name: str, sample: str):  # type: ignore[no-untyped-def]
        return cli(
            "study", "create", name, "--task", "superglue/rte", "--protocol", "quick",
            "--train", "val", "--test", "test", "--training-items", "4", "--sample", sample,
        )  # fmt: skip

    made = create("big", "1000")
    assert made.code == 0, made.stderr
    told = " ".join(made.stderr.split())
    test_id = cli("study", "show", "big", "--format", "json").json()["test_dataset"]
    assert (
        f"warning: 8 test items instead of the 1000 asked for: dataset {test_id} has no more"
        in told
    )
    assert "8 test items from dataset" in made.stdout
    for fine in (create("whole", "all"), create("some", "8")):
        assert fine.code == 0 and "warning" not in fine.stderr, fine.stderr
    # No --sample: the preset's default sample (more than 8) of a smaller test set is the
    # whole set, which nobody asked to be larger.
    default = cli(
        "study", "create", "default", "--task", "superglue/rte", "--protocol", "quick",
        "--train", "val", "--test", "test", "--training-items", "4",
    )  # fmt: skip
    assert default.code == 0 and "warning" not in default.stderr, default.stderr
    assert "8 test items from dataset" in default.stdout
