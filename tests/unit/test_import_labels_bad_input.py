"""`annotate import-labels` on hostile input, over every format: JSON nested 100,000 deep, a
number of 5,000 digits, a lone surrogate in a worker id, seconds of 1e308 or NaN, a NUL in a
comment, an unknown or a repeated `--map` key. Each is one line on stderr naming the file and
the line (an option: the option), exit status 1, and the store as it was. The real CLI runs;
a traceback fails the test (the `cli` fixture re-raises anything but a UserError)."""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import label_fixtures as lf

DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "7" * 5000
ITEMS = lf.nli_items(4)


def _row_counts(db_url: str) -> dict[str, int]:
    con = sqlite3.connect(db_url.removeprefix("sqlite:///"))
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    finally:
        con.close()


# --- one small good file per format, and where each hostile value goes in it ---------------


def _long_csv(tmp: Path) -> tuple[Path, list[str]]:
    path = lf.long_csv(tmp / "long.csv", ITEMS)
    return path, ["--map", "item=pair,annotator=coder,label=verdict,seconds=secs,comment=note"]


def _long_jsonl(tmp: Path) -> tuple[Path, list[str]]:
    rows = [
        {"item": str(it["idx"]), "annotator": who, "label": it["label"], "seconds": 12,
         "comment": "fine"}
        for it in ITEMS
        for who in ("ana", "ben")
    ]  # fmt: skip
    return lf.write_jsonl(tmp / "long.jsonl", rows), []


def _potato(tmp: Path) -> tuple[Path, list[str]]:
    path = lf.potato_jsonl(tmp / "annotated_instances.jsonl", ITEMS)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        line["label_annotations"]["note"] = {"text": "fine"}
    lf.write_jsonl(path, lines)
    return path, ["--format", "potato", "--map", "label=inference,comment=note"]


def _labelstudio(tmp: Path) -> tuple[Path, list[str]]:
    return lf.labelstudio_json(tmp / "ls.json", ITEMS), []


def _qualtrics(tmp: Path) -> tuple[Path, list[str]]:
    return lf.qualtrics_csv(tmp / "q.csv", ITEMS), ["--map", r"item=item_(\d+)"]


def _mturk(tmp: Path) -> tuple[Path, list[str]]:
    path = lf.mturk_batch(tmp / "batch.csv", ITEMS)
    return path, ["--values", lf.BINS, "--map", "comment=comments"]


