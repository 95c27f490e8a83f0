"""The human row of a whole benchmark (`annotate report --benchmark glue|superglue`): one study
per task, each task's official score with its interval, the leaderboard average (the one rule,
`scoring.benchmark.average_tasks`) with a bootstrap interval, the missing tasks, models on the
same items and the published human row as a reference line.

The average's interval: each task's items are resampled with replacement, independently across
tasks (each task its own generator); replicate b of the average is the leaderboard average of
replicate b of every task score."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import Engine

from annotate import specs
from annotate.errors import UserError
from annotate.report.aggregation.study import final_aggregate
from annotate.report.benchmark.published import published_row
from annotate.report.build import DEFAULT_BOOTSTRAP, build_report
from annotate.report.data.loading import load_study_data
from annotate.report.model.schema import (
    BenchmarkModelRow,
    BenchmarkReport,
    BenchmarkTaskRow,
    Bootstrap,
    Estimate,
)
from annotate.report.sections.datasheet import build_datasheet
from annotate.scoring.benchmark import (
    TASK_GROUPS,
    average_tasks,
    benchmark_tasks,
    choose_studies,
    missing_tasks,
)
from annotate.scoring.intervals import percentile_interval, rng_for
from annotate.scoring.model_predictions import model_units
from annotate.scoring.model_sources import names_apart, refuse_folder_without_submissions
from annotate.scoring.predictions import read_predictions, submission_file
from annotate.scoring.scorers import scorer_for
from annotate.wording import fixed


def benchmark_report(
    engine: Engine,
    benchmark: str,
    *,
    studies: Sequence[str] = (),
    model_dirs: Sequence[Path] = (),
    bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int | None = None,
    hourly_rate: float | None = None,
) -> BenchmarkReport:
    """The benchmark's human row over the store's studies (see the module docstring)."""
    from annotate import __version__

    for folder in model_dirs:
        if not Path(folder).exists():
            raise UserError(f"--model {folder}: no such folder")
        if not Path(folder).is_dir():
            raise UserError(
                f"--model {folder}: with --benchmark, give a folder of submission files"
            )
    components = benchmark_tasks(benchmark)
    names = [t.name for t in components]
    diagnostic = [
        t for t in specs.builtin_tasks() if t.benchmark == benchmark and t.train_on is not None
    ]
    for folder in model_dirs:
        refuse_folder_without_submissions(
            Path(folder), "--model", benchmark, [*components, *diagnostic]
        )
    # Each folder is a model named after it; two folders of one name (`a/bert`, `b/bert`) by
    # their paths, else their scores would be averaged as one model's.
    model_names = names_apart([(Path(f).name or str(f), str(f)) for f in model_dirs])
    # One choice over the scored tasks and the diagnostic sets, so --study may name either; a
    # scored task with several studies is refused, a diagnostic set's is left out with a note.
    choice = choose_studies(engine, benchmark, studies, tasks=names + [t.name for t in diagnostic])
    if any(task in names for task in choice.ambiguous):
        choice.require()
    chosen = choice.chosen
    bootstrap = max(0, int(bootstrap))
    rows: list[BenchmarkTaskRow] = []
    human_reps: dict[str, np.ndarray] = {}
    model_scores: dict[str, dict[str, float]] = {}
    model_reps: dict[str, dict[str, np.ndarray]] = {}
    notes: list[str] = []
    seeds: list[int] = []

    def task_row(spec: specs.TaskSpec, study: str) -> tuple[BenchmarkTaskRow, Any, list, int]:
        """The task's row from its study's report; the study's data, the models read for it
        and its seed."""
        data = load_study_data(engine, study)
        task_seed = data.protocol.seed if seed is None else seed
        models = []
        for folder, name in zip(model_dirs, model_names, strict=True):
            path = submission_file(Path(folder), spec, data.test_split)
            if path is not None:
                pred = read_predictions(path, spec)
                models.append(dataclasses.replace(pred, name=name))
        report = build_report(data, bootstrap=bootstrap, seed=task_seed, models=models)
        report.datasheet = build_datasheet(engine, report, hourly_rate=hourly_rate)
        notes.extend(f"{spec.name}: {n}" for n in report.notes)
        row = BenchmarkTaskRow.model_construct(
            task=spec.name,
            title=spec.title,
            group=TASK_GROUPS.get(spec.name, spec.name),
            study=study,
            n_items=report.sample.n_items_scored,
            metrics=list(report.metrics),
            scores=report.scores,
            task_score=report.task_score,
            models={m.name: m.task_score for m in report.models if m.task_score is not None},
            model_intervals={m.name: m.interval for m in report.models if m.interval is not None},
            datasheet=report.datasheet,
            summary=report.summary,
            interval=report.headline_interval,
        )
        return row, data, models, task_seed

    for spec in components:
        study = chosen.get(spec.name)
        if study is None:
            continue
        row, data, models, task_seed = task_row(spec, study)
        seeds.append(task_seed)
        rows.append(row)
        if row.task_score.value is None:
            continue
        coded, final = final_aggregate(data)
        purpose = f"benchmark/{spec.name}"
        human_reps[spec.name] = _task_replicates(
            scorer_for(coded, final.pred), row.metrics, bootstrap, task_seed, purpose
        )
        for model in models:
            score = row.models.get(model.name)
            if score is None or score.value is None:
                continue
            model_scores.setdefault(model.name, {})[spec.name] = score.value
            model_reps.setdefault(model.name, {})[spec.name] = _task_replicates(
                scorer_for(coded, model_units(coded, model)),
                row.metrics,
                bootstrap,
                task_seed,
                purpose,
            )
    human = {r.task: r.task_score.value for r in rows if r.task_score.value is not None}
    average = average_tasks(human, names)
    estimate = _average_estimate(
        average.score, human_reps, names, bootstrap, {r.task: r.task_score for r in rows}
    )
    missing = missing_tasks(names, human)
    model_rows = []
    for name in model_names:
        scores = model_scores.get(name, {})
        m_avg = average_tasks(scores, names)
        model_rows.append(
            BenchmarkModelRow.model_construct(
                name=name,
                tasks_covered=[t for t in names if t in scores],
                average=_average_estimate(
                    m_avg.score,
                    model_reps.get(name, {}),
                    names,
                    bootstrap,
                    {r.task: r.models[name] for r in rows if name in r.models},
                ),
                partial=len(m_avg.group_scores) < len(m_avg.groups),
            )
        )
    diagnostic_rows = []
    for spec in diagnostic:
        if spec.name in chosen:
            diagnostic_rows.append(task_row(spec, chosen[spec.name])[0])
        elif spec.name in choice.ambiguous:
            notes.append(
                f"{spec.name} has {len(choice.ambiguous[spec.name])} studies "
                f"({', '.join(choice.ambiguous[spec.name])}): choose one with --study to show it"
            )
    report = BenchmarkReport.model_construct(
        benchmark=benchmark,
        summary="",
        tasks=rows,
        missing=missing,
        excluded_tasks=[t.name for t in diagnostic],
        diagnostics=diagnostic_rows,
        average=estimate,
        partial=bool(missing),
        n_groups=len(average.groups),
        n_groups_covered=len(average.group_scores),
        group_scores=average.group_scores,
        models=model_rows,
        published=published_row(benchmark),
        bootstrap=Bootstrap.model_construct(
            replicates=bootstrap,
            seed=seed if seed is not None else (seeds[0] if len(set(seeds)) == 1 else -1),
            method="percentile interval, 95%; each task's items resampled with replacement, "
            "independently across tasks; the average recomputed per replicate"
            + ("" if seed is not None else " (each task with its study's seed)"),
        ),
        software_version=__version__,
        notes=notes,
    )
    report.summary = benchmark_summary_line(report)
    return report


def _task_replicates(
    scorer, metrics: list[str], replicates: int, seed: int, purpose: str
) -> np.ndarray:
    """Bootstrap replicates of a task score (the mean of its metrics), NaN where undefined."""
    if replicates <= 0 or scorer.n_units == 0:
        return np.zeros(0)
    reps = scorer.replicates(replicates, rng_for(seed, purpose))
    return np.mean(np.vstack([np.asarray(reps[m], dtype=float) for m in metrics]), axis=0)


def _average_estimate(
    point: float | None,
    reps: dict[str, np.ndarray],
    names: list[str],
    replicates: int,
    tasks: dict[str, Estimate] | None = None,
) -> Estimate:
    """The benchmark average with its bootstrap interval. Where every replicate is alike
    (every task's resamples all right), the average of the tasks' own bounds (`tasks`: each
    never zero-wide), as if their errors went together: never a zero width."""
    if point is None or replicates <= 0 or not reps or any(len(r) == 0 for r in reps.values()):
        return Estimate.model_construct(value=point)
    averages = np.full(replicates, np.nan)
    for b in range(replicates):
        values = {t: float(r[b]) for t, r in reps.items() if np.isfinite(r[b])}
        if len(values) == len(reps):
            score = average_tasks(values, names).score
            averages[b] = np.nan if score is None else score
    low, high = percentile_interval(averages)
    if low is not None and high is not None and low >= high and tasks:
        lows = {t: e.ci_low for t, e in tasks.items() if t in reps and e.ci_low is not None}
        highs = {t: e.ci_high for t, e in tasks.items() if t in reps and e.ci_high is not None}
        below, above = average_tasks(lows, names).score, average_tasks(highs, names).score
        if len(lows) == len(highs) == len(reps) and below is not None and above is not None:
            low, high = min(low, below), max(high, above)
    return Estimate.model_construct(value=point, ci_low=low, ci_high=high)


def benchmark_summary_line(r: BenchmarkReport) -> str:
    """E.g. `Human, SuperGLUE average (4 of 8 tasks, partial): 85.0 [81.9, 88.0]; published
    human row 89.8 (not measured here)`."""
    name = {"glue": "GLUE", "superglue": "SuperGLUE"}.get(r.benchmark, r.benchmark)
    cover = f"{r.n_groups_covered} of {r.n_groups} tasks" + (", partial" if r.partial else "")
    if r.average.value is None:
        text = f"Human, {name} average ({cover}): no task scored yet"
    else:
        text = f"Human, {name} average ({cover}): {fixed(r.average.value * 100, 1)}"
        if r.average.ci_low is not None and r.average.ci_high is not None:
            text += f" [{fixed(r.average.ci_low * 100, 1)}, {fixed(r.average.ci_high * 100, 1)}]"
    if r.published is not None and r.published.average is not None:
        text += f"; published human row {r.published.average * 100:.1f} (not measured here)"
    return text
