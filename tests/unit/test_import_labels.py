"""`annotate import-labels`: studies from labels collected elsewhere, and the full report on them.

The MTurk acceptance test recomputes the report from the batch file itself, with pandas and the
`krippendorff` package, never through annotate's code."""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from annotate.formats.label_sources.qualtrics import read_qualtrics
from tests import label_fixtures as lf

BIN_EDGES = [(0, 33, "contradiction"), (34, 66, "neutral"), (67, 100, "entailment")]


@pytest.fixture
def cb_store(cli, tmp_path: Path):
    """A store with 50 made-up CB items (SuperGLUE JSON lines, gold included) as dataset 1."""
    items = lf.nli_items(50)
    data = lf.write_jsonl(tmp_path / "val.jsonl", items)
    assert cli("import", "superglue/cb", data).code == 0
    return items


def _row_counts(db_url: str) -> dict[str, int]:
    con = sqlite3.connect(db_url.removeprefix("sqlite:///"))
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    finally:
        con.close()


def _bin(value: float) -> str:
    return next(label for low, high, label in BIN_EDGES if low <= value <= high)


def _melt_mturk(path: Path) -> pd.DataFrame:
    """The batch file in long form, by hand: one row per (assignment, slot) with an item."""
    wide = pd.read_csv(path, dtype=str, keep_default_na=False)  # pads the short rows itself
    wide = wide[wide["AssignmentStatus"] != "Rejected"]
    rows = []
    for _, r in wide.iterrows():
        slots = [n for n in range(lf.N_SLOTS) if r[f"Input.idx_{n}"]]
        share = float(r["WorkTimeInSeconds"]) / len(slots)
        for n in slots:
            rows.append(
                {
                    "worker": r["WorkerId"],
                    "item": r[f"Input.idx_{n}"],
                    "label": _bin(float(r[f"Answer.rating{n}"])),
                    "seconds": share,
                    "work": float(r["WorkTimeInSeconds"]),
                    "assignment": r["AssignmentId"],
                }
            )
    return pd.DataFrame(rows)


