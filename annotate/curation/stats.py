"""Statistics of a set, in the shape of Table 2 of the GLUE paper (examples per coarse category
with their label mix), plus every fine tag, the label distribution, examples per domain, and
review coverage and agreement. Active examples only: retired ones are counted apart.

An example counts for a coarse category when it has any tag in it, and for a fine tag when it
carries that tag; one example can count in several categories.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session

from annotate.curation.agreement import agreement, collect_codings
from annotate.curation.examples import ExampleQuery, ExampleView, find_examples
from annotate.curation.review import disagreement_queue
from annotate.curation.sets import load_set
from annotate.curation.validation import sentence_key
from annotate.taxonomy import TAXONOMY


def _label_counts(examples: list[ExampleView], labels: tuple[str, ...]) -> dict[str, int]:
    counts = Counter(e.label for e in examples)
    return {label: counts.get(label, 0) for label in labels}


def set_statistics(engine: Engine, set_name: str) -> dict[str, Any]:
    info = load_set(engine, set_name)
    examples = find_examples(engine, set_name, ExampleQuery())
    retired = find_examples(engine, set_name, ExampleQuery(retired=True))
    labels = info.labels

    coarse: dict[str, Any] = {}
    fine: dict[str, dict[str, Any]] = {}
    for category, tags in TAXONOMY.items():
        in_category = [e for e in examples if e.tags.get(category)]
        coarse[category] = {
            "count": len(in_category),
            "labels": _label_counts(in_category, labels),
        }
        fine[category] = {}
        for tag in tags:
            with_tag = [e for e in in_category if tag in e.tags[category]]
            fine[category][tag] = {
                "count": len(with_tag),
                "labels": _label_counts(with_tag, labels),
            }

    keys = Counter(sentence_key(e.premise, e.hypothesis) for e in examples)
    with Session(engine) as session:
        codings = collect_codings(session, info.id)
        reviewed = {c.unit for c in codings}
    n_reviews = len(codings) - len(reviewed)  # every unit has one author coding
    return {
        "set": info.name,
        "label_scheme": info.scheme,
        "examples": len(examples),
        "retired": len(retired),
        "pairs": len({e.pair_id for e in examples if e.pair_id is not None}),
        "untagged": sum(not e.fine_tags for e in examples),
        "labels_unchecked": sum(e.label_unchecked for e in examples),
        "duplicates": sum(n - 1 for n in keys.values() if n > 1),
        "labels": _label_counts(examples, labels),
        "coarse": coarse,
        "fine": fine,
        "domains": dict(sorted(Counter(e.domain or "(none)" for e in examples).items())),
        "authors": dict(Counter(e.author for e in examples).most_common()),
        "review": {
            "reviewed_examples": len(reviewed),
            "coverage": len(reviewed) / len(examples) if examples else None,
            "reviews": n_reviews,
            "open_disagreements": len(disagreement_queue(engine, set_name)),
            **agreement(codings, labels),
        },
    }