def _mturk_crowd(tmp: Path) -> tuple[Path, list[str]]:
    """A crowd-html batch: its answers in one Answer.taskAnswers JSON cell."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        ["HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "WorkTimeInSeconds",
         "Input.idx_0", "Input.idx_1", "Answer.taskAnswers"]
    )  # fmt: skip
    for n in range(3):
        answers = {f"label_{s}": {"label": ITEMS[s]["label"]} for s in range(2)}
        answers["note_0"] = "fine"
        writer.writerow(
            ["3HIT", f"3A{n}", f"AW{n}", "Approved", "60", "0", "1", json.dumps([answers])]
        )
    path = tmp / "crowd.csv"
    path.write_text(out.getvalue())
    return path, ["--map", "label=label,comment=note"]


FORMATS: dict[str, Callable[[Path], tuple[Path, list[str]]]] = {
    "long-csv": _long_csv,
    "long-jsonl": _long_jsonl,
    "potato": _potato,
    "labelstudio": _labelstudio,
    "qualtrics": _qualtrics,
    "mturk": _mturk,
    "mturk-crowd": _mturk_crowd,
}


def _first(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def _json_escape(text: str) -> str:
    """`text` as it appears inside a JSON string in a file that json.dumps wrote."""
    return json.dumps(text)[1:-1]


def _csv_cell(text: str, column: str, value: str, first: int = 1) -> str:
    """The first data row's `column` set to `value` (data from row `first`: Qualtrics has
    three header rows)."""
    rows = list(csv.reader(io.StringIO(text)))
    rows[first][rows[0].index(column)] = value
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


# (format -> how the case changes its text; a format without the thing is left out)
CASES: dict[str, dict[str, Callable[[str], str]]] = {
    "nested-100000-deep": {
        "long-jsonl": lambda t: _first(t, '"seconds": 12', f'"seconds": {DEEP}'),
        "potato": lambda t: _first(t, '"span_annotations": {}', f'"span_annotations": {DEEP}'),
        "labelstudio": lambda t: _first(t, '"was_cancelled": false', f'"was_cancelled": {DEEP}'),
        "qualtrics": lambda t: _first(t, '""QID1""', DEEP),
        "mturk-crowd": lambda t: _first(t, '""fine""', DEEP),
    },
    "a-5000-digit-number": {
        "long-csv": lambda t: _csv_cell(t, "secs", HUGE),
        "long-jsonl": lambda t: _first(t, '"seconds": 12', f'"seconds": {HUGE}'),
        "potato": lambda t: _first(t, '"id": "0"', f'"id": {HUGE}'),
        "labelstudio": lambda t: _first(t, '"lead_time": ', f'"lead_time": {HUGE}, "x": '),
        "qualtrics": lambda t: _csv_cell(t, "Duration (in seconds)", HUGE, 3),
        "mturk": lambda t: _csv_cell(t, "WorkTimeInSeconds", HUGE),
        "mturk-crowd": lambda t: _first(t, '""fine""', HUGE),
    },
    "a-lone-surrogate-in-a-worker-id": {
        "long-jsonl": lambda t: _first(t, '"annotator": "ana"', '"annotator": "an\\ud800a"'),
        "potato": lambda t: _first(t, '"user_id": "maria"', '"user_id": "mar\\udc00ia"'),
        "labelstudio": lambda t: _first(t, '"completed_by": 3', '"completed_by": "\\ud83d"'),
    },
    "seconds-1e308": {
        "long-csv": lambda t: _csv_cell(t, "secs", "1e308"),
        "long-jsonl": lambda t: _first(t, '"seconds": 12', '"seconds": 1e308'),
        "potato": lambda t: _first(t, "0d 0h 0m", "99999d 0h 0m"),
        "labelstudio": lambda t: _first(t, '"lead_time": ', '"lead_time": 1e308, "x": '),
        "qualtrics": lambda t: _csv_cell(t, "Duration (in seconds)", "1e308", 3),
        "mturk": lambda t: _csv_cell(t, "WorkTimeInSeconds", "1e308"),
        "mturk-crowd": lambda t: _csv_cell(t, "WorkTimeInSeconds", "1e308"),
    },
    "seconds-nan": {
        "long-csv": lambda t: _csv_cell(t, "secs", "nan"),
        "long-jsonl": lambda t: _first(t, '"seconds": 12', '"seconds": NaN'),
        "labelstudio": lambda t: _first(t, '"lead_time": ', '"lead_time": NaN, "x": '),
        "qualtrics": lambda t: _csv_cell(t, "Duration (in seconds)", "nan", 3),
        "mturk": lambda t: _csv_cell(t, "WorkTimeInSeconds", "nan"),
        "mturk-crowd": lambda t: _csv_cell(t, "WorkTimeInSeconds", "NaN"),
    },
    "a-nul-in-a-comment": {
        "long-csv": lambda t: _csv_cell(t, "note", "bad\x00note"),
        "long-jsonl": lambda t: _first(t, '"comment": "fine"', '"comment": "fi\\u0000ne"'),
        "potato": lambda t: _first(t, '"text": "fine"', '"text": "fi\\u0000ne"'),
        "mturk": lambda t: _csv_cell(t, "Answer.comments", "took\x00care"),
        "mturk-crowd": lambda t: _first(t, '""fine""', '""fi\\u0000ne""'),
    },
}

EXPECTED = {
    "nested-100000-deep": "nested too deeply",
    "a-5000-digit-number": "",  # said in the words of the place it is in (JSON or seconds)
    "a-lone-surrogate-in-a-worker-id": "worker id has a lone surrogate",
    "seconds-1e308": "",
    "seconds-nan": "",
    "a-nul-in-a-comment": "comment has a NUL character",
}

PAIRS = [(case, fmt) for case, formats in CASES.items() for fmt in formats]


@pytest.mark.parametrize(("case", "fmt"), PAIRS, ids=[f"{c}-{f}" for c, f in PAIRS])
def test_bad_input_is_one_line_naming_file_and_line_and_the_store_is_unchanged(
    cli, tmp_path, db_url, case, fmt
):
    data = lf.write_jsonl(tmp_path / "val.jsonl", ITEMS)
    assert cli("import", "superglue/cb", data).code == 0
    path, args = FORMATS[fmt](tmp_path)
    good = cli("import-labels", path, "--dataset", "1", *args, "--study", "good")
    assert good.code == 0, (fmt, good.stderr)  # the file is good before the change
    before = _row_counts(db_url)
    bad = path.with_name(f"bad-{path.name}")
    if fmt == "potato":
        bad = path.parent / "bad" / path.name
        bad.parent.mkdir()
    bad.write_text(CASES[case][fmt](path.read_text()), encoding="utf-8", errors="surrogatepass")
    result = cli("import-labels", bad, "--dataset", "1", *args, "--study", "bad")
    assert result.code == 1, (case, fmt, result.stdout)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert re.match(rf"error: {re.escape(str(bad))}:\d+: ", lines[0]), lines[0][:300]
    assert EXPECTED[case] in lines[0]
    assert len(lines[0]) < 400
    assert _row_counts(db_url) == before


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--map", "evil=note"], "--map evil=note: 'evil' is neither a --map key"),
        (["--map", "label=a", "--map", "label=b"], "--map label is given twice"),
        (["--map", "label=a,label=b"], "--map label is given twice"),
    ],
    ids=["unknown-key", "repeated-key", "repeated-in-one"],
)
def test_a_map_key_that_cannot_be_used_is_refused_in_every_format(
    cli, tmp_path, db_url, fmt, option, message
):
    data = lf.write_jsonl(tmp_path / "val.jsonl", ITEMS)
    assert cli("import", "superglue/cb", data).code == 0
    path, _ = FORMATS[fmt](tmp_path)
    before = _row_counts(db_url)
    result = cli("import-labels", path, "--dataset", "1", *option)
    assert result.code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert _row_counts(db_url) == before


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("survey.csv", "respondent,q1,q2\nr1,yes,no\n"),
        ("notes.jsonl", '{"note": "a"}\n'),
        ("notes.txt", "a few words\n"),
    ],
)
def test_a_file_of_no_known_format_says_so_and_names_the_formats_tried(
    cli, tmp_path, db_url, name, text
):
    path = tmp_path / name
    path.write_text(text)
    result = cli("import-labels", path, "--task", "superglue/cb")
    assert result.code == 1
    assert result.stderr == (
        f"error: {path}: no known label format matched the file (tried long, mturk, qualtrics, "
        "potato, labelstudio); pass --format NAME, or give a long file item, annotator and "
        "label columns (--map item=COLUMN …)\n"
    )


@pytest.mark.parametrize(
    ("text", "args", "message"),
    [
        ("item,worker,verdict\n1,ana,yes\n", [], ":1: no label column (expected one of label"),
        ("respondent,q1\nr1,yes\n", ["--map", "item=q1"], ":1: no annotator column"),
        ("respondent,q1\nr1,yes\n", ["--format", "long"], ":1: no item column"),
    ],
    ids=["a-long-header", "a-long-map", "format-long"],
)
def test_a_file_meant_as_a_long_file_keeps_the_long_formats_error(
    cli, tmp_path, db_url, text, args, message
):
    path = tmp_path / "labels.csv"
    path.write_text(text)
    result = cli("import-labels", path, "--task", "superglue/cb", *args)
    assert result.code == 1
    assert result.stderr.startswith(f"error: {path}{message}"), result.stderr


def test_a_label_studio_json_min_export_is_named_not_called_empty(cli, tmp_path, db_url):
    """Label Studio's JSON-MIN export (one flat object per annotation, no `annotations` list)
    is full of answers: the refusal says which export is read, not "no annotations"."""
    path = tmp_path / "project-1-min.json"
    rows = [
        {"id": 7, "idx": 0, "premise": "A.", "hypothesis": "B.", "inference": "neutral",
         "annotator": 3, "annotation_id": 11, "lead_time": 4.5},
        {"id": 7, "idx": 0, "premise": "A.", "hypothesis": "B.", "inference": "entailment",
         "annotator": 4, "annotation_id": 12, "lead_time": 6.0},
    ]  # fmt: skip
    path.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    result = cli("import-labels", path, "--task", "superglue/cb")
    assert result.code == 1
    assert "no annotations in the file" not in result.stderr
    assert f"error: {path}: no task has an annotations list" in result.stderr
    assert "JSON-MIN" in result.stderr and result.stderr.count("\n") == 1
