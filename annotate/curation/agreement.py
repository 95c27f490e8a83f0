"""Agreement between the authors of examples and their blind reviewers.

A unit is an example with at least one review. Its coders are the author and each reviewer.
The author's coding is the example as the first reviewer saw it: a later edit or adjudication
must not make the independent judgements look more (or less) alike than they were. Reviews of
sentences that were edited since (stale reviews) are left out.

- Labels: Krippendorff's α (nominal) and the share of coder pairs that agree.
- Tags: for each fine tag, α (nominal) on "tag present / absent"; the same per coarse category
  (any of its tags present); the mean Jaccard index of the two tag sets over every coder pair
  of a unit (two empty sets count as 1), and the share of pairs with identical tag sets. Tags
  belong to the sentence pair, not to one direction (both directions carry one tag set, and a
  reviewer's second direction takes the tags of the first), so the unit of tag agreement is
  the sentence pair: each coder counts once on it, each two coders are one coder pair.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Any

import numpy as np
from sqlmodel import Session, col, select

from annotate.report.stats.agreement import krippendorff_alpha
from annotate.store.curation_models import CurationExample, CurationReview, CurationRevision
from annotate.taxonomy import CATEGORY_OF, COARSE, FINE, flat


@dataclass(frozen=True)
class Coding:
    unit: int
    """The example's id."""
    coder: str
    label: str
    tags: frozenset[str]
    pair: int | None = None
    """The sentence pair the example is a direction of (None: an example without a partner)."""


def collect_codings(session: Session, set_id: int) -> list[Coding]:
    """The author's and the reviewers' codings of every reviewed active example of a set (current
    reviews only)."""
    reviews: dict[int, list[CurationReview]] = defaultdict(list)
    for review in session.exec(
        select(CurationReview)
        .join(CurationExample, CurationReview.example_id == CurationExample.id)
        .where(
            CurationExample.set_id == set_id,
            CurationExample.retired == False,  # noqa: E712
            # Stale reviews judged sentences since edited: they say nothing about these.
            CurationReview.example_version >= CurationExample.sentences_version,
        )
        .order_by(CurationReview.id)
    ):
        reviews[review.example_id].append(review)
    if not reviews:
        return []
    examples = session.exec(
        select(CurationExample).where(col(CurationExample.id).in_(reviews))
    ).all()
    snapshots = {
        (r.example_id, r.version): r.snapshot
        for r in session.exec(
            select(CurationRevision).where(col(CurationRevision.example_id).in_(reviews))
        )
    }
    codings = []
    for example in sorted(examples, key=lambda e: e.position):
        assert example.id is not None
        seen = min(r.example_version for r in reviews[example.id])
        values = snapshots.get((example.id, seen)) if seen != example.version else None
        label, tags = (values["label"], values["tags"]) if values else (example.label, example.tags)
        pair = example.pair_id
        codings.append(Coding(example.id, example.author, label, frozenset(flat(tags)), pair))
        codings += [
            Coding(example.id, r.reviewer, r.label, frozenset(flat(r.tags)), pair)
            for r in reviews[example.id]
        ]
    return codings


def _units(codings: Sequence[Coding]) -> tuple[np.ndarray, int]:
    index: dict[int, int] = {}
    units = np.array([index.setdefault(c.unit, len(index)) for c in codings], dtype=np.int64)
    return units, len(index)


def _alpha(units: np.ndarray, n_units: int, codes: np.ndarray) -> dict[str, Any]:
    estimate = krippendorff_alpha(units, codes, n_units, "nominal")
    out: dict[str, Any] = {"alpha": estimate.value}
    if estimate.note:
        out["note"] = estimate.note
    return out


def _pairs(codings: Sequence[Coding]) -> list[tuple[Coding, Coding]]:
    by_unit: dict[int, list[Coding]] = defaultdict(list)
    for c in codings:
        by_unit[c.unit].append(c)
    return [pair for group in by_unit.values() for pair in combinations(group, 2)]


def label_agreement(codings: Sequence[Coding], labels: Sequence[str]) -> dict[str, Any]:
    units, n_units = _units(codings)
    codes = np.array([labels.index(c.label) for c in codings], dtype=np.int64)
    pairs = _pairs(codings)
    agree = sum(a.label == b.label for a, b in pairs)
    return {
        **_alpha(units, n_units, codes),
        "pairs": len(pairs),
        "pairwise_agreement": agree / len(pairs) if pairs else None,
    }


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return 1.0 if not a and not b else len(a & b) / len(a | b)


def _one_per_pair(codings: Sequence[Coding]) -> list[Coding]:
    """Each coder's tags once per sentence pair, as a unit named by the pair's first example:
    the two directions carry the same tag set, so counting both would count each coder pair
    twice and weigh a pair reviewed in both directions double against one reviewed once."""
    first_example: dict[tuple[str, int], int] = {}
    seen: set[tuple[tuple[str, int], str]] = set()
    out = []
    for c in codings:
        key = ("pair", c.pair) if c.pair is not None else ("example", c.unit)
        unit = first_example.setdefault(key, c.unit)
        if (key, c.coder) in seen:
            continue
        seen.add((key, c.coder))
        out.append(replace(c, unit=unit))
    return out


def tag_agreement(codings: Sequence[Coding]) -> dict[str, Any]:
    codings = _one_per_pair(codings)
    units, n_units = _units(codings)
    pairs = _pairs(codings)
    per_tag = {}
    for tag in FINE:
        present = np.array([tag in c.tags for c in codings], dtype=np.int64)
        if present.any():
            per_tag[tag] = {"category": CATEGORY_OF[tag], "codings": int(present.sum())}
            per_tag[tag] |= _alpha(units, n_units, present)
    per_category = {}
    for coarse in COARSE:
        present = np.array(
            [any(CATEGORY_OF[t] == coarse for t in c.tags) for c in codings], dtype=np.int64
        )
        if present.any():
            per_category[coarse] = {"codings": int(present.sum())} | _alpha(units, n_units, present)
    return {
        "mean_jaccard": float(np.mean([jaccard(a.tags, b.tags) for a, b in pairs]))
        if pairs
        else None,
        "exact_match": sum(a.tags == b.tags for a, b in pairs) / len(pairs) if pairs else None,
        "per_category": per_category,
        "per_tag": per_tag,
    }


def agreement(codings: Sequence[Coding], labels: Sequence[str]) -> dict[str, Any]:
    """Label and tag agreement over `codings` (empty figures when nothing was reviewed)."""
    units = {c.unit for c in codings}
    return {
        "units": len(units),
        "codings": len(codings),
        "coders": sorted({c.coder for c in codings}),
        "labels": label_agreement(codings, labels) if codings else None,
        "tags": tag_agreement(codings) if codings else None,
    }
