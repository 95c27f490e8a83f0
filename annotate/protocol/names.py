"""Names that look alike: Cyrillic "аna" and Latin "ana" are two annotators to the store and
one to the eye. A name's *skeleton* follows Unicode TR 39 (UTS #39): every character is
replaced by the prototype of its look-alike class in Unicode's confusables data (Cyrillic,
Greek, Armenian, Cherokee, fullwidth and mathematical letters, digits drawn like letters: "0"
and "O", "1", "I" and "l", "rn" and "m"); two names with one skeleton are confusable. Beyond
TR 39, case and accents are folded too ("Ána" looks like "ana" in a list of names).

The data is Unicode's confusables.txt as the package confusable-homoglyphs ships it: a
symmetric table of look-alike pairs. Its classes are what TR 39 maps to one prototype, so
each class is given one representative (the member the most others map to: the prototype),
and the mapping is applied until nothing changes (a representative may hold a character of
another class, as "rn" does)."""

from __future__ import annotations

import json
import unicodedata
from collections import defaultdict
from collections.abc import Iterable
from functools import cache
from importlib import resources

DATA_PACKAGE = "confusable_homoglyphs"
DATA_FILE = "confusables.json"
DIRECTION_MARKS = str.maketrans("", "", "\u200e\u200f")
"""The data wraps right-to-left characters in direction marks (for display): not part of one."""
MAX_PASSES = 4
"""The mapping settles in two passes; a bound all the same."""


@cache
def prototypes() -> dict[int, str]:
    """Code point -> the representative of its look-alike class (for `str.translate`),
    read once from the confusables data."""
    data = json.loads(resources.files(DATA_PACKAGE).joinpath(DATA_FILE).read_text("utf-8"))
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    pairs: dict[str, int] = defaultdict(int)
    for key, entries in data.items():
        key = key.translate(DIRECTION_MARKS)
        for entry in entries:
            other = entry["c"].translate(DIRECTION_MARKS)
            if other and other != key:
                parent[root(key)] = root(other)
                pairs[key] += 1
    classes: dict[str, list[str]] = defaultdict(list)
    for member in list(parent):
        classes[root(member)].append(member)
    table: dict[int, str] = {}
    for members in classes.values():
        # The prototype is paired with every other member; a two-member class keeps the
        # longer string (a sequence is never a source), then an ASCII one, then the first.
        chosen = min(members, key=lambda m: (-pairs[m], -len(m), not m.isascii(), m))
        table.update({ord(m): chosen for m in members if len(m) == 1 and m != chosen})
    return table


def _prototyped(text: str) -> str:
    for _ in range(MAX_PASSES):
        mapped = unicodedata.normalize("NFD", text.translate(prototypes()))
        if mapped == text:
            break
        text = mapped
    return text


def _bare(text: str) -> str:
    """Case-folded, compatibility-decomposed, without combining marks (accents)."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in folded if not unicodedata.combining(ch))


def skeletons(name: str) -> frozenset[str]:
    """What a name looks like, folded two ways: case first ("Ian" as "ian"), and look-alikes
    first ("Ian" as "lan": a capital I is drawn as a small l). Two names look alike when
    they share one."""
    text = unicodedata.normalize("NFKD", name.strip())
    return frozenset(
        _prototyped(_bare(_prototyped(start))) for start in (_bare(text), _prototyped(text))
    )


def skeleton(name: str) -> str:
    """A name's skeleton with case folded first: Cyrillic "аna", "ANA" and "ána" all look
    like "ana"."""
    text = unicodedata.normalize("NFKD", name.strip())
    return _prototyped(_bare(_prototyped(_bare(text))))


def look_alikes(names: Iterable[str]) -> dict[str, list[str]]:
    """Each name -> the other names that look like it (sorted), in one pass over the names."""
    names = list(dict.fromkeys(names))
    by_skeleton: dict[str, set[str]] = defaultdict(set)
    shapes = {name: skeletons(name) for name in names}
    for name, shape in shapes.items():
        for s in shape:
            by_skeleton[s].add(name)
    return {
        name: sorted(set().union(*(by_skeleton[s] for s in shape)) - {name})
        for name, shape in shapes.items()
    }


def confusable_with(name: str, others: Iterable[str]) -> list[str]:
    """The other names that look like `name` (not `name` itself)."""
    mine = skeletons(name)
    return sorted({o for o in others if o != name and skeletons(o) & mine})


def spelled_out(name: str, other: str = "") -> str:
    """The characters that set a name apart, for a warning: `а` U+0430 CYRILLIC SMALL
    LETTER A. Those outside ASCII, and (given the look-alike `other`) those that `other`
    does not have, as "1" in "a1ex" beside "alex"."""
    odd = [ch for ch in dict.fromkeys(name) if not ch.isascii() or (other and ch not in other)]
    return ", ".join(f"{ch} U+{ord(ch):04X} {unicodedata.name(ch, '?')}" for ch in odd)