def test_an_mturk_batch_imports_and_its_report_matches_a_recomputation(
    cli, cb_store, tmp_path, db_url
):
    import krippendorff

    batch = lf.mturk_batch(tmp_path / "Batch_4242_batch_results.csv", cb_store)
    header_width = len(batch.read_text().splitlines()[0].split(","))
    assert all(len(line.split(",")) < header_width for line in batch.read_text().splitlines()[1:3])
    result = cli(
        "import-labels", batch, "--dataset", "1", "--values", lf.BINS, "--study", "cb-mturk"
    )
    assert result.code == 0, result.stderr
    assert "collected outside annotate: MTurk batch, 10 assignments, gate unknown" in result.stdout
    assert "rejected assignments: 1" in result.stderr
    assert "1 HIT asked for more than k = 3 assignments (MaxAssignments up to 4)" in result.stderr

    printed = cli("report", "cb-mturk", "--format", "json", "--bootstrap", "0").stdout
    report = json.loads(printed)
    long = _melt_mturk(batch)
    gold = {str(it["idx"]): it["label"] for it in cb_store}
    # Pseudonyms: w01, w02, ... in the order the file first names each (approved) worker.
    order = list(dict.fromkeys(long["worker"]))
    pseudonym = {w: f"w{n + 1:02d}" for n, w in enumerate(order)}
    long["name"] = long["worker"].map(pseudonym)
    assert report["n_labels"] == len(long) and report["n_items"] == 50
    assert report["protocol"]["annotators_per_item"] == 3

    # Majority: the most chosen class; a tie as the report's tie list settled it.
    settled = {t["item"]: t["result"] for t in report["ties"].get("items", [])}
    majority = {}
    for item, group in long.groupby("item"):
        counts = group["label"].value_counts()
        top = counts[counts == counts.max()].index.tolist()
        majority[item] = top[0] if len(top) == 1 else settled[item]
    accuracy = np.mean([majority[i] == gold[i] for i in majority])
    assert report["scores"]["accuracy"]["value"] == pytest.approx(accuracy)

    # Krippendorff's α (nominal) with the krippendorff package on the annotators x items matrix.
    classes = {c: n for n, c in enumerate(lf.CLASSES)}
    matrix = long.pivot(index="name", columns="item", values="label").map(
        lambda v: np.nan if pd.isna(v) else classes[v]
    )
    alpha = krippendorff.alpha(
        reliability_data=matrix.to_numpy(dtype=float), level_of_measurement="nominal"
    )
    assert report["agreement"]["krippendorff_alpha"]["value"] == pytest.approx(alpha)

    # Each annotator's accuracy on their own items.
    by_name = {a["name"]: a for a in report["annotators"]}
    for name, group in long.groupby("name"):
        assert by_name[name]["n"] == len(group)
        own = np.mean(
            [lab == gold[i] for i, lab in zip(group["item"], group["label"], strict=True)]
        )
        assert by_name[name]["scores"]["accuracy"] == pytest.approx(own)

    # Dawid–Skene: the report's answers are a converged EM fit, recomputed here from majority.
    ds = next(e for e in report["model_aggregation"]["estimators"] if e["method"] == "dawid_skene")
    ours = _dawid_skene(long, lf.CLASSES)
    ds_accuracy = np.mean([ours[i] == gold[i] for i in ours])
    changed = sum(ours[i] != majority[i] for i in ours)
    assert ds["scores"]["accuracy"]["value"] == pytest.approx(ds_accuracy, abs=0.021)
    assert abs(ds["n_changed"] - changed) <= 1

    # The datasheet: who was timed how long (WorkTimeInSeconds, approved assignments only).
    sheet = report["datasheet"]
    assert (
        sheet["collected"]
        == "collected outside annotate: MTurk batch, 10 assignments, gate unknown"
    )
    minutes = long.drop_duplicates("assignment").groupby("name")["work"].sum() / 60
    times = {a["name"]: a for a in sheet["time_on_task"]["annotators"]}
    for name, total in minutes.items():
        assert times[name]["total_minutes"] == pytest.approx(total, abs=1e-3)
    assert sheet["time_on_task"]["total_minutes"] == pytest.approx(minutes.sum(), abs=1e-2)
    assert any("MaxAssignments" in a for a in sheet["assumptions"])
    # The raw worker ids stay out of every report.
    assert not any(worker in printed for worker in lf.MTURK_WORKERS)


def test_every_report_format_renders_an_imported_study(cli, cb_store, tmp_path):
    path = lf.potato_jsonl(tmp_path / "annotated_instances.jsonl", cb_store[:6])
    assert cli("import-labels", path, "--dataset", "1", "--study", "p").code == 0
    for fmt in ("markdown", "html", "latex"):
        result = cli("report", "p", "--format", fmt, "--bootstrap", "0")
        assert result.code == 0 and "collected outside annotate" in result.stdout, fmt


def _dawid_skene(long: pd.DataFrame, classes: list[str], tol: float = 1e-10) -> dict[str, str]:
    """Dawid & Skene (1979) EM from the majority vote, until the log-likelihood settles."""
    items = sorted(long["item"].unique(), key=int)
    workers = sorted(long["name"].unique())
    i = long["item"].map({v: n for n, v in enumerate(items)}).to_numpy()
    w = long["name"].map({v: n for n, v in enumerate(workers)}).to_numpy()
    c = long["label"].map({v: n for n, v in enumerate(classes)}).to_numpy()
    n_i, n_w, n_c = len(items), len(workers), len(classes)
    t = np.zeros((n_i, n_c))
    np.add.at(t, (i, c), 1.0)
    t /= t.sum(1, keepdims=True)
    last = -np.inf
    for _ in range(10_000):
        prior = t.mean(0)
        conf = np.full((n_w, n_c, n_c), 1e-10)
        np.add.at(conf, (w, slice(None), c), t[i])
        conf /= conf.sum(2, keepdims=True)
        log = np.tile(np.log(prior), (n_i, 1))
        np.add.at(log, i, np.log(conf[w, :, c]))
        top = log.max(1, keepdims=True)
        like = np.exp(log - top)
        ll = float((np.log(like.sum(1)) + top[:, 0]).sum())
        t = like / like.sum(1, keepdims=True)
        if ll - last < tol:
            break
        last = ll
    return {item: classes[int(k)] for item, k in zip(items, t.argmax(1), strict=True)}


