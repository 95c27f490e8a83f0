"""What the worker said beside an answer (`--skip-when`, `--map flag=`), the answer as given
(kept, exported, agreed on at interval level), one file imported more than one way, random ties
that do not depend on row order, and the crowd-html elements' outputs.

Expected figures are recomputed from the batch file with pandas and the `krippendorff`
package, never through annotate's code. They run on SQLite and on PostgreSQL."""

from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests import label_fixtures as lf


@pytest.fixture
def db_url(store_url: str) -> str:
    """Every test here runs on both backends (PostgreSQL: the postgres-marked run)."""
    return store_url


@pytest.fixture
def cb_store(cli, tmp_path: Path):
    """A store with 60 made-up CB items (SuperGLUE JSON lines, gold included) as dataset 1."""
    items = lf.nli_items(60)
    data = lf.write_jsonl(tmp_path / "val.jsonl", items)
    assert cli("import", "superglue/cb", data).code == 0
    return items


def _bin(value: float) -> str:
    low, high = (0, 33), (34, 66)
    if low[0] <= value <= low[1]:
        return "contradiction"
    return "neutral" if high[0] <= value <= high[1] else "entailment"


def _answers(path: Path) -> pd.DataFrame:
    """The batch in long form, by hand: approved assignments, one row per answered slot, with
    the slider's number and whether the N/A box was ticked."""
    wide = pd.read_csv(path, dtype=str, keep_default_na=False)
    wide = wide[wide["AssignmentStatus"] != "Rejected"]
    rows = []
    for _, r in wide.iterrows():
        for n in range(lf.N_SLOTS):
            if r[f"Input.idx_{n}"]:
                rows.append(
                    {
                        "worker": r["WorkerId"],
                        "item": r[f"Input.idx_{n}"],
                        "number": float(r[f"Answer.rating{n}"]),
                        "na": r[f"Answer.na{n}"] == "on",
                    }
                )
    return pd.DataFrame(rows)


def _alpha(long: pd.DataFrame, values: str, level: str) -> float:
    import krippendorff

    matrix = long.pivot(index="worker", columns="item", values=values)
    return krippendorff.alpha(
        reliability_data=matrix.to_numpy(dtype=float), level_of_measurement=level
    )


