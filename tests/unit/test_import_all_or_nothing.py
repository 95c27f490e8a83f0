"""An import of several files (a task folder, a benchmark root) goes in whole or not at all, and
a benchmark root (one subfolder per task) gives the task's own subfolder only."""

from __future__ import annotations

from pathlib import Path

from tests import fixtures as fx
from tests.conftest import shared_file

CB_VAL = [
    {
        "premise": "Ada said the kettle had boiled.",
        "hypothesis": "the kettle had boiled",
        "label": "entailment",
        "idx": 0,
    },
    {
        "premise": "I doubt the ferry leaves on time.",
        "hypothesis": "the ferry leaves on time",
        "label": "contradiction",
        "idx": 1,
    },
    {
        "premise": "Perhaps the parcel came early.",
        "hypothesis": "the parcel came early",
        "label": "neutral",
        "idx": 2,
    },
]

SST2_TRAIN = "sentence\tlabel\na bright , tender little comedy \t1\ndull from start to end \t0\n"


def benchmark_root(root: Path) -> Path:
    """A GLUE download in miniature: SST-2/ and STS-B/, both with a train.tsv and a dev.tsv."""
    fx.write_text(root / "SST-2" / "train.tsv", SST2_TRAIN)
    fx.write_text(root / "SST-2" / "dev.tsv", fx.SST2_DEV)
    fx.write_text(root / "STS-B" / "train.tsv", fx.STSB_DEV)
    fx.write_text(root / "STS-B" / "dev.tsv", fx.STSB_DEV)
    return root


def test_a_folder_whose_second_file_is_broken_imports_nothing(cli, tmp_path: Path):
    folder = tmp_path / "CB"
    fx.write_jsonl(folder / "val.jsonl", CB_VAL)
    broken = fx.write_text(
        folder / "test.jsonl",
        '{"premise": "A cat sat.", "hypothesis": "a cat sat", "idx": 0}\n{"premise": "Th',
        final_newline=False,
    )
    told = fx.refused_import(cli, "CB", folder)
    assert f"{broken}:2: JSON syntax error" in told
    assert "nothing imported: the 2 files of this import go in together" in told
    # Mended, the folder imports whole.
    fx.write_jsonl(broken, [{"premise": "A cat sat.", "hypothesis": "a cat sat", "idx": 0}])
    again = cli("import", "CB", folder, "--format", "json")
    assert again.code == 0, again.stderr
    assert sorted((r["split"], r["items"]) for r in again.json()) == [("dev", 3), ("test", 1)]


def test_a_benchmark_root_gives_the_tasks_own_subfolder(cli, tmp_path: Path):
    root = benchmark_root(tmp_path / "glue")
    result = cli("import", "glue/sst2", root, "--format", "json")
    assert result.code == 0, result.stderr
    rows = result.json()
    assert sorted((r["split"], r["items"]) for r in rows) == [("dev", 3), ("train", 2)]
    assert {Path(r["path"]).parent.name for r in rows} == {"SST-2"}


def test_a_benchmark_root_without_the_tasks_folder_is_refused(cli, tmp_path: Path):
    """MNLI's train.tsv is a name SST-2's and STS-B's folders have too: none of them is MNLI's."""
    root = benchmark_root(tmp_path / "glue")
    assert cli("init").code == 0
    told = fx.refused_import(cli, "MNLI-m", root)
    assert f"{root}: no folder of glue/mnli-m here" in told
    assert "other tasks' folders only (SST-2, STS-B): give the folder of glue/mnli-m" in told


def test_another_tasks_folder_is_refused_by_its_name(cli, tmp_path: Path):
    root = benchmark_root(tmp_path / "glue")
    assert cli("init").code == 0
    told = fx.refused_import(cli, "SST-2", root / "STS-B")
    assert "by its name a folder of glue/stsb, not of glue/sst2" in told


def test_the_real_glue_root_imports_sst2_alone(cli):
    root = shared_file("glue/SST-2/train.tsv").parents[1]
    result = cli("import", "glue/sst2", root, "--format", "json")
    assert result.code == 0, result.stderr
    rows = result.json()
    assert {Path(r["path"]).parent.name for r in rows} == {"SST-2"}
    assert sorted((r["split"], r["items"]) for r in rows) == [
        ("dev", 872),
        ("test", 1821),
        ("train", 4999),
    ]