@pytest.mark.parametrize(
    ("maker", "name", "args", "collected"),
    [
        (
            lf.long_csv,
            "labels.csv",
            [
                "--map",
                "item=pair,annotator=coder,label=verdict,seconds=secs,answered_at=when,comment=note",
            ],
            "long-format file, 3 annotators",
        ),
        (
            lf.qualtrics_csv,
            "survey.csv",
            ["--map", r"item=item_(\d+)"],
            "Qualtrics export, 3 responses",
        ),
        (lf.potato_jsonl, "annotated_instances.jsonl", [], "Potato output, 3 annotators"),
        (lf.labelstudio_json, "project-3-at-2024.json", [], "Label Studio export, 36 annotations"),
    ],
)
def test_each_tool_s_export_imports_and_reports(
    cli, cb_store, tmp_path, maker, name, args, collected
):
    path = maker(tmp_path / name, cb_store[:12])
    result = cli("import-labels", path, "--dataset", "1", "--study", "s", *args)
    assert result.code == 0, result.stderr
    report = cli("report", "s", "--format", "json", "--bootstrap", "0").json()
    assert report["n_labels"] == 36 and report["n_items"] == 12
    assert (
        report["datasheet"]["collected"] == f"collected outside annotate: {collected}, gate unknown"
    )
    assert report["datasheet"]["time_on_task"]["total_minutes"] > 0
    assert [a["name"] for a in report["annotators"]] == ["w01", "w02", "w03"]
    assert 0 <= report["scores"]["accuracy"]["value"] <= 1
    table = re.sub(r"[│\s]+", " ", cli("report", "s", "--bootstrap", "0").stdout)
    assert "(gate unknown)" in table
    assert cli("export", "s", "--format", "soft", "--to", tmp_path / "out").code == 0
    assert cli("export", "s", "--format", "superglue", "--to", tmp_path / "out").code == 0


def test_check_accepts_an_imported_study(cli, cb_store, tmp_path):
    """No gate of ours admitted the workers, and the platform may have handed an item to more
    than k of them: neither is a broken invariant of the store."""
    batch = lf.mturk_batch(tmp_path / "batch.csv", cb_store)
    assert cli("import-labels", batch, "--dataset", "1", "--values", lf.BINS).code == 0
    result = cli("check")
    assert result.code == 0, result.stdout
    status = cli("status", "batch", "--format", "json").json()
    assert {a["gate"] for a in status["annotators"]} == {"unknown"}
    assert {a["phase"] for a in status["annotators"]} == {"imported"}
    assert not any("stuck" in w for w in status.get("warnings", []))


def test_qualtrics_leaves_out_unfinished_responses(cli, cb_store, tmp_path):
    path = lf.qualtrics_csv(tmp_path / "survey.csv", cb_store[:5])
    result = cli("import-labels", path, "--dataset", "1", "--map", r"item=item_(\d+)")
    assert result.code == 0, result.stderr
    assert "unfinished responses: 1" in result.stderr


def test_qualtrics_leaves_out_the_researchers_previews_and_tests(cli, cb_store, tmp_path):
    """Qualtrics exports the responses of "Preview Survey" and of generated test responses
    beside the participants' (Status "Survey Preview" / "Survey Test", 1 / 2 in a numeric
    export), with no PROLIFIC_PID: they are not annotators, and are left out and counted."""
    path = lf.qualtrics_csv(tmp_path / "survey.csv", cb_store[:5])
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    header = rows[0]
    for status in ("Survey Preview", "Survey Test", "1"):
        extra = list(rows[3])
        extra[header.index("Status")] = status
        extra[header.index("ResponseId")] = f"R_{status[-4:]}"
        extra[header.index("PROLIFIC_PID")] = ""
        rows.append(extra)
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8")
    result = cli("import-labels", path, "--dataset", "1", "--map", r"item=item_(\d+)")
    assert result.code == 0, result.stderr
    assert "3 responses" in result.stdout and "from 3 annotators" in result.stdout
    assert "survey previews and tests: 3" in result.stderr


