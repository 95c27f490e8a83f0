"""The benchmark score over the studies in a store: the mean over the benchmark's tasks of each
task score (the mean of its metrics), as the GLUE and SuperGLUE leaderboards average. MNLI's
matched and mismatched sets count as one task (their mean); the diagnostic sets (tasks that
train on another task: AX, AX-b, AX-g) are scored separately, as on the leaderboards. With tasks
missing, the score is over the tasks covered and marked partial."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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


@dataclass
class BenchmarkAverage:
    """A benchmark score by the leaderboards' rule, over the tasks that have a score."""

    groups: list[str]
    """Every task group of the benchmark (MNLI matched + mismatched are one), in task order."""
    group_scores: dict[str, float]
    """Group -> the mean of its tasks' scores, for the groups with any score (in task order)."""
    score: float | None
    """The mean over the scored groups; None when no group has a score."""


def average_tasks(task_scores: Mapping[str, float], tasks: Sequence[str]) -> BenchmarkAverage:
    """The one averaging rule: the tasks of `task_scores` (task -> task score) are grouped
    (TASK_GROUPS), each group is the mean of its tasks, the benchmark the mean of its groups.
    Groups come in the order of `tasks` (the benchmark's), so the score does not depend on the
    order the scores arrive in."""
    members: dict[str, list[float]] = {}
    for task in tasks:
        if task in task_scores:
            members.setdefault(TASK_GROUPS.get(task, task), []).append(task_scores[task])
    groups = list(dict.fromkeys(TASK_GROUPS.get(t, t) for t in tasks))
    group_scores = {g: sum(members[g]) / len(members[g]) for g in groups if g in members}
    score = sum(group_scores.values()) / len(group_scores) if group_scores else None
    return BenchmarkAverage(groups=groups, group_scores=group_scores, score=score)


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
    average = average_tasks(
        {r["task"]: r["task_score"] for r in rows if r["task_score"] is not None}, names
    )
    all_groups, group_scores = average.groups, average.group_scores
    missing = [g for g in all_groups if g not in group_scores]
    missing_members = [
        t for t in names if TASK_GROUPS.get(t, t) in group_scores and t not in latest
    ]
    score = average.score
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
