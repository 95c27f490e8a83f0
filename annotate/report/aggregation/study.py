"""A coded study's labels aggregated with its protocol: one answer per unit, exactly as the
report aggregates them (same tie rule, same seed), so every view (report, export, compare)
scores the same human answers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from annotate.report.aggregation import majority as agg
from annotate.report.data.coding import CodedStudy, code_study
from annotate.report.data.loading import StudyData
from annotate.scoring.intervals import rng_for


@dataclass
class Aggregated:
    """One answer per unit: a class code (agg.NO_LABELS / NO_DECISION when none) or a rating."""

    pred: np.ndarray
    votes: agg.UnitVotes | None
    result: agg.VoteResult | None


def priority_for(coded: CodedStudy, dev_counts: dict[str, int] | None) -> np.ndarray | None:
    """Class priority for the dev-majority-class rule: how often each class is gold in dev."""
    if not dev_counts or coded.kind not in {"classification", "multi_answer"}:
        return None
    return np.array([dev_counts.get(c, 0) for c in coded.classes], dtype=float)


def aggregate(
    coded: CodedStudy,
    rule: str,
    how: str,
    rng: np.random.Generator,
    priority: np.ndarray | None = None,
    label_mask: np.ndarray | None = None,
    spare_mask: np.ndarray | None = None,
    keys: np.ndarray | None = None,
) -> Aggregated:
    """Aggregate the labels (or the subset `label_mask`) per unit. With the extra-annotator
    rule, a unit tied on `label_mask` is voted again with the labels in `spare_mask` added.
    `keys` (`agg.unit_keys`): random ties drawn per unit, not from `rng` in unit order."""
    mask = np.ones(len(coded.label_unit), dtype=bool) if label_mask is None else label_mask
    if coded.kind == "regression":
        pred = agg.aggregate_ratings(
            coded.label_unit[mask], coded.label_number[mask], coded.n_units, how
        )
        return Aggregated(pred, None, None)
    votes = agg.unit_votes(coded.label_unit[mask], coded.label_code[mask], coded.n_units)
    result = agg.majority_vote(votes, rule, rng, priority, keys)
    if rule == "extra-annotator" and spare_mask is not None and spare_mask.any():
        widened = mask | spare_mask
        has_spare = np.bincount(coded.label_unit[spare_mask], minlength=coded.n_units) > 0
        retry = result.tied & has_spare
        if retry.any():
            votes2 = agg.unit_votes(
                coded.label_unit[widened], coded.label_code[widened], coded.n_units
            )
            again = agg.majority_vote(votes2, rule, rng, priority, keys)
            result.pred[retry] = again.pred[retry]
            result.resolution[retry] = np.where(again.tied[retry], agg.OPEN, "extra-annotator")
    return Aggregated(result.pred, votes, result)


def final_aggregate(data: StudyData) -> tuple[CodedStudy, Aggregated]:
    """The study's labels coded and aggregated with its protocol: the same call the report
    makes (tie rule, regression aggregation, dev priority; a random tie drawn from the seed and
    the unit's name, so the order the labels were stored or imported in does not matter)."""
    coded = code_study(data)
    protocol = data.protocol
    final = aggregate(
        coded,
        protocol.tie_rule,
        protocol.regression_aggregation,
        rng_for(protocol.seed, "ties"),
        priority_for(coded, data.dev_class_counts),
        keys=agg.unit_keys(protocol.seed, coded.unit_name),
    )
    return coded, final


def describe_aggregation(data: StudyData, k: str | None = None) -> str:
    """E.g. "majority of 5, ties: random (seed 7)"; `k`: the committee the data has, where it
    is not yet the protocol's (report.build.data_committee_size)."""
    p = data.protocol
    k = str(p.annotators_per_item) if k is None else k
    if data.spec.kind == "regression":
        return f"{p.regression_aggregation} of {k} ratings"
    return f"majority of {k}, ties: {p.tie_rule} (seed {p.seed})"