@pytest.mark.parametrize(
    ("zone", "first_shown"),
    [(None, "10:00"), ("Z", "10:00"), ("America/New_York", "14:00"), ("Asia/Tokyo", "01:00")],
)
def test_qualtrics_dates_are_read_in_the_zone_the_export_names(tmp_path, zone, first_shown):
    """Qualtrics writes StartDate and EndDate in the survey's time zone, named in the third
    header row (`{"ImportId":"startDate","timeZone":"America/New_York"}`): 10:00 in New York
    in June is 14:00 UTC, as the store keeps it (a file naming no zone is UTC)."""
    path = lf.qualtrics_csv(tmp_path / "survey.csv", lf.nli_items(5), time_zone=zone)
    labels = read_qualtrics(path, {"item": r"item_(\d+)"}).labels
    first = min(label.shown_at for label in labels)
    assert first.tzinfo is not None and first.utcoffset().total_seconds() == 0
    assert first.strftime("%H:%M") == first_shown
    # each response's work time is unchanged by the zone: 300 s over its five answers
    assert (max(lab.answered_at for lab in labels[:5]) - first).total_seconds() == 300


def test_a_qualtrics_time_zone_that_is_not_known_is_refused(cli, cb_store, tmp_path, db_url):
    before = _row_counts(db_url)
    path = lf.qualtrics_csv(tmp_path / "survey.csv", cb_store[:5], time_zone="Mars/Olympus")
    result = cli("import-labels", path, "--dataset", "1", "--map", r"item=item_(\d+)")
    assert result.code != 0
    assert "survey.csv:3: StartDate: unknown time zone 'Mars/Olympus'" in result.stderr
    assert "Traceback" not in result.stderr
    assert _row_counts(db_url) == before


@pytest.mark.parametrize("key", ["gold", "premise"])
def test_a_file_gold_or_text_with_dataset_is_refused_not_ignored(
    cli, cb_store, tmp_path, db_url, key
):
    """With --dataset the items' gold and text are the dataset's: a `--map gold=` (or a task
    field) that the import would not read is refused by name, not ignored (here the file's
    gold says contradiction where the dataset's says otherwise)."""
    item = cb_store[0]
    path = tmp_path / "labels.csv"
    path.write_text(
        "item,annotator,label,gold,premise\n"
        f"{item['idx']},W1,{item['label']},contradiction,Something else.\n"
        f"{item['idx']},W2,{item['label']},contradiction,Something else.\n",
        encoding="utf-8",
    )
    before = _row_counts(db_url)
    result = cli("import-labels", path, "--dataset", "1", "--map", f"{key}={key}")
    assert result.code == 1
    assert f"--map {key}={key}: with --dataset" in result.stderr, result.stderr
    assert "--task" in result.stderr and "Traceback" not in result.stderr
    assert _row_counts(db_url) == before


