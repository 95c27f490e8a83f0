"""`annotate export`: take results out of the store as leaderboard submission files,
long-format labels or per-item label distributions.

Scoring and the report (pandas, scipy, statsmodels) are imported inside the commands:
`annotate --help` stays fast."""

from __future__ import annotations

import contextlib
import hashlib
import re
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from annotate.cli.context import app, options
from annotate.cli.output import print_json, say, warn
from annotate.errors import UserError
from annotate.export import MANIFEST_SUFFIX
from annotate.output_paths import output_folder
from annotate.wording import count_of, plural

if TYPE_CHECKING:  # heavy modules: imported by the commands that use them
    from sqlalchemy import Engine


class ExportFormat(StrEnum):
    glue = "glue"
    superglue = "superglue"
    labels = "labels"
    soft = "soft"
    parquet = "parquet"
    answers = "answers"
    hf = "hf"


class Benchmark(StrEnum):
    glue = "glue"
    superglue = "superglue"


class SummaryFormat(StrEnum):
    text = "text"
    json = "json"


class LabelPhase(StrEnum):
    test = "test"
    training = "training"
    all = "all"


# --- export ----------------------------------------------------------------------------------


@app.command()
def export(
    ctx: typer.Context,
    study: str | None = typer.Argument(None, help="Name of the study (or use --benchmark)"),
    to: Path = typer.Option(..., "--to", help="Folder to write into (created if missing)"),
    fmt: ExportFormat | None = typer.Option(
        None,
        "--format",
        help="glue or superglue (leaderboard files), labels, soft, answers (one row per item: "
        "majority, ties, Dawid–Skene and MACE with posteriors), parquet (the labels table as "
        "Parquet) or hf (a Hugging Face dataset folder with its card); parquet and hf need the "
        "`parquet` extra",
    ),
    benchmark: Benchmark | None = typer.Option(
        None,
        "--benchmark",
        help="Export one study per task of this benchmark (as `report --benchmark` chooses)",
    ),
    studies: list[str] = typer.Option(
        [], "--study", help="With --benchmark: the study of a task that has several (repeatable)"
    ),
    fill_from: Path | None = typer.Option(
        None,
        "--fill-from",
        help="A model's submission file (or a folder of them) that completes the file with "
        "the test items people did not label",
    ),
    make_zip: bool = typer.Option(False, "--zip", help="Also write the files as one zip"),
    jsonl: bool = typer.Option(
        False, "--jsonl", help="labels, soft, answers: JSON lines instead of CSV"
    ),
    phase: LabelPhase = typer.Option(
        LabelPhase.test, "--phase", help="labels/parquet: test (default), training or all"
    ),
    with_text: bool = typer.Option(
        False, "--with-text", help="labels/parquet: add each item's fields (its text) and gold"
    ),
    summary: SummaryFormat = typer.Option(
        SummaryFormat.text,
        "--summary",
        help="text, or json: print the files written (path, bytes, sha256) as JSON on stdout "
        "(--format names the files' format); the notes go to stderr",
    ),
) -> None:
    """Write a study's results: the official submission file of its task (glue/superglue),
    every label in long format (labels, or parquet), or each item's label distribution (soft).
    Table files carry the study's name (STUDY-labels.csv, STUDY-soft.csv), so several studies
    can share a folder."""
    if (study is None) == (benchmark is None):
        raise UserError("name one study, or pass --benchmark glue|superglue")
    if studies and benchmark is None:
        raise UserError("--study chooses a task's study for --benchmark")
    if benchmark is not None:
        if fmt is not None and fmt.value != benchmark.value:
            raise UserError(f"--benchmark {benchmark.value} writes --format {benchmark.value}")
        fmt = ExportFormat(benchmark.value)
    if fmt is None:
        raise UserError("pass --format glue, superglue, labels, soft, answers, parquet or hf")
    submission = fmt in (ExportFormat.glue, ExportFormat.superglue)
    if fill_from is not None and not submission:
        raise UserError("--fill-from completes a leaderboard file: use it with glue/superglue")
    if jsonl and (submission or fmt in (ExportFormat.parquet, ExportFormat.hf)):
        raise UserError("--jsonl applies to labels and soft; the other formats have one form")
    if with_text and fmt not in (ExportFormat.labels, ExportFormat.parquet):
        raise UserError("--with-text adds item text to the labels table: --format labels|parquet")
    if phase is not LabelPhase.test and fmt not in (ExportFormat.labels, ExportFormat.parquet):
        raise UserError(
            f"--phase {phase.value} chooses the labels table's rows: --format labels|parquet "
            "(the other formats hold test answers)"
        )
    engine = options(ctx).workspace().engine
    as_json = summary is SummaryFormat.json
    written: list[Path] = []
    # With --summary json, stdout carries only the JSON: every note goes to stderr.
    with contextlib.redirect_stdout(sys.stderr) if as_json else contextlib.nullcontext():
        if fmt is ExportFormat.hf:
            assert study is not None
            if make_zip:
                raise UserError("--zip writes one file; --format hf writes a dataset folder")
            from annotate.export.hf_dataset import write_hf_dataset

            written += write_hf_dataset(engine, study, to)
            files = {}
            for path in written:
                say(f"wrote {path}")
        elif fmt is ExportFormat.labels and not make_zip:  # streamed: constant memory
            assert study is not None
            output_folder(to, "--to")
            written.append(_stream_labels(engine, study, jsonl, phase, with_text, to))
            files = {}
        elif submission:
            files, zipped = _submission_files(
                engine, study, fmt.value, benchmark is not None, fill_from, studies, to, make_zip
            )
        else:
            files = _table_file(engine, study, fmt, jsonl, phase, with_text)
        output_folder(to, "--to")
        for name, content in files.items():
            (to / name).write_bytes(content)
            written.append(to / name)
            say(f"wrote {to / name}")
        if make_zip:
            from annotate.formats.writers import zip_bytes

            members = (
                zipped
                if submission
                else {n: c for n, c in files.items() if not n.endswith(MANIFEST_SUFFIX)}
            )
            target = to / (
                f"{fmt.value}.zip"
                if submission or study is None
                else table_file_name(study, fmt.value, "zip")
            )
            target.write_bytes(zip_bytes(members))
            written.append(target)
            say(f"wrote {target} ({', '.join(sorted(members))})")
    if as_json:
        print_json(
            {
                "format": fmt.value,
                "files": [
                    {
                        "path": str(path),
                        "bytes": path.stat().st_size,
                        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                    }
                    for path in written
                ],
            }
        )