def test_an_mturk_batch_with_a_not_applicable_box_skips_those_answers(cli, cb_store, tmp_path):
    """The acceptance test: --skip-when na leaves out the ticked answers; α (nominal, on the
    binned classes) and interval α on the slider's numbers equal krippendorff's on the
    remaining answers, from the study and straight from the batch file."""
    batch = lf.mturk_batch(tmp_path / "Batch_77_batch_results.csv", cb_store, na_rate=0.15)
    long = _answers(batch)
    kept = long[~long["na"]].copy()
    assert 0 < long["na"].sum() < len(long) // 3

    result = cli(
        "import-labels", batch, "--dataset", "1", "--values", lf.BINS, "--skip-when", "na",
        "--study", "pk",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    n_na = int(long["na"].sum())
    assert f"left out: {n_na} answers (--skip-when)" in result.stdout
    report = cli("report", "pk", "--format", "json", "--bootstrap", "0").json()
    assert report["n_labels"] == len(kept)
    assert f"left out: {n_na} answers with na (--skip-when)" in report["datasheet"]["collected"]

    codes = {c: n for n, c in enumerate(lf.CLASSES)}
    kept["code"] = kept["number"].map(lambda v: codes[_bin(v)])
    nominal = _alpha(kept, "code", "nominal")
    assert report["agreement"]["krippendorff_alpha"]["value"] == pytest.approx(nominal)

    interval = _alpha(kept, "number", "interval")
    assert interval != pytest.approx(_alpha(long, "number", "interval"))  # the N/A answers count
    on_study = cli(
        "agreement", "--study", "pk", "--raw", "--level", "interval", "--format", "json",
        "--bootstrap", "0",
    )  # fmt: skip
    assert on_study.code == 0, on_study.stderr
    assert on_study.json()["krippendorff_alpha"]["value"] == pytest.approx(interval)
    on_file = cli(
        "agreement", batch, "--skip-when", "na", "--level", "interval", "--format", "json",
        "--bootstrap", "0",
    )  # fmt: skip
    assert on_file.code == 0, on_file.stderr
    assert on_file.json()["krippendorff_alpha"]["value"] == pytest.approx(interval)
    whole = cli(
        "agreement", batch, "--map", "label=rating", "--level", "interval", "--format", "json",
        "--bootstrap", "0",
    )  # fmt: skip
    assert whole.code == 0, whole.stderr
    assert whole.json()["krippendorff_alpha"]["value"] == pytest.approx(
        _alpha(long, "number", "interval")
    )


def test_flag_keeps_the_answers_and_says_what_the_worker_ticked(cli, cb_store, tmp_path):
    batch = lf.mturk_batch(tmp_path / "batch.csv", cb_store, na_rate=0.15)
    long = _answers(batch)
    n_na = int(long["na"].sum())
    result = cli(
        "import-labels", batch, "--dataset", "1", "--values", lf.BINS, "--map", "flag=na",
        "--study", "flagged",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert f"flagged: {n_na} answers, the column's value as comment" in result.stdout
    out = tmp_path / "out"
    assert cli("export", "flagged", "--format", "labels", "--to", out).code == 0
    exported = pd.read_csv(out / "flagged-labels.csv", dtype=str, keep_default_na=False)
    assert len(exported) == len(long)
    flagged = exported[exported["flag"] == "true"]
    assert len(flagged) == n_na and set(flagged["comment"]) == {"on"}
    assert set(flagged["raw_answer"]) == {"50"}
    sheet = cli("report", "flagged", "--format", "json", "--bootstrap", "0").json()["datasheet"]
    assert f"flagged: {n_na} answers with na set" in sheet["collected"]


@pytest.mark.parametrize("first", ["--map", "--skip-when"])
def test_skip_when_that_leaves_out_an_item_reads_the_files_items_as_before(cli, tmp_path, first):
    """A long file whose items come from its own columns, imported with --map flag=na and
    with --skip-when na (every answer of q2 ticked), in either order: the second is another
    study on the same items, not a refusal saying the columns differ."""
    lines = ["pair,premise,hypothesis,worker,answer,na"]
    for pair, premise, hypothesis, answers, na in (
        ("q1", "A dog ran.", "An animal ran.", ("yes", "yes"), ""),
        ("q2", "It is hot.", "It is cold.", ("no", "no"), "on"),
        ("q3", "Sam ate.", "Sam was hungry.", ("no", "yes"), ""),
    ):
        for worker, answer in zip(("A1WORKERX", "A2WORKERY"), answers, strict=True):
            lines.append(f"{pair},{premise},{hypothesis},{worker},{answer},{na}")
    path = tmp_path / "na.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    common = [
        "--task", "superglue/rte", "--map", "item=pair,annotator=worker,label=answer",
        "--values", "entailment=yes,not_entailment=no",
    ]  # fmt: skip
    ways = {"--map": ["--map", "flag=na"], "--skip-when": ["--skip-when", "na"]}
    second = "--skip-when" if first == "--map" else "--map"
    for way in (first, second):
        result = cli("import-labels", path, *common, *ways[way], "--study", way[2:])
        assert result.code == 0, result.stderr
    assert "2/2 items complete" in cli("status", "skip-when").stdout
    assert "3/3 items complete" in cli("status", "map").stdout


def test_the_answer_as_given_is_exported_beside_its_label(cli, cb_store, tmp_path):
    """csv, jsonl and parquet exports carry the slider's number in `raw_answer`."""
    batch = lf.mturk_batch(tmp_path / "batch.csv", cb_store)
    assert cli("import-labels", batch, "--dataset", "1", "--values", lf.BINS).code == 0
    long = _answers_without_na(batch)
    given = {
        (w, i): n for w, i, n in zip(long["worker"], long["item"], long["number"], strict=True)
    }
    out = tmp_path / "out"
    assert cli("export", "batch", "--format", "labels", "--to", out).code == 0
    assert cli("export", "batch", "--format", "labels", "--jsonl", "--to", out).code == 0
    assert cli("export", "batch", "--format", "parquet", "--to", out).code == 0
    frames = {
        "csv": pd.read_csv(out / "batch-labels.csv"),
        "jsonl": pd.read_json(out / "batch-labels.jsonl", lines=True, dtype=False),
        "parquet": pd.read_parquet(out / "batch-labels.parquet"),
    }
    workers = _pseudonyms(batch)
    for kind, frame in frames.items():
        assert list(frame.columns)[-1] == "raw_answer", kind
        assert len(frame) == len(long), kind
        for item, name, value, raw in zip(
            frame["item_id"], frame["annotator"], frame["value"], frame["raw_answer"], strict=True
        ):
            number = given[(workers[name], str(item))]
            assert float(raw) == number, kind
            assert value == _bin(number), kind


def _answers_without_na(path: Path) -> pd.DataFrame:
    wide = pd.read_csv(path, dtype=str, keep_default_na=False)
    wide = wide[wide["AssignmentStatus"] != "Rejected"]
    rows = [
        {
            "worker": r["WorkerId"],
            "item": r[f"Input.idx_{n}"],
            "number": float(r[f"Answer.rating{n}"]),
        }
        for _, r in wide.iterrows()
        for n in range(lf.N_SLOTS)
        if r[f"Input.idx_{n}"]
    ]
    return pd.DataFrame(rows)


def _pseudonyms(path: Path) -> dict[str, str]:
    """w01, w02, ... -> worker id, in the order the file first names each approved worker."""
    wide = pd.read_csv(path, dtype=str, keep_default_na=False)
    order = list(dict.fromkeys(wide[wide["AssignmentStatus"] != "Rejected"]["WorkerId"]))
    return {f"w{n + 1:02d}": w for n, w in enumerate(order)}


def _shuffled(path: Path, seed: int) -> Path:
    """The batch with its assignment rows in another order (the header first)."""
    lines = path.read_text().splitlines()
    body = lines[1:]
    random.Random(seed).shuffle(body)
    out = path.with_name(f"shuffled-{seed}.csv")
    out.write_text("\n".join([lines[0], *body]) + "\n")
    return out


def test_random_ties_do_not_depend_on_row_order(cli, cb_store, tmp_path):
    """The same labels imported in three row orders give identical majority answers, and
    each tie's pick is one of the tied answers."""
    batch = lf.mturk_batch(tmp_path / "batch.csv", cb_store, na_rate=0.3)
    picks = []
    for seed in (1, 2, 3):
        path = _shuffled(batch, seed)
        study = f"order{seed}"
        result = cli(
            "import-labels", path, "--dataset", "1", "--values", lf.BINS, "--study", study,
            "--map", "label=rating",
        )  # fmt: skip
        assert result.code == 0, result.stderr
        report = cli("report", study, "--format", "json", "--bootstrap", "0").json()
        picks.append({t["item"]: t["result"] for t in report["ties"]["items"]})
        soft = tmp_path / f"soft{seed}"
        assert cli("export", study, "--format", "soft", "--to", soft).code == 0
    assert picks[0] and picks[0] == picks[1] == picks[2]
    long = _answers_without_na(batch)
    long["label"] = long["number"].map(_bin)
    for item, pick in picks[0].items():
        counts = long[long["item"] == item]["label"].value_counts()
        assert pick in counts[counts == counts.max()].index


def test_a_map_key_the_format_cannot_use_is_refused_by_name(cli, cb_store, tmp_path):
    batch = lf.mturk_batch(tmp_path / "batch.csv", cb_store)
    for args, message in (
        (["--map", "comment=na"], "no Answer.na column"),
        (["--map", "evil=note"], "'evil' is neither a --map key nor a field of the task"),
        (["--map", "annotator=WorkerId"], "the mturk format cannot use annotator"),
        (["--map", "item=idx", "--map", "item=premise"], "--map item is given twice"),
        (["--skip-when", "nope"], "no Answer.nope column"),
    ):
        result = cli("import-labels", batch, "--dataset", "1", "--values", lf.BINS, *args)
        assert result.code == 1, args
        assert message in result.stderr, (args, result.stderr)
    q = lf.qualtrics_csv(tmp_path / "q.csv", cb_store[:3])
    refused = cli("import-labels", q, "--dataset", "1", "--map", "comment=Q9")
    assert refused.code == 1 and "the qualtrics format cannot use comment" in refused.stderr
    refused = cli("import-labels", q, "--dataset", "1", "--skip-when", "na")
    assert refused.code == 1 and "the qualtrics format has no column beside" in refused.stderr
    assert cli("study", "list", "--format", "json").json() == []


def _task_answers_batch(path: Path, cells: list[dict]) -> Path:
    """A crowd-html batch: one Answer.taskAnswers JSON cell per assignment (two slots)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        ["HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "WorkTimeInSeconds",
         "Input.idx_0", "Input.idx_1", "Answer.taskAnswers"]
    )  # fmt: skip
    for n, answers in enumerate(cells):
        writer.writerow(
            ["3HIT", f"3A{n}", f"AW{n}", "Approved", "60", "0", "1", json.dumps([answers])]
        )
    path.write_text(out.getvalue())
    return path


def test_crowd_html_elements_documented_outputs_are_read(cli, cb_store, tmp_path):
    """`<crowd-classifier name="label_0">` writes {"label_0": {"label": "entailment"}};
    `<crowd-classifier-multi-select>` {"labels": [...]}; a crowd-radio-button or checkbox
    {"VALUE": true}; crowd-slider a number; crowd-input text."""
    gold = [cb_store[0]["label"], cb_store[1]["label"]]
    shapes = [
        {f"label_{s}": {"label": gold[s]} for s in range(2)},
        {f"label_{s}": {"labels": [gold[s]]} for s in range(2)},
        {f"label_{s}": {c: c == gold[s] for c in lf.CLASSES} for s in range(2)},
        {f"label_{s}": gold[s] for s in range(2)},
    ]
    path = _task_answers_batch(tmp_path / "crowd.csv", shapes)
    result = cli("import-labels", path, "--dataset", "1", "--study", "crowd")
    assert result.code == 0, result.stderr
    out = tmp_path / "out"
    assert cli("export", "crowd", "--format", "labels", "--to", out).code == 0
    exported = pd.read_csv(out / "crowd-labels.csv", dtype=str)
    assert len(exported) == 8
    for item, value in zip(exported["item_id"], exported["value"], strict=True):
        assert value == gold[int(item)], (item, value)
    sliders = [{f"rating_{s}": 80 if n % 2 else 10, "note_0": "fine"} for s in range(1)
               for n in range(3)]  # fmt: skip
    for n, cell in enumerate(sliders):
        cell["rating_1"] = 55 + n
    path = _task_answers_batch(tmp_path / "slider.csv", sliders)
    result = cli(
        "import-labels", path, "--dataset", "1", "--values", lf.BINS, "--map", "label=rating",
        "--study", "slider",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    labels = cli("agreement", "--study", "slider", "--raw", "--level", "interval",
                 "--format", "json", "--bootstrap", "0")  # fmt: skip
    assert labels.code == 0, labels.stderr


def test_crowd_radio_buttons_at_their_default_value_are_one_answer(cli, cb_store, tmp_path):
    """Buttons named after the labels, each writing {"on": bool}, with an N/A checkbox beside
    them in the same shape: the answer is the button that is on; --skip-when na leaves out the
    answers whose box is ticked."""
    gold = [cb_store[0]["label"], cb_store[1]["label"]]
    cells = []
    for n in range(3):
        cell = {f"{c}{s}": {"on": c == gold[s]} for s in range(2) for c in lf.CLASSES}
        cell.update({f"na{s}": {"on": n == 2 and s == 1} for s in range(2)})
        cells.append(cell)
    path = _task_answers_batch(tmp_path / "radio.csv", cells)
    result = cli("import-labels", path, "--dataset", "1", "--skip-when", "na", "--study", "radio")
    assert result.code == 0, result.stderr
    assert "left out: 1 answer (--skip-when)" in result.stdout
    out = tmp_path / "out"
    assert cli("export", "radio", "--format", "labels", "--to", out).code == 0
    exported = pd.read_csv(out / "radio-labels.csv", dtype=str)
    assert len(exported) == 5
    assert all(
        v == gold[int(i)] for i, v in zip(exported["item_id"], exported["value"], strict=True)
    )


@pytest.mark.parametrize(
    ("make", "args"),
    [
        (lf.qualtrics_csv, ["--map", r"item=item_(\d+)"]),
        (lf.potato_jsonl, []),
        (lf.labelstudio_json, []),
    ],
    ids=["qualtrics", "potato", "labelstudio"],
)
def test_agreement_reads_every_format_import_labels_reads(cli, cb_store, tmp_path, make, args):
    """α straight from the tool's file equals α of the study imported from it."""
    path = make(
        tmp_path / ("annotated_instances.jsonl" if make is lf.potato_jsonl else "f"), cb_store[:12]
    )
    if make is not lf.potato_jsonl:
        path = path.rename(path.with_suffix(".json" if make is lf.labelstudio_json else ".csv"))
    assert cli("import-labels", path, "--dataset", "1", *args, "--study", "s").code == 0
    report = cli("report", "s", "--format", "json", "--bootstrap", "0").json()
    result = cli("agreement", path, *args, "--format", "json", "--bootstrap", "0")
    assert result.code == 0, result.stderr
    assert result.json()["krippendorff_alpha"]["value"] == pytest.approx(
        report["agreement"]["krippendorff_alpha"]["value"]
    )


def test_agreement_reads_the_raw_mturk_file(cli, cb_store, tmp_path):
    """`agreement FILE` on the batch as MTurk wrote it (it said "no item column" before)."""
    import krippendorff

    batch = lf.mturk_batch(tmp_path / "batch.csv", cb_store)
    result = cli("agreement", batch, "--format", "json", "--bootstrap", "0")
    assert result.code == 0, result.stderr
    long = _answers_without_na(batch)
    codes = {v: n for n, v in enumerate(sorted(set(long["number"])))}
    matrix = long.assign(code=long["number"].map(codes)).pivot(
        index="worker", columns="item", values="code"
    )
    expected = krippendorff.alpha(
        reliability_data=matrix.to_numpy(dtype=float), level_of_measurement="nominal"
    )
    assert result.json()["krippendorff_alpha"]["value"] == pytest.approx(expected)
    assert np.isfinite(expected)


def test_points_of_the_tasks_answer_scale_are_read_as_the_scale(cli, cb_store, tmp_path):
    """CB answers on SuperGLUE's 7-point scale import without --values (they were refused as
    not a label): scored collapsed, α on the scale, as a study labelled on the screens."""
    krippendorff = pytest.importorskip("krippendorff")
    points = ["123", "345", "671", "126", "447", "765", "215", "334"]  # no 1-1-1 split
    answers = {i: list(p) for i, p in enumerate(points)}
    path = tmp_path / "scale.csv"
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["item", "worker", "answer"])
        for i, points in answers.items():
            writer.writerows([[cb_store[i]["idx"], f"W{j}", p] for j, p in enumerate(points)])
    result = cli(
        "import-labels", path, "--dataset", "1", "--study", "scale",
        "--map", "item=item,annotator=worker,label=answer",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    report = cli("report", "scale", "--format", "json", "--bootstrap", "0").json()
    alpha = report["agreement"]["krippendorff_alpha"]
    table = np.array([[float(p) for p in points] for points in answers.values()]).T
    assert alpha["level"] == "ordinal"
    assert alpha["value"] == pytest.approx(
        krippendorff.alpha(table, level_of_measurement="ordinal")
    )
    collapse = {"1": "entailment", "2": "entailment", "6": "contradiction", "7": "contradiction"}
    right = 0
    for i, points in answers.items():
        votes = pd.Series([collapse.get(p, "neutral") for p in points]).value_counts()
        right += votes.iloc[0] > 1 and votes.index[0] == cb_store[i]["label"]
    assert report["ties"]["n_tied"] == 0
    assert report["scores"]["accuracy"]["value"] == pytest.approx(right / 8)