def test_items_can_come_from_the_file_itself(cli, tmp_path):
    assert cli("init").code == 0
    path = lf.labelstudio_json(tmp_path / "export.json", lf.nli_items(8))
    result = cli(
        "import-labels",
        path,
        "--task",
        "superglue/rte",
        "--values",
        "entailment=entailment,not_entailment=neutral,not_entailment=contradiction",
    )
    assert result.code == 1 and "--values" in result.stderr  # one answer cannot be two labels
    result = cli("import-labels", path, "--task", "superglue/cb", "--study", "ls")
    assert result.code == 0, result.stderr
    assert "items made from the file's columns" in result.stdout
    report = cli("report", "ls", "--format", "json", "--bootstrap", "0").json()
    assert report["has_gold"] is False and report["n_items"] == 8


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "p1,The ferry left at dusk.,The ferry departed in the morning.,entailment,W2,yes",
            "crowd.csv:3: item 'p1' has another premise than on line 2 "
            "('The ferry left at dusk.' against 'The ferry left at dawn.')",
        ),
        (
            "p1,The ferry left at dawn.,The ferry departed in the morning.,not_entailment,W2,no",
            "crowd.csv:3: item 'p1' has another gold label than on line 2 "
            "('not_entailment' against 'entailment')",
        ),
    ],
)
def test_an_item_that_reads_differently_on_two_lines_is_refused(
    cli, tmp_path, db_url, line, message
):
    """Keeping the first line's text or gold would score the second worker against an item
    they never saw: the second line is named, and nothing is stored."""
    assert cli("init").code == 0
    before = _row_counts(db_url)
    path = tmp_path / "crowd.csv"
    rows = [
        "pair,premise,hypothesis,gold,worker,answer",
        "p1,The ferry left at dawn.,The ferry departed in the morning.,entailment,W1,yes",
        line,
        "p2,Rain closed the pass.,The pass was open all week.,not_entailment,W1,no",
    ]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    options = (
        "--task", "superglue/rte", "--study", "c", "--values", "entailment=yes,not_entailment=no",
        "--map", "item=pair,annotator=worker,label=answer,gold=gold",
    )  # fmt: skip
    result = cli("import-labels", path, *options)
    assert result.code == 1 and message in result.stderr, result.stderr
    assert _row_counts(db_url) == before
    # The same item on every line, a later line leaving its text out: imported.
    rows[2] = "p1, The ferry left at dawn. ,,,W2,no"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    result = cli("import-labels", path, *options)
    assert result.code == 0, result.stderr
    labels = cli("export", "c", "--format", "labels", "--to", tmp_path / "out")
    assert labels.code == 0
    exported = (tmp_path / "out" / "c-labels.csv").read_text().splitlines()
    assert len(exported) == 4  # the header and three labels


def test_a_re_import_of_the_same_file_is_recognised(cli, cb_store, tmp_path):
    path = lf.potato_jsonl(tmp_path / "annotated_instances.jsonl", cb_store[:4])
    assert cli("import-labels", path, "--dataset", "1", "--study", "first").code == 0
    again = cli("import-labels", path, "--dataset", "1", "--study", "second")
    assert again.code == 0
    assert "already imported (same sha256, same options) as study 'first'" in again.stdout
    studies = cli("study", "list", "--format", "json").json()
    assert [s["name"] for s in studies] == ["first"]


def test_one_file_makes_another_study_when_the_options_differ(cli, cb_store, tmp_path):
    """The same batch binned two ways: two studies; the same options again: nothing changed,
    even from a copy under another name."""
    batch = lf.mturk_batch(tmp_path / "batch.csv", cb_store)
    coarse = "0-49=contradiction,50-50=neutral,51-100=entailment"
    assert cli("import-labels", batch, "--dataset", "1", "--values", lf.BINS).code == 0
    clash = cli("import-labels", batch, "--dataset", "1", "--values", coarse)
    assert clash.code == 1
    assert "a study named 'batch' exists already" in clash.stderr
    assert "imported as study 'batch' with other options" in clash.stderr
    other = cli("import-labels", batch, "--dataset", "1", "--values", coarse, "--study", "coarse")
    assert other.code == 0, other.stderr
    copy = tmp_path / "copy.csv"
    copy.write_bytes(batch.read_bytes())
    same = cli("import-labels", copy, "--dataset", "1", "--values", coarse, "--study", "x")
    assert same.code == 0 and "as study 'coarse'; nothing changed" in same.stdout
    studies = cli("study", "list", "--format", "json").json()
    assert sorted(s["name"] for s in studies) == ["batch", "coarse"]
    answers = {}
    for name in ("batch", "coarse"):
        out = tmp_path / f"export-{name}"
        assert cli("export", name, "--format", "labels", "--to", out).code == 0
        answers[name] = pd.read_csv(next(out.glob("*.csv")), dtype=str)
    assert (answers["batch"]["value"] != answers["coarse"]["value"]).any()


def test_rejected_assignments_can_be_kept(cli, cb_store, tmp_path):
    batch = lf.mturk_batch(tmp_path / "batch.csv", cb_store)
    result = cli("import-labels", batch, "--dataset", "1", "--values", lf.BINS, "--keep-rejected")
    assert result.code == 0 and "11 assignments" in result.stdout


