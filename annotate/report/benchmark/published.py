"""The human rows the GLUE and SuperGLUE papers published: a reference
line beside what a store measured, always labelled as published, never mixed into our numbers.
Values are fractions, keyed by our task names and each figure's published key, which the metric
registry maps to the metrics it stands for (`Metric.published_key`: the metric's id unless the
entry says otherwise)."""

from __future__ import annotations

from annotate.metric_registry import all_metrics
from annotate.report.model.schema import PublishedRow

SUPERGLUE = PublishedRow.model_construct(
    source="Wang et al. (2019), SuperGLUE, Table 3 (human baselines)",
    scores={
        "superglue/boolq": {"accuracy": 0.890},
        "superglue/cb": {"macro_f1": 0.958, "accuracy": 0.989},
        "superglue/copa": {"accuracy": 1.000},
        "superglue/multirc": {"f1a": 0.818, "em": 0.519},
        "superglue/record": {"record_f1": 0.917, "record_em": 0.913},
        "superglue/rte": {"accuracy": 0.936},
        "superglue/wic": {"accuracy": 0.800},
        "superglue/wsc": {"accuracy": 1.000},
        "superglue/axb": {"mcc": 0.770},
        "superglue/axg": {"gender_parity": 0.993, "accuracy": 0.997},
    },
    average=0.898,
    note="published, not measured here: other annotators, other items (the test sets)",
)

GLUE = PublishedRow.model_construct(
    source="Nangia & Bowman (2019), GLUE leaderboard human baselines",
    scores={
        "glue/cola": {"mcc": 0.664},
        "glue/sst2": {"accuracy": 0.978},
        "glue/mrpc": {"f1": 0.863, "accuracy": 0.808},
        "glue/stsb": {"pearson": 0.927, "spearman": 0.926},
        "glue/qqp": {"f1": 0.595, "accuracy": 0.804},
        "glue/mnli-m": {"accuracy": 0.920},
        "glue/mnli-mm": {"accuracy": 0.928},
        "glue/qnli": {"accuracy": 0.912},
        "glue/rte": {"accuracy": 0.936},
        "glue/wnli": {"accuracy": 0.959},
    },
    average=0.871,
    note="published, not measured here: other annotators, other items (the test sets)",
)

PUBLISHED = {"superglue": SUPERGLUE, "glue": GLUE}


def published_row(benchmark: str) -> PublishedRow | None:
    """The paper's human row, each figure under the id of every metric it stands for."""
    row = PUBLISHED.get(benchmark)
    if row is None:
        return None
    return PublishedRow.model_construct(
        source=row.source,
        scores={task: by_metric(figures) for task, figures in row.scores.items()},
        average=row.average,
        note=row.note,
    )


def by_metric(figures: dict[str, float]) -> dict[str, float]:
    """{published key: value} -> {metric id: value}, in the figures' order; a figure no
    metric stands for is left out."""
    metrics = list(all_metrics().values())
    return {
        m.name: value for key, value in figures.items() for m in metrics if m.published_key == key
    }
