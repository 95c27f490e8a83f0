"""Labels imported with how long each answer took but not when: their times are laid end to
end from 1970-01-01, so `status`, the console and the datasheet give no date for them (a last
label "20794 d ago" was the import's arithmetic, not the study's)."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from annotate.protocol.progress import studies_overview, study_progress
from annotate.protocol.studies import load_study


def _durations_csv(tmp_path: Path, *, dates: bool = False) -> Path:
    rows = ["pair,premise,hypothesis,worker,answer,secs" + (",when" if dates else "")]
    for n in range(3):
        for worker, answer in (("A1X", "yes"), ("A2Y", "yes"), ("A3Z", "no")):
            when = f",2026-11-0{n + 1}T10:00:00Z" if dates else ""
            rows.append(
                f"p{n},The ferry left at dawn {n}.,It left early.,{worker},{answer},{7 + n}{when}"
            )
    path = tmp_path / "crowd.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _import(cli, path: Path, *, dates: bool = False) -> None:
    mapping = "item=pair,annotator=worker,label=answer,seconds=secs" + (
        ",answered_at=when" if dates else ""
    )
    done = cli(
        "import-labels", path, "--task", "superglue/rte", "--study", "crowd",
        "--map", mapping, "--values", "entailment=yes,not_entailment=no",
    )  # fmt: skip
    assert done.code == 0, done.stderr


def _as_before_this_release(db_url: str) -> None:
    """The import record as an earlier release wrote it: `times` said "recorded" for a file
    of durations (only the datasheet's note told)."""
    with sqlite3.connect(db_url.removeprefix("sqlite:///")) as conn:
        conn.execute("UPDATE labelimport SET detail = json_set(detail, '$.times', 'recorded')")


@pytest.mark.parametrize("written_by", ["this release", "an earlier release"])
def test_imported_durations_give_no_made_up_dates(cli, db_url, tmp_path, written_by):
    _import(cli, _durations_csv(tmp_path))
    if written_by == "an earlier release":
        _as_before_this_release(db_url)

    shown = cli("status", "crowd")
    assert "Last activity: unknown (the labels' file gives durations, not dates)" in shown.stdout
    assert "1970" not in shown.stdout and " d ago" not in shown.stdout
    data = cli("status", "crowd", "--format", "json").json()
    assert data["last_activity"] is None and data["label_times"] == "durations only"
    assert {a["last_activity"] for a in data["annotators"]} == {None}

    sheet = cli("report", "crowd", "--format", "json").json()["datasheet"]
    assert sheet["first_label_at"] is None and sheet["last_label_at"] is None
    assert any("durations, not dates" in line for line in sheet["assumptions"])
    # The lengths are real all the same: the time on task is the file's seconds.
    medians = [a["median_seconds"] for a in sheet["time_on_task"]["annotators"]]
    assert medians == pytest.approx([8.0] * 3, abs=0.01)

    engine = create_engine(db_url)
    try:  # what the researcher's console shows: "last label –", not a date of 1970
        progress = study_progress(engine, load_study(engine, "crowd"))
        assert progress.last_activity is None
        assert {a.last_activity for a in progress.annotators} == {None}
        assert [s.last_activity for s in studies_overview(engine)] == [None]
    finally:
        engine.dispose()


def test_imported_dates_are_given(cli, db_url, tmp_path):
    """A file with clock times keeps them: the last label is the file's."""
    _import(cli, _durations_csv(tmp_path, dates=True), dates=True)
    data = cli("status", "crowd", "--format", "json").json()
    assert data["label_times"] == "recorded"
    assert data["last_activity"].startswith("2026-11-03T10:00:00")
    sheet = cli("report", "crowd", "--format", "json").json()["datasheet"]
    assert sheet["last_label_at"].startswith("2026-11-03T10:00:00")


@pytest.mark.parametrize("dates", [False, True])
def test_the_api_gives_no_made_up_first_and_last_answer(cli, db_url, tmp_path, dates):
    """`study.annotators()` gave 1970-01-01 as each worker's first and last answer where
    `status` gives none."""
    import annotate

    _import(cli, _durations_csv(tmp_path, dates=dates), dates=dates)
    with annotate.open_store(db_url) as store:
        annotators = store.study("crowd").annotators()
    assert len(annotators) == 3
    assert annotators["last_at"].dtype == "datetime64[us, UTC]"
    if dates:
        assert (annotators["last_at"].dt.year == 2026).all()
    else:
        assert annotators[["first_at", "last_at"]].isna().all().all()


@pytest.mark.parametrize("dates", [False, True])
def test_labels_give_no_made_up_shown_and_answered_times(cli, db_url, tmp_path, dates):
    """`export --format labels` and the API's `labels()` gave 1970-01-01 as each label's
    shown_at and answered_at where `status` gives no date: now empty, the seconds kept."""
    import csv

    import annotate

    _import(cli, _durations_csv(tmp_path, dates=dates), dates=dates)
    out = tmp_path / "out"
    assert cli("export", "crowd", "--format", "labels", "--to", out).code == 0
    with (out / "crowd-labels.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 9
    assert sorted({row["seconds"] for row in rows}) == ["7.000", "8.000", "9.000"]
    assert cli("export", "crowd", "--format", "labels", "--jsonl", "--to", out).code == 0
    lines = (out / "crowd-labels.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert sorted({r["seconds"] for r in records}) == [7.0, 8.0, 9.0]
    with annotate.open_store(db_url) as store:
        labels = store.study("crowd").labels()
    assert sorted(set(labels["seconds"])) == pytest.approx([7.0, 8.0, 9.0])
    if dates:
        assert {row["answered_at"][:4] for row in rows} == {"2026"}
        assert (labels["answered_at"].dt.year == 2026).all()
    else:
        assert {(row["shown_at"], row["answered_at"]) for row in rows} == {("", "")}
        assert {(r["shown_at"], r["answered_at"]) for r in records} == {(None, None)}
        assert labels[["shown_at", "answered_at"]].isna().all().all()
        assert labels["shown_at"].dtype == "datetime64[us, UTC]"


@pytest.mark.parametrize("source", ["long", "labelstudio"])
def test_a_clock_time_without_a_duration_is_no_time_on_task_not_zero(cli, db_url, tmp_path, source):
    """A long file's `answered_at` without `seconds`, or a Label Studio annotation without
    `lead_time`: when the answer came is known, how long it took is not. The report said each
    annotator took a median 0 s an answer and the export wrote 0.000: now unknown, empty."""
    if source == "long":
        path = tmp_path / "crowd.csv"
        path.write_text(
            "pair,premise,hypothesis,worker,answer,when\n"
            "p0,The ferry left at dawn.,It left early.,A1X,yes,2026-11-01T10:00:00Z\n"
            "p0,The ferry left at dawn.,It left early.,A2Y,no,2026-11-01T10:05:00Z\n",
            encoding="utf-8",
        )
        how = ["--map", "item=pair,annotator=worker,label=answer,answered_at=when"]
    else:
        path = tmp_path / "export.json"
        tasks = [
            {
                "id": 1,
                "data": {"idx": "p0", "premise": "The ferry left at dawn.", "hypothesis": "Early."},
                "annotations": [
                    {
                        "completed_by": user,
                        "result": [{"from_name": "a", "value": {"choices": [answer]}}],
                        "updated_at": f"2026-11-01T10:0{user}:00Z",
                        "lead_time": None,
                    }
                    for user, answer in ((1, "yes"), (2, "no"))
                ],
            }
        ]
        path.write_text(json.dumps(tasks), encoding="utf-8")
        how = []
    done = cli(
        "import-labels", path, "--task", "superglue/rte", "--study", "crowd", *how,
        "--values", "entailment=yes,not_entailment=no",
    )  # fmt: skip
    assert done.code == 0, done.stderr
    report = cli("report", "crowd", "--format", "json", "--bootstrap", "0").json()
    sheet = report["datasheet"]["time_on_task"]
    assert [a["median_seconds"] for a in sheet["annotators"]] == [None, None]
    assert [a["seconds_per_item"] for a in report["annotators"]] == [None, None]
    out = tmp_path / "out"
    assert cli("export", "crowd", "--format", "labels", "--to", out).code == 0
    text = (out / "crowd-labels.csv").read_text(encoding="utf-8")
    assert "2026-11-01" in cli("status", "crowd").stdout  # the dates stay known
    rows = list(csv.DictReader(io.StringIO(text)))  # the export: no seconds, the answer's date
    assert [(r["shown_at"], r["seconds"]) for r in rows] == [("", ""), ("", "")]
    minutes = ("00", "05") if source == "long" else ("01", "02")
    assert sorted(r["answered_at"][:16] for r in rows) == [f"2026-11-01T10:{m}" for m in minutes]
