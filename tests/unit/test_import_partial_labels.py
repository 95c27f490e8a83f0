"""A data file is labelled on every row or on none: one where some rows have no label is
refused at the first such row (it said "2 items with gold labels" with one of them unlabelled),
whatever its split; an unlabelled test split (the Hub's -1 on every row) still imports."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import fixtures as fx

ROWS = [
    {"premise": "The ferry left at noon.", "hypothesis": "The ferry left.", "idx": 0},
    {"premise": "Ada sold the piano.", "hypothesis": "Ada bought a piano.", "idx": 1},
    {"premise": "It snowed all week.", "hypothesis": "There was snow.", "idx": 2},
]


def rows(*labels: str | None) -> list[dict]:
    return [
        {**row, **({"label": label} if label is not None else {})}
        for row, label in zip(ROWS, labels, strict=False)
    ]


@pytest.mark.parametrize(
    ("name", "labels", "line", "labelled_line"),
    [
        ("val.jsonl", ["entailment", None], 2, 1),
        ("test.jsonl", ["not_entailment", None, None], 2, 1),
        ("train.jsonl", [None, "entailment", "entailment"], 1, 2),
    ],
)
def test_a_file_with_some_rows_unlabelled_is_refused(
    cli, tmp_path: Path, name, labels, line, labelled_line
):
    path = fx.write_jsonl(tmp_path / name, rows(*labels))
    assert cli("init").code == 0
    told = fx.refused_import(cli, "superglue/rte", path)
    assert f"{path}:{line}: no gold label, while line {labelled_line} has one" in told


def test_files_labelled_throughout_or_not_at_all_import(cli, tmp_path: Path):
    dev = fx.write_jsonl(tmp_path / "val.jsonl", rows("entailment", "not_entailment"))
    test = fx.write_jsonl(tmp_path / "test.jsonl", rows(None, None, None))
    result = cli("import", "superglue/rte", tmp_path, "--format", "json")
    assert result.code == 0, result.stderr
    got = {Path(r["path"]).name: r["detail"]["labelled"] for r in result.json()}
    assert got == {dev.name: 1, test.name: 0}


def test_score_refuses_such_a_gold_file(cli, tmp_path: Path):
    gold = fx.write_jsonl(tmp_path / "val.jsonl", rows("entailment", None))
    pred = fx.write_jsonl(tmp_path / "RTE.jsonl", [{"idx": 0, "label": "entailment"}])
    result = cli("score", pred, "--gold", gold)
    assert result.code == 1
    assert f"{gold}:2: no gold label, while line 1 has one" in result.stderr


def test_a_hub_validation_split_with_a_minus_one_is_refused(cli, tmp_path: Path):
    """A Parquet file has rows: the refusal said "while line 1 has one"."""
    pytest.importorskip("datasets")
    from tests import hub_fixtures as hub

    rte = hub.SUPER_GLUE["rte"]
    dev = hub.write_parquet(
        hub.hub_dataset(rows("entailment", None, "not_entailment"), rte),
        tmp_path / "bad" / "validation-00000-of-00001.parquet",
    )
    assert cli("init").code == 0
    told = fx.refused_import(cli, "superglue/rte", dev)
    assert f"{dev}:2: no gold label, while row 1 has one" in told
    # The Hub's test split: -1 on every row, imported as unlabelled.
    test = hub.write_parquet(
        hub.hub_dataset(rows(None, None, None), rte),
        tmp_path / "good" / "test-00000-of-00001.parquet",
    )
    result = cli("import", "superglue/rte", test, "--format", "json")
    assert result.code == 0, result.stderr
    assert result.json()[0]["detail"]["labelled"] == 0