def _bad_mturk(tmp_path: Path, items) -> dict[str, tuple[Path, list[str], str]]:
    batch = lf.mturk_batch(tmp_path / "good.csv", items)
    lines = batch.read_text().splitlines()
    cases = {}

    def variant(name: str, new_lines: list[str], args: list[str], expect: str) -> None:
        path = tmp_path / f"{name}.csv"
        path.write_text("\n".join(new_lines) + "\n")
        cases[name] = (path, args, expect)

    bins = ["--values", lf.BINS]
    variant(
        "slider-out-of-bins",
        [lines[0], lines[1].replace(",", ",", 1), *lines[2:]],
        ["--values", "0-33=contradiction,34-50=neutral,67-100=entailment"],
        ":2: answer ",
    )
    unknown = lines[3].split(",")
    unknown[14] = "9999"  # Input.idx_0: an item the dataset does not have
    variant(
        "unknown-item",
        [*lines[:3], ",".join(unknown), *lines[4:]],
        bins,
        ":4: item '9999' is not in dataset 1",
    )
    variant("long-row", [*lines[:2], lines[2] + ",x,y,z", *lines[3:]], bins, ":3: row has")
    variant("no-values", lines, [], ":2: answer ")
    no_worker = lines[2].split(",")
    no_worker[7] = ""
    variant(
        "no-worker",
        [lines[0], lines[1], ",".join(no_worker), *lines[3:]],
        bins,
        ":3: missing WorkerId",
    )
    bad_time = lines[2].split(",")
    bad_time[9] = "yesterday"
    variant(
        "bad-time",
        [lines[0], lines[1], ",".join(bad_time), *lines[3:]],
        bins,
        ":3: AcceptTime 'yesterday'",
    )
    twice = [lines[0], lines[1], lines[1].replace("3ASSIGN0001", "3ASSIGN9999")]
    variant("twice", [*twice, *lines[2:]], bins, ":3: the worker of this line ")
    return cases


def test_malformed_files_name_file_and_line_and_leave_the_store_unchanged(
    cli, cb_store, tmp_path, db_url
):
    before = _row_counts(db_url)
    cases = _bad_mturk(tmp_path, cb_store)
    ls = json.loads(lf.labelstudio_json(tmp_path / "ls.json", cb_store[:3]).read_text())
    ls[1]["annotations"][0]["completed_by"] = None
    (tmp_path / "ls-bad.json").write_text(json.dumps(ls, indent=2))
    line = (
        next(
            n
            for n, text in enumerate((tmp_path / "ls-bad.json").read_text().splitlines(), 1)
            if '"id": 501' in text
        )
        - 1
    )
    cases["ls"] = (tmp_path / "ls-bad.json", [], f":{line}: an annotation has no completed_by")
    potato = lf.potato_jsonl(tmp_path / "annotated_instances.jsonl", cb_store[:3])
    text = potato.read_text().splitlines()
    text[4] = text[4][:-5]
    (tmp_path / "potato-bad.jsonl").write_text("\n".join(text) + "\n")
    cases["potato"] = (tmp_path / "potato-bad.jsonl", ["--format", "potato"], ":5: not valid JSON")
    q = lf.qualtrics_csv(tmp_path / "q.csv", cb_store[:3]).read_text().splitlines()
    q[5] = (
        q[5]
        .replace("Entailment", "Maybe", 1)
        .replace("Neutral", "Maybe", 1)
        .replace("Contradiction", "Maybe", 1)
    )
    (tmp_path / "q-bad.csv").write_text("\n".join(q) + "\n")
    cases["qualtrics"] = (
        tmp_path / "q-bad.csv",
        ["--map", r"item=item_(\d+)"],
        ":6: answer 'Maybe' is not a superglue/cb label",
    )
    long = lf.long_csv(tmp_path / "l.csv", cb_store[:3]).read_text().splitlines()
    long[3] = long[3].replace(long[3].split(",")[4], "not-a-date")
    (tmp_path / "l-bad.csv").write_text("\n".join(long) + "\n")
    cases["long"] = (
        tmp_path / "l-bad.csv",
        ["--map", "item=pair,annotator=coder,label=verdict,answered_at=when"],
        ":4: answered_at 'not-a-date' is not a date and time",
    )
    for name, (path, args, expect) in cases.items():
        result = cli("import-labels", path, "--dataset", "1", *args)
        assert result.code == 1, name
        assert f"{path}{expect}" in result.stderr, (name, result.stderr)
        assert "Traceback" not in result.stderr
        assert _row_counts(db_url) == before, name


