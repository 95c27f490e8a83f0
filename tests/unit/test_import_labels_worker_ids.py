"""A platform's worker id (MTurk's WorkerId) is personal data: the store keeps it for payment
files alone. A refusal of a label file names the file and the line, never the worker's id."""

from __future__ import annotations

import csv
import io

from tests import label_fixtures as lf

ITEMS = lf.nli_items(4)


def _batch_with_a_repeat(tmp_path):
    """An MTurk batch whose first assignment is there twice (another AssignmentId)."""
    path = lf.mturk_batch(tmp_path / "batch.csv", ITEMS)
    rows = list(csv.reader(io.StringIO(path.read_text())))
    again = list(rows[1])
    again[rows[0].index("AssignmentId")] = "3ASSIGN9999"
    rows.insert(2, again)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    path.write_text(out.getvalue())
    return path, rows[1][rows[0].index("WorkerId")]


def test_a_worker_answering_an_item_twice_is_refused_by_line_without_their_id(cli, tmp_path):
    data = lf.write_jsonl(tmp_path / "val.jsonl", ITEMS)
    assert cli("import", "superglue/cb", data).code == 0
    path, worker = _batch_with_a_repeat(tmp_path)
    imported = cli("import-labels", path, "--dataset", "1", "--values", lf.BINS)
    agreement = cli("agreement", path, "--map", "label=rating")
    for result in (imported, agreement):
        assert result.code == 1
        assert f"{path}:3: the worker of this line" in result.stderr
        assert "(first on line 2)" in result.stderr
        assert worker not in result.stderr + result.stdout


def test_agreement_of_a_platform_file_names_its_workers_by_pseudonym(cli, tmp_path):
    path = lf.mturk_batch(tmp_path / "batch.csv", ITEMS)
    result = cli("agreement", path, "--map", "label=rating", "--bootstrap", "0", "--format", "json")
    assert result.code == 0, result.stderr
    names = {
        name for pair in result.json()["pairwise_cohen_kappa"] for name in (pair["a"], pair["b"])
    }
    assert names and all(name.startswith("w") for name in names)
    assert not any(worker in result.stdout for worker in lf.MTURK_WORKERS)


PROLIFIC_IDS = ["5f1a2b3c4d5e6f7a8b9c0d1e", "60aa11bb22cc33dd44ee55ff", "61bb22cc33dd44ee55ff6600"]


def test_agreement_of_a_long_file_names_its_annotators_by_pseudonym(cli, tmp_path):
    """A long file's annotator column may hold platform ids (PROLIFIC_PID): the output named
    them in its pairs; now w01, w02, … in the order the file first names them, as it says."""
    path = tmp_path / "long.csv"
    rows = [
        (item, who, "pos" if (item + n) % 3 else "neg")
        for item in range(1, 5)
        for n, who in enumerate(PROLIFIC_IDS)
    ]
    path.write_text("item,annotator,label\n" + "".join(f"{i},{w},{v}\n" for i, w, v in rows))
    result = cli("agreement", path, "--bootstrap", "0", "--format", "json")
    assert result.code == 0, result.stderr
    said = result.json()
    pairs = [(pair["a"], pair["b"]) for pair in said["pairwise_cohen_kappa"]]
    assert pairs == [("w01", "w02"), ("w01", "w03"), ("w02", "w03")]
    assert "w01, w02, … in the order the file first names them" in said["annotator_names"]
    table = cli("agreement", path, "--bootstrap", "0")
    for output in (result.stdout, table.stdout):
        assert not any(worker in output for worker in PROLIFIC_IDS)
    path.write_text(path.read_text() + f"1,{PROLIFIC_IDS[1]},neg\n")
    twice = cli("agreement", path, "--bootstrap", "0")
    assert twice.code == 1 and f"{path}:14: the annotator of this line" in twice.stderr
    assert PROLIFIC_IDS[1] not in twice.stderr + twice.stdout
