"""When a test item has all the labels it needs: the one definition that the engine (which
stops assigning the item), `status`, the report and `check` share, so "complete", "open tie"
and "decided early" mean the same thing everywhere.

An item normally takes k labels from distinct annotators. Two protocol options change that:

- `tie_rule = "extra-annotator"`: an item whose votes are tied once it has k labels wants one
  more label, from another admitted annotator, and again after each label while it stays
  tied. It stops when the tie is broken; with no admitted annotator left who has not labelled
  it, it stays an *open tie* (the report scores it as wrong).
- `stop_when_decided = true`: an item stops before k once no further labels up to k can
  change its majority: the leader's votes exceed the runner-up's plus the labels still to
  come (k - n). The comparison is strict, so a tie that the remaining labels could still make
  counts as undecided, whatever the tie rule.

Votes are counted per *unit*: the item itself, or each candidate answer of a MultiRC
question (a question is tied when any of its answers is). Ratings (STS-B) have no ties and
no early stop. This module is pure: callers pass votes, not rows, so it sits under every
layer (store, protocol, report)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

EXTRA_ANNOTATOR = "extra-annotator"


@dataclass(frozen=True)
class Rule:
    """What the protocol says about when an item is complete."""

    k: int
    tie_rule: str = "random"
    stop_when_decided: bool = False

    @classmethod
    def of(cls, protocol: Mapping[str, Any]) -> Rule:
        """From a protocol as stored (a study's JSON) or dumped."""
        return cls(
            int(protocol.get("annotators_per_item", 0)),
            str(protocol.get("tie_rule", "random")),
            bool(protocol.get("stop_when_decided", False)),
        )

    @property
    def needs_votes(self) -> bool:
        """Whether the labels' values matter (else the count alone decides: k labels)."""
        return self.tie_rule == EXTRA_ANNOTATOR or self.stop_when_decided


def _top_two(votes: Iterable[int]) -> tuple[int, int]:
    ordered = sorted(votes, reverse=True)
    return (ordered[0] if ordered else 0, ordered[1] if len(ordered) > 1 else 0)


def tied(votes: Iterable[int]) -> bool:
    """The most chosen answer shares its count with another (no labels is not a tie)."""
    first, second = _top_two(votes)
    return first > 0 and first == second


def decided(votes: Iterable[int], n: int, k: int) -> bool:
    """No labels up to k can change the majority: leader > runner-up + (k - n)."""
    first, second = _top_two(votes)
    return n > 0 and first > second + max(0, k - n)


def labels_wanted(units: Sequence[Iterable[int]], n: int, rule: Rule) -> int:
    """How many more labels the item takes now, given its `n` labels and the votes of each of
    its units (one unit for most tasks; empty for ratings). 0: complete."""
    units = [list(u) for u in units]
    if n < rule.k:
        if rule.stop_when_decided and units and all(decided(u, n, rule.k) for u in units):
            return 0
        return rule.k - n
    if rule.tie_rule == EXTRA_ANNOTATOR and any(tied(u) for u in units):
        return 1  # one at a time: the next label may already break the tie
    return 0


def is_open_tie(units: Sequence[Iterable[int]], n: int, rule: Rule) -> bool:
    """At or past k, tied, and waiting for an extra annotator."""
    return n >= rule.k and labels_wanted(units, n, rule) > 0


def unit_votes(values: Sequence[Any], kind: str, collapse: Mapping[str, str]) -> list[list[int]]:
    """The votes of each unit of an item from its stored label values (as the engine stores
    them). `collapse` maps an answer to the class it counts as (CB's answer scale)."""
    if kind == "regression" or not values:
        return []
    if kind == "multi_answer":
        per_answer: dict[str, Counter[str]] = {}
        for value in values:
            for answer, choice in dict(value).items():
                per_answer.setdefault(str(answer), Counter())[str(choice)] += 1
        return [list(c.values()) for c in per_answer.values()]
    counts: Counter[str] = Counter()
    for value in values:
        key = value[0] if isinstance(value, list) and value else value
        counts[collapse.get(str(key), str(key))] += 1
    return [list(counts.values())]
