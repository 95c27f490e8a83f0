"""Aggregation: many labels of one unit become one answer.

A *unit* is what a vote is taken over: an item, or one candidate answer of a MultiRC question.
Votes are counted per unit over the codes (class indices) its labels carry; the majority wins
and a tie is settled by the study's declared tie rule:

- `random`: one of the tied answers, drawn with a seeded generator (reproducible); the study's
  own vote draws it from the seed and the unit's name (`unit_keys`), so the same labels in
  another row order (another import of one file) give the same answers;
- `abstain`: no answer, which scores as wrong;
- `dev-majority-class`: the tied answer that is most frequent among the gold labels of the
  training (dev) split; without such counts, the first in the task's label order;
- `extra-annotator`: the unit stays open for one more label; until it comes, no answer (wrong).
  An item that received the extra label is voted on with all its labels.

Ratings (STS-B) are averaged with the mean or the median instead; they have no ties.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

# A vote's result is a prediction the scorers take, so it uses their codes for "no answer".
from annotate.scoring.units import NO_DECISION, NO_LABELS

TIE_RULES = ("random", "abstain", "dev-majority-class", "extra-annotator")
RESOLVED, RANDOM, DEV_MAJORITY, ABSTAIN, OPEN = (
    "",
    "random",
    "dev-majority-class",
    "abstain",
    "open",
)


@dataclass
class UnitVotes:
    """Votes per unit, as a dense (units × candidates) table."""

    counts: np.ndarray
    """(n_units, L) votes for each candidate; unused cells are 0."""
    candidates: np.ndarray
    """(n_units, L) the code each column stands for; -1 where unused."""

    @property
    def n_labels(self) -> np.ndarray:
        return self.counts.sum(axis=1)

    @property
    def top(self) -> np.ndarray:
        """Votes for the most chosen answer of each unit."""
        if self.counts.shape[1] == 0:
            return np.zeros(len(self.counts), dtype=np.int64)
        return self.counts.max(axis=1)

    def votes_for(self, codes: np.ndarray) -> np.ndarray:
        """Votes each unit gave to `codes` (one code per unit; -1 gives 0)."""
        hit = (self.candidates == codes[:, None]) & (codes[:, None] >= 0)
        return (self.counts * hit).sum(axis=1)


@dataclass
class VoteResult:
    pred: np.ndarray
    """Winning code per unit; NO_LABELS or NO_DECISION where there is none."""
    tied: np.ndarray
    """Whether the top vote count was shared (before any tie rule)."""
    resolution: np.ndarray
    """How each tie was handled: RANDOM, DEV_MAJORITY, ABSTAIN, OPEN; RESOLVED when no tie."""


def votes_of(votes: UnitVotes, u: int, classes: list[str]) -> dict[str, int]:
    """A unit's votes as {answer: count}, most votes first."""
    return votes_dict(votes.candidates[u].tolist(), votes.counts[u].tolist(), classes)


def votes_dict(cands: list[int], counts: list[int], classes: list[str]) -> dict[str, int]:
    pairs = sorted((-n, c) for c, n in zip(cands, counts, strict=True) if n > 0)
    return {classes[c]: -n for n, c in pairs}


def answer_of(classes: list[str], code: int) -> str | None:
    """The answer a code stands for; None for no labels or no decision."""
    return classes[code] if code >= 0 else None


def unit_votes(unit: np.ndarray, code: np.ndarray, n_units: int) -> UnitVotes:
    """Count votes: `unit` and `code` give one label each (code >= 0)."""
    unit = np.asarray(unit, dtype=np.int64)
    code = np.asarray(code, dtype=np.int64)
    if len(unit) == 0:
        empty = np.zeros((n_units, 0), dtype=np.int64)
        return UnitVotes(empty, empty.copy())
    span = int(code.max()) + 1
    if n_units * span <= 4 * len(unit) + 1_000_000:
        # Few distinct answers (classes): one column per code, counted without sorting.
        table = np.bincount(unit * span + code, minlength=n_units * span).reshape(n_units, span)
        cands = np.broadcast_to(np.arange(span, dtype=np.int64), (n_units, span))
        return UnitVotes(table, np.where(table > 0, cands, -1))
    keys, counts = np.unique(unit * span + code, return_counts=True)
    key_unit, key_code = keys // span, keys % span
    # Column of each (unit, code) pair = its rank among the unit's distinct codes.
    first = np.searchsorted(key_unit, key_unit, side="left")
    column = np.arange(len(keys)) - first
    width = int(column.max()) + 1
    table = np.zeros((n_units, width), dtype=np.int64)
    cands = np.full((n_units, width), -1, dtype=np.int64)
    table[key_unit, column] = counts
    cands[key_unit, column] = key_code
    return UnitVotes(table, cands)


def unit_keys(seed: int, names: np.ndarray) -> np.ndarray:
    """A 64-bit key per unit from the seed and the unit's name (its item's source id): what
    the `random` tie rule draws from, whatever order the units come in."""
    return np.array(
        [
            int.from_bytes(
                hashlib.blake2b(f"{seed}\x1f{name}".encode(), digest_size=8).digest(), "little"
            )
            for name in names
        ],
        dtype=np.uint64,
    )


