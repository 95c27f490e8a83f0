"""One metric's entry in the registry: its name, the function that computes it, the names it
is shown with, the interval fact the one interval rule reads and the key of its published
figure."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Family = Literal["classification", "minimal_pairs", "regression", "multi_answer", "entity_choice"]
"""The statistics a metric is computed from, which fixes the function's arguments:

- `classification`: `f(cm, n_classes, positive)`, `cm` an array (b, K+1, K+1) of confusion
  matrices [gold, predicted] (column K: units left without a decision), `positive` the code
  of the task's positive class or None;
- `minimal_pairs`: `f(pairs, alike)`, arrays (b,) of minimal pairs scored and of pairs whose
  items were all predicted alike;
- `regression`: `f(gold, pred, weights)`, ratings (n,); `weights` (b, n) counts each unit's
  draws in b bootstrap replicates, or None for the point value (then a float);
- `multi_answer`: `f(sums)`, sums (b, 5): true positives, false positives and false negatives
  over every candidate answer, questions with every answer right, questions scored;
- `entity_choice`: `f(sums)`, sums (b, 3): token F1, exact match (each the max over the gold
  answers), queries scored.

Every function but the regression point returns one value per row b (a numpy array)."""

FAMILY_KIND: dict[str, str] = {
    "classification": "classification",
    "minimal_pairs": "classification",
    "regression": "regression",
    "multi_answer": "multi_answer",
    "entity_choice": "entity_choice",
}
"""The task kind (`kind` in a task spec) each family of metrics scores."""


@dataclass(frozen=True)
class Metric:
    """A metric a task spec may name in `metrics`."""

    name: str
    """The id a task spec names and the report's JSON keys scores by."""
    title: str
    """What it measures, in a phrase (the list of known metrics shows it)."""
    header: str
    """Its column header in the report's tables (`Macro-F1`)."""
    family: Family
    """The statistics it is computed from, hence its function's arguments (see `Family`)."""
    function: Callable[..., Any] | str = field(repr=False)
    """The function, or a `module:attribute` reference to it, imported on first use (so that
    the table can be read without importing the numerical code)."""
    inline: str = ""
    """Its name inside a sentence (`macro-F1` in the report's summary line); the header when
    empty."""
    wilson: bool = False
    """Its value is one share of independent units that are right (a binomial proportion), so
    Wilson's score interval fits it when it is a task's only metric. Which interval a score
    gets is decided in one place, `scoring.intervals`; this is the fact it reads."""
    published_as: str = ""
    """The key of its figure in the papers' human rows (`report.benchmark.published`); its
    name when empty."""
    lowest: float = 0.0
    """The smallest value it can take (its largest is 1): 0 for a share of units right (accuracy,
    F1, exact match), -1 for a correlation. A score whose resamples cannot give it an interval
    (a paired or clustered design, several metrics, every resample alike) is given a
    score-type interval on the scale from `lowest` to 1 (`scoring.intervals.score_interval`)."""
    undefined_point: float | None = None
    """The value a point estimate takes where the metric is undefined (its function gives NaN):
    0 for MCC, as sklearn's `matthews_corrcoef` says. A bootstrap replicate where it is
    undefined stays NaN and is left out of the interval, as every undefined replicate is."""

    @property
    def inline_name(self) -> str:
        return self.inline or self.header

    @property
    def published_key(self) -> str:
        return self.published_as or self.name

    @property
    def task_kind(self) -> str:
        """The task kind it scores."""
        return FAMILY_KIND[self.family]

    def load(self) -> Callable[..., Any]:
        """The metric's function, importing it when the entry names it by reference."""
        if callable(self.function):
            return self.function
        module, _, attribute = self.function.partition(":")
        target: Any = importlib.import_module(module)
        for part in attribute.split("."):
            target = getattr(target, part)
        return target