def test_a_rating_task_keeps_numbers_and_is_agreed_on_at_interval_level(cli, tmp_path):
    rows = ["id,sentence1,sentence2,rater,score"]
    for i in range(8):
        for n, rater in enumerate(("r1", "r2", "r3")):
            rows.append(
                f"s{i},A dog runs number {i}.,A dog is running {i}.,{rater},{min(5.0, i * 0.6 + n * 0.2):.1f}"
            )
    path = tmp_path / "stsb.csv"
    path.write_text("\n".join(rows) + "\n")
    result = cli(
        "import-labels",
        path,
        "--task",
        "glue/stsb",
        "--study",
        "sts",
        "--map",
        "item=id,annotator=rater,label=score",
    )
    assert result.code == 0, result.stderr
    out = tmp_path / "out"
    assert cli("export", "sts", "--format", "labels", "--to", out).code == 0
    exported = pd.read_csv(out / "sts-labels.csv")
    assert exported["value"].dtype.kind == "f" and exported["value"].max() == pytest.approx(4.6)
    report = cli("report", "sts", "--format", "json", "--bootstrap", "0").json()
    assert report["agreement"]["krippendorff_alpha"]["level"] == "interval"
    path.write_text(path.read_text().replace(",0.2\n", ",7.5\n", 1))
    bad = cli(
        "import-labels",
        path,
        "--task",
        "glue/stsb",
        "--study",
        "sts2",
        "--map",
        "item=id,annotator=rater,label=score",
    )
    assert bad.code == 1 and ":3: rating '7.5' is outside 0..5" in bad.stderr


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ("0-50=entailment,40-100=neutral", "overlaps 0-50=entailment"),
        ("maybe=yes", "neither side is a superglue/cb label"),
        ("entailment=neutral", "both sides are superglue/cb labels"),
        ("100-0=entailment", "runs backwards"),
        ("entailment", "expected LABEL=ANSWER or LOW-HIGH=LABEL"),
    ],
)
def test_values_that_do_not_parse_are_one_line_errors(cli, cb_store, tmp_path, values, message):
    batch = lf.mturk_batch(tmp_path / "batch.csv", cb_store)
    result = cli("import-labels", batch, "--dataset", "1", "--values", values)
    assert result.code == 1 and message in result.stderr


def test_a_crowd_html_batch_with_task_answers_json(cli, cb_store, tmp_path):
    """Newer MTurk templates write every answer into one `Answer.taskAnswers` JSON cell; a
    radio group is an object with the chosen option true."""
    rows = [
        "HITId,AssignmentId,WorkerId,AssignmentStatus,WorkTimeInSeconds,Input.idx_0,Input.idx_1,Answer.taskAnswers,Approve,Reject"
    ]
    for n, worker in enumerate(("AX1", "AX2", "AX3")):
        answers = {
            f"label{s}": {c: c == (cb_store[s]["label"] if n else "neutral") for c in lf.CLASSES}
            for s in range(2)
        }
        cell = json.dumps([answers]).replace('"', '""')
        rows.append(f'H1,A{n},{worker},Submitted,90,0,1,"{cell}"')
    path = tmp_path / "batch.csv"
    path.write_text("\n".join(rows) + "\n")
    result = cli("import-labels", path, "--dataset", "1", "--study", "html")
    assert result.code == 0, result.stderr
    report = cli("report", "html", "--format", "json", "--bootstrap", "0").json()
    assert report["n_labels"] == 6 and report["scores"]["accuracy"]["value"] == 1.0
    # Each worker's own answers, as each wrote them (AX1 chose neutral throughout).
    out = tmp_path / "out"
    assert cli("export", "html", "--format", "labels", "--to", out).code == 0
    exported = pd.read_csv(out / "html-labels.csv", dtype=str)
    given = {
        (a, i): v
        for a, i, v in zip(
            exported["annotator"], exported["item_id"], exported["value"], strict=True
        )
    }
    assert given == {
        (f"w{n + 1:02d}", str(s)): (cb_store[s]["label"] if n else "neutral")
        for n in range(3)
        for s in range(2)
    }
    # No AcceptTime or SubmitTime: each answer still gets its share of WorkTimeInSeconds.
    assert exported["seconds"].astype(float).tolist() == [45.0] * 6