def keyed_draws(keys: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """A uniform draw in [0, 1) per (unit key, answer code): splitmix64 of the two mixed, so
    each unit's tied answers are ranked by the key alone."""
    with np.errstate(over="ignore"):
        x = keys[:, None] ^ (
            codes.astype(np.int64).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        )
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    return (x >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def majority_vote(
    votes: UnitVotes,
    rule: str,
    rng: np.random.Generator,
    priority: np.ndarray | None = None,
    keys: np.ndarray | None = None,
) -> VoteResult:
    """The majority answer per unit, ties settled by `rule`.

    `priority[code]` ranks answers for `dev-majority-class` (higher wins); None means the rule
    falls back to the lowest code (the task's label order). `keys` (one per unit, `unit_keys`)
    make the `random` rule's draw depend on the unit, not on `rng` and the units' order."""
    if rule not in TIE_RULES:
        raise ValueError(f"unknown tie rule {rule!r}")
    counts, cands = votes.counts, votes.candidates
    n = len(counts)
    pred = np.full(n, NO_LABELS, dtype=np.int64)
    tied = np.zeros(n, dtype=bool)
    resolution = np.full(n, RESOLVED, dtype=object)
    if counts.shape[1] == 0:
        return VoteResult(pred, tied, resolution)
    top = counts.max(axis=1)
    is_top = (counts == top[:, None]) & (top[:, None] > 0)
    n_top = is_top.sum(axis=1)
    tied = n_top > 1
    single = n_top == 1
    pred[single] = cands[single, counts[single].argmax(axis=1)]
    rows = np.flatnonzero(tied)
    if len(rows) == 0:
        return VoteResult(pred, tied, resolution)
    if rule == "random":
        draws = (
            rng.random((len(rows), counts.shape[1]))
            if keys is None
            else keyed_draws(keys[rows], cands[rows])
        )
        draws[~is_top[rows]] = -1.0
        pred[rows] = cands[rows, draws.argmax(axis=1)]
        resolution[rows] = RANDOM
    elif rule == "dev-majority-class":
        c = cands[rows]
        if priority is None:
            rank = -c.astype(float)  # lowest code first = the task's label order
        else:
            rank = np.where(c >= 0, priority[np.clip(c, 0, None)], -np.inf).astype(float)
            rank = rank - c * 1e-9  # equal priority: label order
        rank[~is_top[rows]] = -np.inf
        pred[rows] = c[np.arange(len(rows)), rank.argmax(axis=1)]
        resolution[rows] = DEV_MAJORITY
    else:
        pred[rows] = NO_DECISION
        resolution[rows] = ABSTAIN if rule == "abstain" else OPEN
    return VoteResult(pred, tied, resolution)


def aggregate_ratings(unit: np.ndarray, values: np.ndarray, n_units: int, how: str) -> np.ndarray:
    """Mean or median rating per unit (NaN for a unit without ratings)."""
    unit = np.asarray(unit, dtype=np.int64)
    values = np.asarray(values, dtype=float)
    if how == "mean":
        sums = np.bincount(unit, weights=values, minlength=n_units)
        counts = np.bincount(unit, minlength=n_units)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    if how == "median":
        out = np.full(n_units, np.nan)
        if len(unit) == 0:
            return out
        order = np.lexsort((values, unit))
        u, v = unit[order], values[order]
        starts = np.flatnonzero(np.r_[True, u[1:] != u[:-1]])
        ends = np.r_[starts[1:], len(u)]
        lo = starts + (ends - starts - 1) // 2
        hi = starts + (ends - starts) // 2
        out[u[starts]] = (v[lo] + v[hi]) / 2
        return out
    raise ValueError(f"unknown regression aggregation {how!r}")


class LabelSampler:
    """Draw k labels of each group (item) at random, without replacement, again and again.

    The labels are laid out once as a table with one row per group; each draw ranks random keys
    along the rows (a random permutation of each group's labels), much cheaper than sorting
    all labels per draw."""

    def __init__(self, group: np.ndarray) -> None:
        group = np.asarray(group, dtype=np.int64)
        self.n_labels = len(group)
        if len(group) == 0:
            self.table = np.zeros((0, 0), dtype=np.int64)
            self.sizes = np.zeros(0, dtype=np.int64)
            return
        order = np.argsort(group, kind="stable")
        g = group[order]
        starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
        self.sizes = np.diff(np.r_[starts, len(g)])
        self.table = np.full((len(starts), int(self.sizes.max())), -1, dtype=np.int64)
        column = np.arange(len(g)) - np.repeat(starts, self.sizes)
        self.table[np.repeat(np.arange(len(starts)), self.sizes), column] = order

    def draw(
        self, k: int, rng: np.random.Generator, extra: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """(chosen, spare): boolean masks over the labels. Groups with fewer than k labels get
        none. With `extra`, `spare` marks one more random label of each group that has one
        (what the extra-annotator rule would add on a tie)."""
        chosen = np.zeros(self.n_labels, dtype=bool)
        spare = np.zeros(self.n_labels, dtype=bool)
        if self.n_labels == 0:
            return chosen, spare
        keys = rng.random(self.table.shape)
        keys[self.table < 0] = 2.0  # padding sorts last
        shuffled = np.take_along_axis(self.table, keys.argsort(axis=1), axis=1)
        rows = self.sizes >= k
        chosen[shuffled[rows, :k].ravel()] = True
        if extra and shuffled.shape[1] > k:
            more = self.sizes > k
            spare[shuffled[more, k]] = True
        return chosen, spare


def subsample_labels(
    group: np.ndarray, k: int, rng: np.random.Generator, extra: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """One draw of `LabelSampler(group).draw(k, rng, extra)`."""
    return LabelSampler(group).draw(k, rng, extra)
