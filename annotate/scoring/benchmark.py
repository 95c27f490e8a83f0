"""The benchmark score over the studies in a store: the mean over the benchmark's tasks of each
task score (the mean of its metrics), as the GLUE and SuperGLUE leaderboards average. MNLI's
matched and mismatched sets count as one task (their mean); the diagnostic sets (tasks that
train on another task: AX, AX-b, AX-g) are scored separately, as on the leaderboards. With tasks
missing, the score is over the tasks covered and marked partial."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine, select

from annotate import specs
from annotate.errors import UserError
from annotate.store.models import Study

TASK_GROUPS = {"glue/mnli-m": "glue/mnli", "glue/mnli-mm": "glue/mnli"}
"""Tasks averaged into one before the benchmark mean."""


def benchmark_tasks(benchmark: str) -> list[specs.TaskSpec]:
    """The tasks that make up `benchmark`'s score (diagnostic sets excluded)."""
    return [t for t in specs.all_tasks() if t.benchmark == benchmark and t.train_on is None]


def benchmark_summary(
    engine: Engine,
    current_study: str,
    current_task: specs.TaskSpec,
    current_score: float | None,
    score_study: Callable[[str], float | None],
) -> dict[str, Any]:
    """The benchmark score over the studies in the store: for each task, the current study when
    it is of that task, else the most recent study of the task. `score_study(name)` gives a
    study's task score (None when it cannot be scored)."""
    benchmark = current_task.benchmark
    components = benchmark_tasks(benchmark)
    names = [t.name for t in components]
    if current_task.train_on is None and current_task.name not in names:
        names.append(current_task.name)  # a custom task file outside the search path
    with engine.connect() as conn:
        studies = conn.execute(select(Study.name, Study.task).order_by(Study.id)).all()
    latest: dict[str, str] = {}
    for name, task in studies:
        latest[task] = name
    latest[current_task.name] = current_study
    rows = []
    for task in names:
        study = latest.get(task)
        if study is None:
            continue
        if study == current_study:
            score = current_score
        else:
            try:
                score = score_study(study)
            except UserError:
                score = None
        rows.append(
            {
                "task": task,
                "group": TASK_GROUPS.get(task, task),
                "study": study,
                "task_score": score,
            }
        )
    groups: dict[str, list[float]] = {}
    for row in rows:
        if row["task_score"] is not None:
            groups.setdefault(row["group"], []).append(row["task_score"])
    all_groups = list(dict.fromkeys(TASK_GROUPS.get(t, t) for t in names))
    group_scores = {g: sum(v) / len(v) for g, v in groups.items()}
    missing = [g for g in all_groups if g not in group_scores]
    missing_members = [
        t for t in names if TASK_GROUPS.get(t, t) in group_scores and t not in latest
    ]
    score = sum(group_scores.values()) / len(group_scores) if group_scores else None
    partial = bool(missing or missing_members)
    note = None
    if partial:
        note = (
            f"partial: {len(group_scores)} of {len(all_groups)} tasks covered; missing "
            + ", ".join(missing + missing_members)
        )
    return {
        "benchmark": benchmark,
        "score": score,
        "partial": partial,
        "n_tasks": len(all_groups),
        "n_tasks_covered": len(group_scores),
        "tasks": rows,
        "missing": missing + missing_members,
        "note": note,
    }
