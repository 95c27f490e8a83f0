"""The one benchmark averaging rule: MNLI matched and mismatched are one task, each task group
counts once, and the order the scores come in does not matter."""

from __future__ import annotations

import pytest

from annotate.scoring.benchmark import average_tasks, benchmark_tasks


def test_mnli_halves_are_one_task_and_groups_follow_the_benchmark_order():
    tasks = [t.name for t in benchmark_tasks("glue")]
    average = average_tasks({"glue/rte": 0.0, "glue/mnli-mm": 0.5, "glue/mnli-m": 1.0}, tasks)
    assert average.group_scores == {"glue/mnli": 0.75, "glue/rte": 0.0}
    assert list(average.group_scores) == [g for g in average.groups if g in average.group_scores]
    assert average.score == pytest.approx(0.375)
    assert "glue/mnli-m" not in average.groups and "glue/cola" in average.groups


def test_score_does_not_depend_on_the_order_of_the_scores():
    tasks = [t.name for t in benchmark_tasks("superglue")]
    scores = {t: 0.1 + 0.07 * i for i, t in enumerate(tasks)}
    forward = average_tasks(scores, tasks).score
    backward = average_tasks(dict(reversed(scores.items())), tasks).score
    assert forward == backward == pytest.approx(sum(scores.values()) / len(scores))


def test_nothing_scored_gives_no_score():
    average = average_tasks({}, ["glue/rte"])
    assert average.score is None and average.group_scores == {} and average.groups == ["glue/rte"]