def test_a_potato_output_folder_with_one_file_per_user(cli, cb_store, tmp_path, db_url):
    """Potato writes annotation_output/USER/annotated_instances.jsonl: the folder imports as one
    study, each user named by their folder; a bad line names its own file."""
    combined = lf.potato_jsonl(tmp_path / "all.jsonl", cb_store[:4]).read_text().splitlines()
    output = tmp_path / "annotation_output"
    for user in ("maria", "joon", "tess"):
        mine = [json.loads(line) for line in combined if f'"user_id": "{user}"' in line]
        for obj in mine:
            del obj["user_id"]  # older Potato: the user is the folder
        (output / user).mkdir(parents=True)
        lf.write_jsonl(output / user / "annotated_instances.jsonl", mine)
    result = cli("import-labels", output, "--dataset", "1", "--study", "potato-folder")
    assert result.code == 0, result.stderr
    assert "Potato output, 3 annotators" in result.stdout
    assert (
        cli("import-labels", output, "--dataset", "1", "--study", "again").stdout.count(
            "already imported"
        )
        == 1
    )
    bad = output / "tess" / "annotated_instances.jsonl"
    bad.write_text(bad.read_text().replace('"inference"', '"other"', 1))
    (tmp_path / "ok").mkdir()
    before = _row_counts(db_url)
    result = cli(
        "import-labels", output, "--dataset", "1", "--study", "third", "--map", "label=inference"
    )
    assert result.code == 0  # the line without the chosen scheme is skipped, not an error
    result = cli("import-labels", tmp_path / "ok", "--dataset", "1")
    assert result.code == 1 and "no annotated_instances.jsonl in this folder" in result.stderr
    bad.write_text(bad.read_text() + "{not json\n")
    result = cli("import-labels", output, "--dataset", "1", "--study", "fourth")
    assert result.code == 1 and f"{bad}:5: not valid JSON" in result.stderr
    assert _row_counts(db_url)["study"] == before["study"] + 1


def test_a_file_with_its_items_makes_another_study_with_other_options(cli, tmp_path, db_url):
    """Its items are the dataset the first import made (one per task and file), not a second
    copy the store refuses; read from other columns, they would be other items: refused."""
    assert cli("init").code == 0
    path = tmp_path / "crowd.csv"
    path.write_text(
        "pair,premise,hypothesis,other,gold,worker,answer\n"
        "p1,The ferry left at dawn.,The ferry departed early.,Dusk.,entailment,W1,yes\n"
        "p1,The ferry left at dawn.,The ferry departed early.,Dusk.,entailment,W2,no\n"
        "p2,Rain closed the pass.,The pass was open.,Sun.,not_entailment,W1,no\n",
        encoding="utf-8",
    )
    options = (
        "--task", "superglue/rte", "--values", "entailment=yes,not_entailment=no",
        "--map", "item=pair,annotator=worker,label=answer,gold=gold",
    )  # fmt: skip
    assert cli("import-labels", path, *options, "--study", "one").code == 0
    again = cli("import-labels", path, *options, "--study", "two", "--tie-rule", "abstain")
    assert again.code == 0, again.stderr
    with sqlite3.connect(db_url.removeprefix("sqlite:///")) as con:
        studies = con.execute("SELECT name, test_dataset_id FROM study ORDER BY id").fetchall()
        assert [s[0] for s in studies] == ["one", "two"] and studies[0][1] == studies[1][1]
        assert con.execute("SELECT count(*) FROM item").fetchone()[0] == 2
    before = _row_counts(db_url)
    other = cli(
        "import-labels", path, "--task", "superglue/rte", "--study", "three",
        "--values", "entailment=yes,not_entailment=no",
        "--map", "item=pair,annotator=worker,label=answer,gold=gold,premise=other",
    )  # fmt: skip
    assert other.code == 1 and "imported before (dataset" in other.stderr, other.stderr
    assert _row_counts(db_url) == before
