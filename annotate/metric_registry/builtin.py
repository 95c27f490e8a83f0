"""The built-in metrics: the official metrics of GLUE and SuperGLUE. Adding one is one entry
here, with its function in `annotate.scoring.metric_functions`."""

from __future__ import annotations

from annotate.metric_registry.entry import Metric

FUNCTIONS = "annotate.scoring.metric_functions"

BUILTIN: tuple[Metric, ...] = (
    Metric(
        "accuracy",
        "Accuracy",
        "Accuracy",
        "classification",
        f"{FUNCTIONS}:accuracy",
        inline="accuracy",
        wilson=True,
    ),
    Metric("f1", "F1 (positive class)", "F1", "classification", f"{FUNCTIONS}:f1"),
    Metric(
        "macro_f1",
        "Macro-averaged F1",
        "Macro-F1",
        "classification",
        f"{FUNCTIONS}:macro_f1",
        inline="macro-F1",
    ),
    Metric(
        "mcc",
        "Matthews correlation",
        "MCC",
        "classification",
        f"{FUNCTIONS}:mcc",
        lowest=-1.0,
        undefined_point=0.0,
    ),
    Metric(
        "r3",
        "R3 (3-class Matthews correlation)",
        "R3",
        "classification",
        f"{FUNCTIONS}:mcc",
        lowest=-1.0,
        undefined_point=0.0,
    ),
    Metric(
        "pearson",
        "Pearson correlation",
        "Pearson",
        "regression",
        f"{FUNCTIONS}:pearson",
        lowest=-1.0,
    ),
    Metric(
        "spearman",
        "Spearman correlation",
        "Spearman",
        "regression",
        f"{FUNCTIONS}:spearman",
        lowest=-1.0,
    ),
    Metric("f1a", "F1 over all answer options", "F1a", "multi_answer", f"{FUNCTIONS}:f1a"),
    Metric(
        "em",
        "Exact match (all answers of a question right)",
        "EM",
        "multi_answer",
        f"{FUNCTIONS}:exact_match",
    ),
    Metric(
        "record_f1",
        "Token F1, max over gold answers",
        "F1",
        "entity_choice",
        f"{FUNCTIONS}:record_token_f1",
    ),
    Metric(
        "record_em",
        "Exact match, max over gold answers",
        "EM",
        "entity_choice",
        f"{FUNCTIONS}:record_exact_match",
    ),
    Metric(
        "gender_parity",
        "Gender parity (share of minimal pairs predicted alike)",
        "Gender parity",
        "minimal_pairs",
        f"{FUNCTIONS}:gender_parity",
        inline="gender parity",
    ),
)