def _submission_files(
    engine: Engine,
    study: str | None,
    benchmark: str,
    every_task: bool,
    fill_from: Path | None,
    chosen: list[str],
    to: Path,
    make_zip: bool,
) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The files to write (submissions and the folder's manifest) and the zip's members: every
    submission file the manifest lists, those of earlier exports into `to` included."""
    from annotate.export.submission import benchmark_studies, folder_manifest, manifest_name
    from annotate.formats.writers import json_bytes
    from annotate.report.data.loading import find_study

    passed_over = None
    if every_task:
        picked = benchmark_studies(engine, benchmark, chosen)
        pairs = [(spec.name, name) for spec, name in picked.chosen]
        if not pairs:
            raise UserError(f"no study of any {benchmark} task in this store")
        passed_over = picked.passed_over
        missing = picked.missing_tasks
        if missing:
            warn(f"no study of {len(missing)} {benchmark} tasks, no file for: {', '.join(missing)}")
    else:
        assert study is not None
        pairs = [(find_study(engine, study).task, study)]
    if every_task and fill_from is not None and fill_from.is_dir():
        from annotate import specs
        from annotate.scoring.model_sources import refuse_folder_without_submissions

        tasks = [specs.load_task(task) for task, _ in pairs]
        refuse_folder_without_submissions(fill_from, "--fill-from", benchmark, tasks)
    files: dict[str, bytes] = {}
    entries = []
    for task, name in pairs:
        content, entry = _one_submission(engine, name, task, benchmark, fill_from, every_task)
        files[entry["file"]] = content
        entries.append(entry)
    folder = folder_manifest(to, benchmark, entries, passed_over)
    for reason in folder.dropped:
        warn(reason)
    if folder.kept:
        say(
            f"{manifest_name(benchmark)} also lists {', '.join(sorted(folder.kept))} "
            "(earlier exports into this folder)"
        )
    zipped = {**files, **folder.kept}
    others = folder.not_of_test_items
    if make_zip and others:
        warn(
            f"{benchmark}.zip holds files of items that are not test items ("
            + ", ".join(f"{name}: {split}" for name, split in others)
            + "): a leaderboard scores test items only"
        )
    files[manifest_name(benchmark)] = json_bytes(folder.manifest)
    return files, zipped


def _one_submission(
    engine: Engine, study: str, task: str, benchmark: str, fill_from: Path | None, lenient: bool
) -> tuple[bytes, dict[str, Any]]:
    from annotate.export.submission import study_submission
    from annotate.formats.writers import submission_bytes
    from annotate.protocol.studies import load_study
    from annotate.scoring.predictions import read_predictions

    spec = load_study(engine, study).spec  # the spec stored with the study
    # GLUE tasks write TSV, SuperGLUE tasks JSON lines; a custom task goes by its file's style.
    expected = "glue" if spec.leaderboard().style == "glue-tsv" else "superglue"
    if expected != benchmark:
        raise UserError(
            f"study {study!r} is a {spec.benchmark} task ({spec.name}): "
            f"export it with --format {expected}"
        )
    model = None
    model_file = _fill_file(fill_from, spec.leaderboard().file, lenient)
    if model_file is not None:
        model = read_predictions(model_file, spec)
    result = study_submission(engine, study, model)
    content = submission_bytes(spec, result.predictions, result.order, result.paragraph_of)
    entry = result.manifest()
    entry["sha256"] = hashlib.sha256(content).hexdigest()
    say(
        f"{result.file}: {count_of(entry['rows'], 'row')} ({entry['human_rows']} human, "
        f"{entry['model_rows']} model) from study {study!r}"
    )
    if result.undecided and spec.kind == "multi_answer":
        # A MultiRC question is undecided when one of its answers is: its others are written.
        n = len(result.undecided)
        warn(
            f"{result.file}: {count_of(n, 'question')} {plural(n, 'has')} a candidate answer "
            "whose tie the rule left open, with no human judgement (listed in the manifest)"
        )
    elif result.undecided:
        warn(
            f"{result.file}: {count_of(len(result.undecided), 'item')} whose tie the rule left "
            f"open {plural(len(result.undecided), 'has')} no human answer (listed in the manifest)"
        )
    if result.incomplete:
        n = len(result.incomplete)
        warn(
            f"{result.file}: {count_of(n, 'question')} {plural(n, 'is')} written without a "
            "judgement for every candidate answer (incomplete_ids in the manifest); a "
            "leaderboard wants one for each"
            + (
                ""
                if model is not None
                else ": complete them with --fill-from a model's predictions"
            )
        )
    if result.unlabelled:
        n = len(result.unlabelled)
        warn(f"{result.file}: {count_of(n, 'sampled item')} {plural(n, 'has')} no labels yet")
    if not result.of_test_split:
        warn(
            f"{result.file}: the items of study {study!r} are from the {result.test_split} split, "
            "not test: a leaderboard scores test items only (score this file with `annotate "
            "score`)"
        )
    elif result.rows_short and model is None:
        # With --benchmark, a --fill-from folder without this task's file fills nothing.
        remedy = (
            "complete the file with --fill-from a model's predictions"
            if fill_from is None
            else f"{fill_from} has no {result.file} to complete it from"
        )
        warn(
            f"{result.file}: {result.n_rows} of the {count_of(result.n_test_items, 'test item')} "
            f"{plural(result.n_rows, 'has')} a row; a leaderboard wants every test item: {remedy}"
        )
    elif result.rows_short:
        warn(
            f"{result.file}: {result.rows_short} of {count_of(result.n_test_items, 'test item')} "
            f"{plural(result.rows_short, 'has')} no "
            "row; the leaderboard wants every test item"
        )
    return content, entry


def _fill_file(fill_from: Path | None, file_name: str, lenient: bool) -> Path | None:
    """The model file for one task: `fill_from` itself, or the file of that name in it when it
    is a folder (with --benchmark a task without one is written from the humans alone)."""
    if fill_from is None:
        return None
    if fill_from.is_dir():
        candidate = fill_from / file_name
        if candidate.is_file():
            return candidate
        if lenient:
            return None
        raise UserError(f"{fill_from}: no {file_name} in this folder")
    if not fill_from.is_file():
        raise UserError(f"{fill_from}: no such file or folder")
    if lenient:
        raise UserError("with --benchmark, --fill-from takes a folder of submission files")
    return fill_from


FILE_NAME_STUDY_BYTES = 150
"""A study's name in a file name keeps at most this many bytes (UTF-8): file systems refuse
names over 255, and the writer's temporary name adds a prefix and a suffix to it."""


def table_file_name(study: str, kind: str, suffix: str) -> str:
    """`STUDY-labels.csv`: the study's name made safe as a file name (path separators and
    characters file systems refuse become `_`; a longer name is cut). A name changed so gets
    a digest of the whole: `a<b` and `a>b` would both be `a_b`, and one study's file would
    replace the other's in a shared folder."""
    safe = re.sub(r'[\\/:*?"<>|\x00-\x1f]', "_", study).strip(" .") or "study"
    if len(safe.encode("utf-8")) > FILE_NAME_STUDY_BYTES:
        safe = safe.encode("utf-8")[:FILE_NAME_STUDY_BYTES].decode("utf-8", "ignore").rstrip(" .")
    if safe != study:
        safe = f"{safe}~{hashlib.sha256(study.encode('utf-8')).hexdigest()[:8]}"
    return f"{safe}-{kind}.{suffix}"


def _stream_labels(
    engine: Engine, study: str, jsonl: bool, phase: LabelPhase, with_text: bool, to: Path
) -> Path:
    """Write the label table row by row as the store yields it (constant memory), into a
    temporary file renamed into place: a failed export leaves no half-written file."""
    from annotate.cli.progress import progress_bars
    from annotate.export.label_table import PHASES, label_cells, label_rows
    from annotate.formats.writers import write_csv_cells, write_jsonl

    phases = PHASES if phase is LabelPhase.all else (phase.value,)
    target = to / table_file_name(study, "labels", "jsonl" if jsonl else "csv")
    partial = target.with_name(f".{target.name}.partial")
    try:
        # progress on stderr, and only on a terminal
        with progress_bars() as progress, partial.open("w", encoding="utf-8", newline="") as out:
            if jsonl:
                columns, rows = label_rows(
                    engine, study, phases, with_text=with_text, progress=progress
                )
                write_jsonl(out, columns, rows)
            else:
                columns, cells = label_cells(
                    engine, study, phases, with_text=with_text, progress=progress
                )
                write_csv_cells(out, columns, cells)
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    say(f"wrote {target}")
    return target


def _table_file(
    engine: Engine,
    study: str | None,
    fmt: ExportFormat,
    jsonl: bool,
    phase: LabelPhase,
    with_text: bool = False,
) -> dict[str, bytes]:
    from annotate.formats.writers import csv_bytes, jsonl_bytes, parquet_bytes

    assert study is not None
    if fmt in (ExportFormat.labels, ExportFormat.parquet):
        from annotate.export.label_table import PHASES, label_table

        phases = PHASES if phase is LabelPhase.all else (phase.value,)
        from annotate.cli.progress import progress_bars

        with progress_bars() as progress:  # on stderr, and only on a terminal
            table = label_table(engine, study, phases, with_text=with_text, progress=progress)
        columns, rows = table.columns, table.rows
    elif fmt is ExportFormat.answers:
        from annotate.export.item_answers import unit_answers
        from annotate.export.submission import source_positions
        from annotate.report.data.loading import load_study_data

        data = load_study_data(engine, study)  # as the report: excluded items out
        table = unit_answers(data, positions=source_positions(engine, study, data.spec))
        columns, rows = table.columns, table.rows
    else:
        columns, rows = _soft_table(engine, study)
    if fmt is ExportFormat.parquet:
        from annotate.export.label_table import LABEL_COLUMN_TYPES

        content = parquet_bytes(columns, rows, LABEL_COLUMN_TYPES)
        return {table_file_name(study, "labels", "parquet"): content}
    write = jsonl_bytes if jsonl else csv_bytes
    kind = fmt.value if fmt in (ExportFormat.labels, ExportFormat.answers) else "soft"
    return {table_file_name(study, kind, "jsonl" if jsonl else "csv"): write(columns, rows)}


def _soft_table(engine: Engine, study: str) -> tuple[list[str], list[dict[str, Any]]]:
    from annotate.export.human_answers import soft_rows
    from annotate.export.submission import source_positions
    from annotate.report.data.loading import excluded_items_of, load_study_data

    data = load_study_data(engine, study, exclusions=False)  # exports keep every item
    excluded = {e["source_id"] for e in excluded_items_of(engine, data.study_id).values()}
    table = soft_rows(data, source_positions(engine, study, data.spec), excluded)
    return table.columns, table.rows
