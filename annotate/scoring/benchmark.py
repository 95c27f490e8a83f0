"""The benchmark score over the studies in a store: the mean over the benchmark's tasks of each
task score (the mean of its metrics), as the GLUE and SuperGLUE leaderboards average. MNLI's
matched and mismatched sets count as one task (their mean); the diagnostic sets (tasks that
train on another task: AX, AX-b, AX-g) are scored separately, as on the leaderboards. With tasks
missing, the score is over the tasks covered and marked partial."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
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
    return [t for t in specs.builtin_tasks() if t.benchmark == benchmark and t.train_on is None]


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


BENCHMARKS = ("glue", "superglue")


@dataclass(frozen=True)
class StudyChoice:
    """The study that stands for each task of a benchmark (`choose_studies`)."""

    benchmark: str
    tasks: list[str]
    """The tasks considered, in the benchmark's order."""
    chosen: dict[str, str]
    """Task -> its study, in task order."""
    ambiguous: dict[str, list[str]]
    """Task -> its studies, for a task with several and none chosen (left out of `chosen`)."""
    passed_over: list[str]
    """Studies of a chosen task that do not stand for it."""

    @property
    def missing(self) -> list[str]:
        """The tasks (or task groups) without a study: `missing_tasks`."""
        return missing_tasks(self.tasks, self.chosen)

    def explanations(self) -> list[str]:
        """Why a task has no study chosen, in the words every command uses."""
        return [
            f"{task} has {len(names)} studies ({', '.join(names)}): choose one with --study"
            for task, names in self.ambiguous.items()
        ]

    def require(self) -> StudyChoice:
        """The choice, or UserError when a task has several studies and none was chosen."""
        if self.ambiguous:
            raise UserError("; ".join(self.explanations()))
        return self


def choose_studies(
    engine: Engine,
    benchmark: str,
    chosen: Sequence[str] = (),
    *,
    tasks: Sequence[str] | None = None,
    current: str | None = None,
) -> StudyChoice:
    """The one rule for which study stands for a task: the study named with --study
    (`chosen`), else the `current` study (a one-study report) for its own task, else the
    task's only study. A task with several studies and none chosen is `ambiguous`: `report
    --benchmark` and `export --benchmark` refuse it (`require`), in the same words. `tasks`:
    the benchmark's scored tasks by default (export adds the diagnostic sets)."""
    if tasks is None and benchmark not in BENCHMARKS:
        raise UserError(f"unknown benchmark {benchmark!r}: glue or superglue")
    names = list(tasks) if tasks is not None else [t.name for t in benchmark_tasks(benchmark)]
    with engine.connect() as conn:
        rows = conn.execute(select(Study.name, Study.task).order_by(Study.id)).all()
    by_task: dict[str, list[str]] = {}
    for name, task in rows:
        if task in names:
            by_task.setdefault(task, []).append(name)
    known = {name: task for name, task in rows}
    picked: dict[str, str] = {}
    for name in [*chosen, *([current] if current is not None else [])]:
        if name not in known:
            raise UserError(f"--study {name}: no such study")
        task = known[name]
        if task not in names:
            if name == current:
                continue  # a study of a task outside the benchmark's score (a diagnostic)
            raise UserError(f"--study {name}: its task {task} is not a {benchmark} task")
        if task in picked and name != current:
            raise UserError(f"--study: two studies of {task} ({picked[task]}, {name})")
        picked.setdefault(task, name)
    ambiguous: dict[str, list[str]] = {}
    for task, studies in by_task.items():
        if task in picked:
            continue
        if len(studies) > 1:
            ambiguous[task] = studies
        else:
            picked[task] = studies[0]
    ordered = {t: picked[t] for t in names if t in picked}
    passed_over = [
        n for t, studies in by_task.items() if t in ordered for n in studies if n != ordered[t]
    ]
    return StudyChoice(benchmark, names, ordered, ambiguous, passed_over)


def missing_tasks(tasks: Sequence[str], covered: Collection[str]) -> list[str]:
    """The one missing-task list: each task group (TASK_GROUPS: MNLI matched + mismatched)
    with none of its tasks `covered`, then the uncovered tasks of groups partly covered."""
    groups: dict[str, list[str]] = {}
    for task in tasks:
        groups.setdefault(TASK_GROUPS.get(task, task), []).append(task)
    empty = [g for g, members in groups.items() if not any(t in covered for t in members)]
    partly = [
        t
        for members in groups.values()
        if any(m in covered for m in members)
        for t in members
        if t not in covered
    ]
    return empty + partly


def benchmark_summary(
    engine: Engine, current_study: str, current_task: specs.TaskSpec, current_score: float | None
) -> dict[str, Any]:
    """Where a one-study report's study stands in its benchmark, without loading any other
    study: the study chosen for each task (`choose_studies`, this one for its own task), this
    study's task score, the missing tasks, and the benchmark score only when this study is
    the only one it has (else the command that scores it)."""
    benchmark = current_task.benchmark
    names = [t.name for t in benchmark_tasks(benchmark)]
    if current_task.train_on is None and current_task.name not in names:
        names.append(current_task.name)  # a custom task file outside the search path
    choice = choose_studies(engine, benchmark, tasks=names, current=current_study)
    rows = [
        {
            "task": task,
            "group": TASK_GROUPS.get(task, task),
            "study": study,
            "task_score": current_score if study == current_study else None,
        }
        for task, study in choice.chosen.items()
    ]
    missing = choice.missing
    groups = list(dict.fromkeys(TASK_GROUPS.get(t, t) for t in names))
    covered = {TASK_GROUPS.get(t, t) for t in choice.chosen}
    # Scored only when this study is all the benchmark has: no other study to load.
    alone = set(choice.chosen.values()) <= {current_study} and current_score is not None
    score = average_tasks({current_task.name: current_score}, names).score if alone else None
    notes = choice.explanations()
    if missing:
        notes.insert(
            0,
            f"partial: {len(covered)} of {len(groups)} tasks covered; missing "
            + ", ".join(missing),
        )
    if not alone and len(choice.chosen) > 1:
        notes.append(
            f"not scored here (that loads every study): the {benchmark} score over one study "
            f"per task is `annotate report --benchmark {benchmark}`"
        )
    return {
        "benchmark": benchmark,
        "score": score,
        "partial": bool(missing),
        "n_tasks": len(groups),
        "n_tasks_covered": len(covered),
        "tasks": rows,
        "missing": missing,
        "note": "; ".join(notes) or None,
    }
