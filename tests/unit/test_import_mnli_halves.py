"""MNLI's two halves: where one folder holds both (the Hub's combined `mnli` config, GLUE's
MNLI folder), MNLI-m takes only the `_matched` splits and MNLI-mm only the `_mismatched` ones,
stored as dev and test; a file of the other half is refused, never stored as this task's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import fixtures as fx

MNLI = "glue/mnli-m", "glue/mnli-mm"


def pairs(tag: str, n: int, labelled: bool = True) -> list[dict]:
    """Made-up MNLI rows; the tag says which file a row came from."""
    labels = ["entailment", "neutral", "contradiction"]
    return [
        {
            "premise": f"{tag} premise {i}.",
            "hypothesis": f"{tag} hypothesis {i}.",
            "label": labels[i % 3] if labelled else None,
            "idx": i,
        }
        for i in range(n)
    ]


@pytest.fixture
def combined(tmp_path: Path) -> Path:
    """The Hub's `mnli` config folder, as `datasets` writes it: five splits side by side."""
    pytest.importorskip("datasets")
    from tests import hub_fixtures as hub

    config = hub.GLUE["mnli"]
    splits = {
        "train": pairs("train", 4),
        "validation_matched": pairs("dev-m", 3),
        "validation_mismatched": pairs("dev-mm", 2),
        "test_matched": pairs("test-m", 2, labelled=False),
        "test_mismatched": pairs("test-mm", 1, labelled=False),
    }
    return hub.write_config(
        tmp_path / "glue" / "mnli", {s: hub.hub_dataset(rows, config) for s, rows in splits.items()}
    )


def imported(result) -> list[tuple[str, int, str]]:
    assert result.code == 0, result.stderr
    return sorted(
        (r["split"], r["items"], Path(r["path"]).name.split("-")[0]) for r in result.json()
    )


def test_the_hubs_combined_folder_gives_each_half_its_own_splits(cli, combined: Path):
    matched = imported(cli("import", "MNLI-m", combined, "--format", "json"))
    assert matched == [
        ("dev", 3, "validation_matched"),
        ("test", 2, "test_matched"),
        ("train", 4, "train"),
    ]
    mismatched = imported(cli("import", "MNLI-mm", combined, "--format", "json"))
    assert mismatched == [
        ("dev", 2, "validation_mismatched"),
        ("test", 1, "test_mismatched"),
        ("train", 4, "train"),
    ]
    # The study finds its task's test split; before, MNLI-mm had only test_matched/_mismatched.
    made = cli("study", "create", "mm", "--task", "MNLI-mm", "--protocol", "quick")
    assert made.code == 0, made.stderr


def test_a_hub_file_of_the_other_half_is_refused(cli, combined: Path):
    assert cli("init").code == 0
    path = combined / "validation_mismatched-00000-of-00001.parquet"
    told = fx.refused_import(cli, "MNLI-m", path)
    assert f"{path}: a file of glue/mnli-mm by its name or its folder's (mismatched)" in told


def test_glues_mnli_folder_and_its_files(cli, tmp_path: Path):
    folder = tmp_path / "glue_data" / "MNLI"
    fx.write_text(folder / "dev_matched.tsv", fx.MNLI_DEV)
    fx.write_text(folder / "dev_mismatched.tsv", fx.MNLI_DEV.replace("museum", "gallery"))
    fx.write_text(folder / "test_matched.tsv", fx.MNLI_TEST)
    fx.write_text(folder / "test_mismatched.tsv", fx.MNLI_TEST.replace("bakery", "mill"))
    assert imported(cli("import", "MNLI-mm", folder.parent, "--format", "json")) == [
        ("dev", 2, "dev_mismatched.tsv"),
        ("test", 1, "test_mismatched.tsv"),
    ]
    for task, name, other in [
        ("MNLI-m", "dev_mismatched.tsv", "glue/mnli-mm"),
        ("MNLI-mm", "test_matched.tsv", "glue/mnli-m"),
    ]:
        result = cli("import", task, folder / name)
        assert result.code == 1
        assert f"a file of {other} by its name" in " ".join(result.stderr.split())
    assert len(cli("datasets", "--format", "json").json()) == 2


def test_a_snapshot_gives_each_half_its_config(cli, tmp_path: Path):
    """The Hub's `mnli_matched` and `mnli_mismatched` configs name their splits `validation` and
    `test`: the folder says the half, for a folder or one of its files."""
    pytest.importorskip("datasets")
    from tests import hub_fixtures as hub

    config = hub.GLUE["mnli"]
    root = hub.write_snapshot(
        tmp_path / "glue",
        {
            "mnli_matched": {"validation": hub.hub_dataset(pairs("dev-m", 3), config)},
            "mnli_mismatched": {"validation": hub.hub_dataset(pairs("dev-mm", 2), config)},
        },
    )
    assert imported(cli("import", "MNLI-mm", root, "--format", "json")) == [
        ("dev", 2, "validation")
    ]
    other = root / "mnli_mismatched" / "validation-00000-of-00001.parquet"
    result = cli("import", "MNLI-m", other)
    assert result.code == 1
    assert "a file of glue/mnli-mm by its name or its folder's" in " ".join(result.stderr.split())
    result = cli("import", "MNLI-m", other.parent)
    assert result.code == 1
    assert "by its name a folder of glue/mnli-mm, not of glue/mnli-m" in result.stderr
    assert len(cli("datasets", "--format", "json").json()) == 1
