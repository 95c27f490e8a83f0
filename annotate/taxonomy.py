"""The GLUE diagnostic taxonomy: 4 coarse categories, 33 fine tags, spelt exactly as in
`diagnostic-full.tsv`. The one place these spellings live in the code.

Tags are kept as {coarse category: [fine tags]} with every category present, the shape the
diagnostic readers give `Item.tags`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping

from annotate.errors import UserError

TAXONOMY: dict[str, tuple[str, ...]] = {
    "Lexical Semantics": (
        "Lexical entailment",
        "Morphological negation",
        "Factivity",
        "Symmetry/Collectivity",
        "Redundancy",
        "Named entities",
        "Quantifiers",
    ),
    "Predicate-Argument Structure": (
        "Core args",
        "Prepositional phrases",
        "Ellipsis/Implicits",
        "Anaphora/Coreference",
        "Active/Passive",
        "Nominalization",
        "Genitives/Partitives",
        "Datives",
        "Relative clauses",
        "Coordination scope",
        "Intersectivity",
        "Restrictivity",
    ),
    "Logic": (
        "Negation",
        "Double negation",
        "Intervals/Numbers",
        "Conjunction",
        "Disjunction",
        "Conditionals",
        "Universal",
        "Existential",
        "Temporal",
        "Upward monotone",
        "Downward monotone",
        "Non-monotone",
    ),
    "Knowledge": ("Common sense", "World knowledge"),
}

COARSE: tuple[str, ...] = tuple(TAXONOMY)
FINE: tuple[str, ...] = tuple(tag for tags in TAXONOMY.values() for tag in tags)
CATEGORY_OF: dict[str, str] = {tag: coarse for coarse, tags in TAXONOMY.items() for tag in tags}
_FINE_FOLDED: dict[str, str] = {tag.casefold(): tag for tag in FINE}

DOMAINS: tuple[str, ...] = ("ACL", "Artificial", "News", "Reddit", "Wikipedia")
"""The `Domain` values of the GLUE diagnostic; a curated set may use others."""

LABEL_SCHEMES: dict[str, tuple[str, ...]] = {
    "three-way": ("entailment", "neutral", "contradiction"),
    "two-way": ("entailment", "not_entailment"),
}
"""GLUE's three NLI classes, and AX-b's two (neutral and contradiction collapsed)."""

Tags = dict[str, list[str]]


def empty_tags() -> Tags:
    return {coarse: [] for coarse in COARSE}


def _unknown(tag: str) -> UserError:
    parts = [p.strip() for p in re.split(r"[;,]", tag) if p.strip()]
    if len(parts) > 1 and all(p.casefold() in _FINE_FOLDED for p in parts):
        # "Negation, Quantifiers": several tags in one, where a close match would name one
        several = ";".join(_FINE_FOLDED[p.casefold()] for p in parts)
        return UserError(
            f"unknown tag {tag!r}: it is {len(parts)} tags; give one, or where several are "
            f"taken, separate them with ';' ({several})"
        )
    close = difflib.get_close_matches(tag, FINE, n=2, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return UserError(f"unknown tag {tag!r}{hint} (`annotate curate tags` lists all 33)")


def spelt_as(name: str, names: Iterable[str]) -> str | None:
    """The one of `names` that `name` gives, spaces around it and letter case aside, or None:
    the rule a filter by tag, category or label follows."""
    wanted = name.strip().casefold()
    return next((n for n in names if n.casefold() == wanted), None)


def resolve_tag(name: str) -> str:
    """The exact spelling of a fine tag given in any letter case ("negation" -> "Negation")."""
    tag = spelt_as(name, FINE)
    if tag is None:
        raise _unknown(name.strip())
    return tag


def resolve_category(name: str) -> str | None:
    """The coarse category called `name` (any letter case), or None."""
    return spelt_as(name, COARSE)


def group_tags(fine: Iterable[str]) -> Tags:
    """Fine tags (any case, any order) grouped under their categories in taxonomy order."""
    chosen = {resolve_tag(t) for t in fine if t.strip()}
    return {coarse: [t for t in TAXONOMY[coarse] if t in chosen] for coarse in COARSE}


def check_tags(tags: Mapping[str, Iterable[str]]) -> Tags:
    """Tags per category as read from a file: every tag must be spelt exactly and sit under its
    own category. The order within a category is kept (an export writes it back unchanged)."""
    out = empty_tags()
    for coarse, fine in tags.items():
        if coarse not in TAXONOMY:
            raise UserError(f"unknown category {coarse!r}; the categories are {', '.join(COARSE)}")
        for tag in fine:
            if tag not in CATEGORY_OF:
                raise _unknown(tag)
            if CATEGORY_OF[tag] != coarse:
                raise UserError(f"tag {tag!r} belongs to {CATEGORY_OF[tag]}, not to {coarse}")
            if tag not in out[coarse]:
                out[coarse].append(tag)
    return out


def flat(tags: Mapping[str, Iterable[str]] | None) -> list[str]:
    """Every fine tag, categories in taxonomy order."""
    if not tags:
        return []
    return [t for coarse in COARSE for t in tags.get(coarse, [])]


def parse_tag_list(text: str) -> list[str]:
    """Fine tags written on a command line: `;`-separated as in the files ("Negation;Datives")."""
    return [t.strip() for t in text.split(";") if t.strip()]


def search_tags(query: str) -> list[str]:
    """Fine tags matching `query`, best first: the tag starts with it, then a word of the tag
    does, then the tag or its category contains it. Empty query: every tag in taxonomy order."""
    q = query.strip().casefold()
    if not q:
        return list(FINE)
    ranked: list[tuple[int, int, str]] = []
    for order, tag in enumerate(FINE):
        name = tag.casefold()
        words = name.replace("/", " ").replace("-", " ").split()
        if name.startswith(q):
            rank = 0
        elif any(w.startswith(q) for w in words):
            rank = 1
        elif q in name or q in CATEGORY_OF[tag].casefold():
            rank = 2
        else:
            continue
        ranked.append((rank, order, tag))
    return [tag for _, _, tag in sorted(ranked)]


def two_way(label: str) -> str:
    """A three-way label as AX-b writes it: neutral and contradiction become not_entailment."""
    return "entailment" if label == "entailment" else "not_entailment"
