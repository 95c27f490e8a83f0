"""Commands that score: `annotate score` (the standard scorer, run locally on submission
files against gold) and `annotate compare` (a model beside a study's humans on the same items).

Scoring (pandas, scipy, statsmodels) is imported inside the commands: `annotate --help` stays
fast."""

from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from annotate.cli.context import Format, app, options
from annotate.cli.output import print_json, print_table, say, warn
from annotate.errors import DataFileError, UserError
from annotate.export import MANIFEST_SUFFIX
from annotate.wording import count_of, fixed, p_value

if TYPE_CHECKING:  # heavy modules: imported by the commands that use them
    from annotate.formats.gold import SubmissionName
    from annotate.scoring.local_score import TaskResult

ITEMS_SHOWN = 20
"""Item ids listed per group in the `compare` table (all of them with --format json)."""


# --- score -----------------------------------------------------------------------------------


@app.command()
def score(
    pred: Path = typer.Argument(
        ..., help="A submission file (RTE.jsonl, STS-B.tsv …), a folder or a zip of them"
    ),
    gold: Path = typer.Option(
        ...,
        "--gold",
        help="A labelled data file (a Hub Parquet or Arrow file too), or a folder in the "
        "download layout",
    ),
    task: str | None = typer.Option(
        None, "--task", help="The task of PRED when its name does not say (one file only)"
    ),
    fmt: Format = typer.Option(Format.table, "--format", help="table or json"),
    bootstrap: int = typer.Option(
        0, "--bootstrap", min=0, help="Bootstrap replicates for intervals (default 0: none)"
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap"),
) -> None:
    """Score submission files against gold, by id, with the official metrics; the GLUE or
    SuperGLUE score over the tasks present; per-phenomenon scores for the diagnostics."""
    from annotate.scoring.local_score import benchmark_scores

    with tempfile.TemporaryDirectory(prefix="annotate-score-") as scratch:
        files, skipped = _prediction_files(pred, task, Path(scratch))
        results = [
            _score_one(path, shown, name, gold, bootstrap, seed) for path, shown, name in files
        ]
    data = {
        "tasks": [r.to_json() for r in results],
        "benchmarks": benchmark_scores(results),
        "skipped": skipped,
    }
    if fmt is Format.json:
        print_json(data)
        return
    _render_scores(data, bootstrap)


def _prediction_files(
    pred: Path, task: str | None, scratch: Path
) -> tuple[list[tuple[Path, str, SubmissionName]], list[str]]:
    """(file, name to show, SubmissionName) for each prediction file, and the files skipped."""
    from annotate import specs
    from annotate.formats.gold import SubmissionName, submission_task

    if pred.is_file() and pred.suffix.lower() != ".zip":
        from annotate.scoring.harness import is_sample_log

        if is_sample_log(pred):  # not a file `--task` would make readable
            raise UserError(
                f"{pred}: an lm-evaluation-harness sample log, not a submission file; "
                "`annotate compare STUDY --model` and `annotate report STUDY --model` read it, "
                "on a study of validation items"
            )
        if task is not None:
            name = SubmissionName(specs.load_task(task), None)
        else:
            found = submission_task(pred)
            if found is None:
                raise UserError(
                    f"{pred}: cannot tell the task from the file name (expected an official "
                    "name such as RTE.jsonl or STS-B.tsv); pass --task"
                )
            name = found
        return [(pred, str(pred), name)], []
    if task is not None:
        raise UserError("--task applies to a single prediction file, not a folder or zip")
    if pred.is_file():
        folder, shown = _unzip(pred, scratch), f"{pred}!"
    elif pred.is_dir():
        folder, shown = pred, f"{pred}/"
    else:
        raise UserError(f"{pred}: no such file or folder")
    files, skipped = [], []
    by_task: dict[str, str] = {}
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        name = submission_task(path)
        if name is None:
            if not path.name.endswith(MANIFEST_SUFFIX):
                skipped.append(path.name)
            continue
        # The benchmark's score takes one file per task: a second would replace the first.
        if (other := by_task.setdefault(name.spec.name, path.name)) != path.name:
            raise UserError(
                f"{pred}: {other} and {path.name} are both {name.spec.name}: score one "
                "submission of each task at a time"
            )
        files.append((path, shown + path.name, name))
    if not files:
        raise UserError(f"{pred}: no submission files (RTE.jsonl, STS-B.tsv …) in it")
    return files, skipped


def _unzip(archive: Path, scratch: Path) -> Path:
    try:
        with zipfile.ZipFile(archive) as z:
            seen: dict[str, str] = {}
            for info in z.infolist():
                name = Path(info.filename).name  # flat: no member escapes the scratch folder
                if info.is_dir() or not name:
                    continue
                if (other := seen.setdefault(name, info.filename)) != info.filename:
                    raise DataFileError(
                        archive, None, f"{other} and {info.filename} would be one file {name}"
                    )
                (scratch / name).write_bytes(z.read(info))
    except zipfile.BadZipFile:
        raise DataFileError(archive, None, "not a valid zip file") from None
    return scratch


def _score_one(
    path: Path, shown: str, name: SubmissionName, gold: Path, bootstrap: int, seed: int
) -> TaskResult:
    from annotate.formats.gold import gold_for
    from annotate.scoring.local_score import score_predictions
    from annotate.scoring.predictions import read_predictions

    try:
        model = read_predictions(path, name.spec)
    except DataFileError as exc:
        raise DataFileError(shown, exc.line, exc.reason) from None
    model.path = shown
    result = score_predictions(gold_for(gold, name), model, bootstrap=bootstrap, seed=seed)
    return result


def _render_scores(data: dict[str, Any], bootstrap: int) -> None:
    from annotate.report.cells import METRIC_NAMES, interval, pct

    rows = []
    for r in data["tasks"]:
        cov = r["coverage"]
        metrics = []
        for m in r["metrics"]:
            s = r["scores"][m]
            ci = interval(s["ci_low"], s["ci_high"])
            metrics.append(f"{METRIC_NAMES.get(m, m)} {pct(s['value'])}" + (f" {ci}" if ci else ""))
        rows.append(
            {
                "task": r["task"],
                "file": Path(r["file"]).name,
                "metrics": ", ".join(metrics),
                "score": pct(r["task_score"]["value"]),
                "coverage": f"{cov['scored']}/{cov['gold']} {cov['unit']}s"
                + (
                    f", {count_of(cov['answers_missing'], 'answer')} missing (counted wrong)"
                    if cov.get("answers_missing")
                    else ""
                )
                + (f", {cov['not_in_gold']} ids not in gold" if cov["not_in_gold"] else "")
                + ("" if cov.get("complete", True) else " (incomplete)"),
            }
        )
    print_table(
        rows,
        [
            ("task", "Task"),
            ("file", "File"),
            ("metrics", "Metrics"),
            ("score", "Score"),
            ("coverage", "Coverage"),
        ],
        title="Scores (x100)",
    )
    for r in data["tasks"]:
        say(f"{r['file']} scored against {r['gold']}")
        for note in r.get("notes", []):
            warn(f"note: {r['task']}: {note}")
    for r in data["tasks"]:
        wrong = r.get("missing_counted_wrong")
        if wrong:
            say(
                f"{r['task']}: the file is incomplete; counting what it leaves out as wrong "
                f"({wrong['rule']}), as a leaderboard would score that complete file, the "
                f"score is {pct(wrong['task_score']['value'])}"
                + (f"; {wrong['note']}" if wrong.get("note") else "")
            )
    for b in data["benchmarks"]:
        value = pct(b["score"])
        say(f"{b['benchmark']} score: {value}" + (f" ({b['note']})" if b["partial"] else ""))
        if b.get("score_missing_counted_wrong") is not None:
            say(
                f"{b['benchmark']} score with missing ids counted wrong: "
                f"{pct(b['score_missing_counted_wrong'])}"
            )
    for r in data["tasks"]:
        if r["diagnostics"]:
            _render_diagnostics(r["task"], r["diagnostics"], with_ci=bootstrap > 0)
    if not bootstrap:
        say("No intervals: add --bootstrap 1000 for 95% confidence intervals.")
    if data["skipped"]:
        warn(f"skipped (not a submission file name): {', '.join(data['skipped'])}")


def _render_diagnostics(task: str, diag: dict[str, Any], with_ci: bool) -> None:
    """The report's table of phenomena, in its words (one place: report.sections.diagnostics);
    the interval column only when there are intervals (--bootstrap)."""
    from annotate.report.cells import METRIC_NAMES
    from annotate.report.model.schema import Diagnostics
    from annotate.report.sections.diagnostics import phenomenon_cells, phenomenon_rows

    d = Diagnostics.of(diag)
    metric = METRIC_NAMES.get(d.metric, d.metric)
    rows = []
    for category, tag, e in phenomenon_rows(d):
        if e.n or category:  # tags of gold items without a prediction: nothing to show
            value, ci = phenomenon_cells(e)
            rows.append({"category": category, "tag": tag, "n": str(e.n), "value": value, "ci": ci})
    columns = [("category", "Category"), ("tag", "Phenomenon"), ("n", "n"), ("value", metric)]
    print_table(
        rows,
        columns + ([("ci", "95% CI")] if with_ci else []),
        title=f"{task}: {metric} per phenomenon",
    )


# --- compare ---------------------------------------------------------------------------------


@app.command()
def compare(
    ctx: typer.Context,
    study: str = typer.Argument(..., help="Name of the study"),
    model: list[Path] = typer.Option(
        ...,
        "--model",
        help="A model's predictions: a leaderboard submission file, an lm-evaluation-harness "
        "sample log or results folder (--log_samples), or a table of id,prediction "
        "(repeatable: several models, each beside the humans)",
    ),
    mapping: list[str] = typer.Option(
        [],
        "--map",
        help="KEY=COLUMN for a prediction table: id, prediction, model (repeatable)",
    ),
    fmt: Format = typer.Option(Format.table, "--format", help="table or json"),
    bootstrap: int = typer.Option(
        1000, "--bootstrap", min=0, help="Bootstrap replicates for the intervals (0: none)"
    ),
    seed: int | None = typer.Option(
        None, "--seed", help="Seed of the bootstrap (default: the study's)"
    ),
) -> None:
    """Models' predictions scored on exactly the study's test items, each beside the human
    majority and the mean single annotator: paired difference, McNemar's test, items right.
    Predictions are matched to the items by the dataset's id; what matches no item is counted
    and named."""
    from annotate.export.human_answers import humans
    from annotate.report.data.loading import load_study_data
    from annotate.scoring.compare import compare_model
    from annotate.scoring.long_predictions import parse_map
    from annotate.scoring.model_sources import read_models

    columns = parse_map(mapping)
    engine = options(ctx).workspace().engine
    data = load_study_data(engine, study)
    models = [
        m
        for path in model
        for m in read_models(
            path, data.spec, columns, study_split=data.test_split, study_source=data.test_source
        )
    ]
    _name_apart(models)
    people = humans(data)
    results = [compare_model(people, m, bootstrap=bootstrap, seed=seed) for m in models]
    if len(results) == 1:
        if fmt is Format.json:
            print_json(results[0])
            return
        _render_compare(results[0])
        return
    combined = {"study": data.name, "task": data.spec.name, "models": results}
    if fmt is Format.json:
        print_json(combined)
        return
    _render_models(combined)


def _name_apart(models: list[Any]) -> None:
    """Two models of one name (`run1/preds/RTE.jsonl`, `run2/preds/RTE.jsonl`) are told apart by
    their files."""
    from annotate.scoring.model_sources import names_apart

    for m, name in zip(models, names_apart([(m.name, m.path) for m in models]), strict=True):
        m.name = name


def _human(r: dict[str, Any]) -> str:
    """The humans' row as their aggregate is called: "human majority", "human mean" (STS-B)."""
    return "human " + str(r.get("aggregation") or "majority").split(" of ")[0]


def _render_models(combined: dict[str, Any]) -> None:
    """Several models: one table, the humans once and each model with its paired test."""
    from annotate.report.cells import interval, pct

    first = combined["models"][0]
    single = first["single_annotator"]
    rows = [
        {
            "who": _human(first),
            "n": str(first["n_items"]),
            "score": pct(first["human"]["task_score"]["value"]),
            "ci": _quoted(first["human"]["task_score"]),
        },
        {
            "who": f"mean single annotator ({single['n_annotators']})",
            "n": str(first["n_items"]),
            "score": pct(single["task_score"]),
        },
    ]
    for r in combined["models"]:
        diff, test = r["difference"], r["mcnemar"]
        row = {
            "who": f"model {r['model']['name']}",
            "n": str(r["n_items"]),
            "score": pct(r["model_scores"]["task_score"]["value"]),
            "ci": _quoted(r["model_scores"]["task_score"]),
            "human": pct(r["human"]["task_score"]["value"]),
        }
        if diff is not None:
            row["diff"] = f"{fixed(diff['value'] * 100, 1, sign=True)} " + interval(
                diff["ci_low"], diff["ci_high"]
            )
        if test is not None:
            t = test["table"]
            row["mcnemar"] = (
                f"{t['human_only_right']} / {t['model_only_right']}, p = {p_value(test['p_value'])}"
            )
        rows.append(row)
    print_table(
        rows,
        [
            ("who", ""),
            ("n", "Items"),
            ("score", "Task score"),
            ("ci", "95% CI"),
            ("human", "Humans, same items"),
            ("diff", "Model - humans [95% CI]"),
            ("mcnemar", "McNemar: human only / model only right"),
        ],
        title=f"{combined['study']} ({combined['task']}): models beside the humans (x100)",
    )
    say(
        "Each model is scored on the items it shares with the humans; the human score of "
        "those items is beside it, the difference paired on them."
    )
    for r in combined["models"]:
        _say_matching(r)
        for note in r["notes"]:
            warn(f"note: {r['model']['name']}: {note}")


def _quoted(total: dict[str, Any]) -> str:
    from annotate.report.cells import interval

    quoted = total.get("interval")  # the one rule: Wilson's or the bootstrap's
    return interval(quoted["low"], quoted["high"]) if quoted else ""


def _say_matching(r: dict[str, Any]) -> None:
    """What of the model's predictions matched no item, and the items without a prediction."""
    m = r.get("matching")
    if not m:
        return
    name = r["model"]["name"]
    say(f"{name}: {m['matched']} of {count_of(m['predictions'], 'prediction')} matched an item")
    if m["sample_items_without_prediction"]:
        more = " …" if m["sample_items_without_prediction"] > len(m["without_prediction"]) else ""
        warn(
            f"{name}: {count_of(m['sample_items_without_prediction'], 'sample item')} without a "
            f"prediction: {', '.join(m['without_prediction'])}{more}"
        )
    if m["unreadable"]:
        warn(
            f"{name}: {count_of(m['unreadable'], 'document')} without an idx, not matched: "
            + ", ".join(m["unreadable_named"])
        )


def _render_compare(r: dict[str, Any]) -> None:
    from annotate.report.cells import METRIC_NAMES, interval, pct

    metrics = r["metrics"]

    def row(who: str, scores: dict[str, Any], total: dict[str, Any]) -> dict[str, Any]:
        out = {"who": who, "score": pct(total["value"])}
        quoted = total.get("interval")  # the one rule: Wilson's or the bootstrap's
        out["ci"] = interval(quoted["low"], quoted["high"]) if quoted else ""
        for m in metrics:
            out[m] = pct(scores[m]["value"] if isinstance(scores[m], dict) else scores[m])
        return out

    single = r["single_annotator"]
    rows = [
        row(_human(r), r["human"]["scores"], r["human"]["task_score"]),
        {
            "who": f"mean single annotator ({single['n_annotators']})",
            "score": pct(single["task_score"]),
            **{m: pct(single["scores"].get(m)) for m in metrics},
        },
        row(
            f"model {r['model']['name']}",
            r["model_scores"]["scores"],
            r["model_scores"]["task_score"],
        ),
    ]
    diff = r["difference"]
    if diff is not None:
        rows.append(
            {
                "who": f"model - {_human(r)}",
                "score": fixed(diff["value"] * 100, 1, sign=True),
                "ci": interval(diff["ci_low"], diff["ci_high"]),
            }
        )
    columns = [("who", ""), *((m, METRIC_NAMES.get(m, m)) for m in metrics)]
    columns += [("score", "Task score"), ("ci", "95% CI")]
    same = count_of(r["n_items"], r["unit"])
    print_table(rows, columns, title=f"{r['study']} ({r['task']}): the same {same} (x100)")
    test = r["mcnemar"]
    if test is not None:
        t = test["table"]
        say(
            f"McNemar's test (exact): human only right {t['human_only_right']}, model only right "
            f"{t['model_only_right']}, both {t['both_right']}, neither {t['neither_right']}; "
            f"p = {p_value(test['p_value'])}"
        )
    if r["items"] is not None:
        for key, ids in r["items"].items():
            shown = ", ".join(ids[:ITEMS_SHOWN]) + (" …" if len(ids) > ITEMS_SHOWN else "")
            say(f"{key.replace('_', ' ')} ({len(ids)}): {shown}")
    _say_matching(r)
    for note in r["notes"]:
        warn(f"note: {note}")
