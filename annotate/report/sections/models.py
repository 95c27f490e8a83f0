"""The models of a report: each model's predictions scored on exactly the items of the human
sample, with intervals, and compared with the human majority item by item (exact McNemar test
on the items where one of them is right)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from annotate.report.aggregation.study import Aggregated
from annotate.report.cells import (
    METRIC_NAMES,
    Section,
    interval,
    pct,
    quoted_bounds,
)
from annotate.report.data.coding import CodedStudy
from annotate.report.model.schema import (
    Estimate,
    HeadlineInterval,
    ModelRow,
    PairedTest,
    StudyReport,
)
from annotate.report.sections.base import ReportSection, single
from annotate.scoring.intervals import quoted_interval
from annotate.scoring.mcnemar import mcnemar_exact
from annotate.scoring.model_predictions import model_units
from annotate.scoring.predictions import ModelPredictions
from annotate.scoring.scorers import (
    HEADLINE_DRAWS,
    count_answers_scored,
    count_scored,
    score_with_intervals,
    scorer_for,
)
from annotate.scoring.units import NO_LABELS
from annotate.wording import p_value


def score_models(
    coded: CodedStudy,
    models: Sequence[ModelPredictions],
    final: Aggregated,
    replicates: int,
    seed: int,
    has_gold: bool,
    notes: list[str],
) -> tuple[list[ModelRow], dict[str, np.ndarray]]:
    """One report row per model (scores with intervals, McNemar against the human majority)
    and, for classification tasks, each model's class code per item (for the diagnostics).
    Coverage gaps are added to `notes`."""
    rows: list[ModelRow] = []
    item_preds: dict[str, np.ndarray] = {}
    taken: set[str] = set()
    for model in models:
        name = model.name if model.name not in taken else model.path
        taken.add(name)
        pred = model_units(coded, model)
        covered = count_scored(coded, pred) if has_gold else 0
        row = ModelRow.model_construct(
            name=name, file=model.path, n=covered, scores=None, task_score=None
        )
        if has_gold:
            scorer = scorer_for(coded, pred)
            # The headline's draws: a model answering the items the humans answered is scored
            # on the humans' very resamples (a model like the majority gets its interval). One
            # covering other items is resampled over its own from the same generator: its
            # interval is of its score there, not paired with the humans' (`compare` pairs
            # them, on the items both answered).
            alike: list[str] = []
            scores, total = score_with_intervals(
                scorer, list(coded.spec.metrics), replicates, seed, HEADLINE_DRAWS, collapsed=alike
            )
            # Every metric's resamples one value: the score-type interval, named as such.
            every_alike = bool(alike) and set(coded.spec.metrics) <= set(alike)
            row.scores = {m: Estimate.of(e) for m, e in scores.items()}
            row.task_score = Estimate.of(total)
            quoted = quoted_interval(
                coded.spec.metrics,
                coded.kind,
                coded.item_pair is not None,
                row.task_score.value,
                covered,
                row.task_score.value if every_alike else row.task_score.ci_low,
                row.task_score.value if every_alike else row.task_score.ci_high,
                n_units=scorer.n_units,
                n_obs=count_answers_scored(coded, pred),
            )
            if quoted is not None:
                row.interval = HeadlineInterval.model_construct(
                    low=quoted.low, high=quoted.high, method=quoted.method
                )
            row.paired = _paired(coded, final.pred, pred)
        sample = count_scored(coded, final.pred)
        if has_gold and covered < sample:
            notes.append(f"model {name}: predictions cover {covered} of the {sample} scored items")
        rows.append(row)
        if coded.kind == "classification":
            item_preds[name] = pred
    return rows, item_preds


def _paired(coded: CodedStudy, human: np.ndarray, model: np.ndarray) -> PairedTest | None:
    """Paired comparison on the items both answered: McNemar's exact test of the discordant
    pairs (p is null when no item is discordant)."""
    if coded.kind != "classification":
        return None
    both = (coded.gold_code >= 0) & (human != NO_LABELS) & (model != NO_LABELS)
    test = mcnemar_exact(human[both] == coded.gold_code[both], model[both] == coded.gold_code[both])
    return PairedTest.model_construct(
        n=int(both.sum()),
        human_only_right=test.human_only_right,
        model_only_right=test.model_only_right,
        mcnemar_p=test.p_value if test.discordant else None,
    )


def _models_section(r: StudyReport) -> Section | None:
    if not r.models:
        return None
    metrics = r.metrics
    headers = [
        "Model",
        "n",
        *(METRIC_NAMES.get(m, m) for m in metrics),
        "Task score",
        "95% CI",
        "Paired (McNemar)",
    ]
    rows = []
    for m in r.models:
        if m.scores is None or m.task_score is None:
            rows.append([m.name, str(m.n), *("–" for _ in metrics), "–", "", ""])
            continue
        paired = m.paired
        test = ""
        if paired:
            test = (
                f"human only right {paired.human_only_right}, model only right "
                f"{paired.model_only_right}, p = {p_value(paired.mcnemar_p)}"
            )
        t = m.task_score
        rows.append(
            [
                m.name,
                str(m.n),
                *(pct(m.scores[x].value) for x in metrics),
                pct(t.value),
                interval(*quoted_bounds(t, m.interval)),  # the one rule, as `compare` quotes
                test,
            ]
        )
    return "Models on the same items (x100)", headers, rows


SECTION = ReportSection("models", single(_models_section))
