"""One split vocabulary: `val`, `validation` and `dev` name the same split, at import and at
every later reference (`study create --train val`)."""

from __future__ import annotations

import pytest
from sqlmodel import Session

from annotate.splits import canonical_split, same_split
from annotate.store.models import Dataset
from tests import fixtures as fx


@pytest.mark.parametrize("stored_as", ["val", "validation", "dev", "VAL"])
@pytest.mark.parametrize("asked_as", ["val", "validation", "dev"])
def test_any_name_at_import_is_found_by_any_name_later(cli, tmp_path, stored_as, asked_as):
    val = fx.write_jsonl(tmp_path / "pilot.jsonl", fx.SG_RTE)
    test = fx.write_jsonl(tmp_path / "test.jsonl", fx.SG_RTE[:2])
    imported = cli("import", "superglue/rte", val, "--split", stored_as)
    assert imported.code == 0 and "superglue/rte dev" in imported.stdout
    assert cli("import", "superglue/rte", test).code == 0
    made = cli(
        "study",
        "create",
        "s",
        "--task",
        "superglue/rte",
        "--protocol",
        "quick",
        "--train",
        asked_as,
        "--test",
        "test",
    )
    assert made.code == 0, made.stderr


def test_a_store_holding_an_old_spelling_is_still_found(cli, workspace, tmp_path):
    """Stores written before the names were unified hold `val` as it was typed."""
    test = fx.write_jsonl(tmp_path / "test.jsonl", fx.SG_RTE[:2])
    val = fx.write_jsonl(tmp_path / "val.jsonl", fx.SG_RTE)
    assert cli("import", "superglue/rte", val).code == 0
    assert cli("import", "superglue/rte", test).code == 0
    with Session(workspace.engine) as s:
        dataset = s.get(Dataset, 1)
        dataset.split = "val"
        s.add(dataset)
        s.commit()
    made = cli(
        "study",
        "create",
        "s",
        "--task",
        "superglue/rte",
        "--protocol",
        "quick",
        "--train",
        "validation",
        "--test",
        "test",
    )
    assert made.code == 0, made.stderr
    # and with no --train at all, the dev split is picked under its old name
    assert cli("study", "create", "t", "--task", "superglue/rte", "--protocol", "quick").code == 0


def test_the_vocabulary():
    assert {canonical_split(n) for n in ("val", "Validation", "dev", " DEV ")} == {"dev"}
    assert canonical_split("validation_matched") == "dev_matched"
    assert canonical_split("pilot") == "pilot" and not same_split("train", "dev")
