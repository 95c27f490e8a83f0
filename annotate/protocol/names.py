"""Names that look alike: Cyrillic "аna" and Latin "ana" are two annotators to the store and
one to the eye. A name's *skeleton* (after Unicode TR 39) folds case, compatibility forms,
accents and the letters of other scripts that are drawn like Latin ones; two names with one
skeleton are confusable. The letter table covers the Cyrillic and Greek look-alikes of the
Latin alphabet (the usual homoglyph attacks), not all of TR 39's data."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

LOOKALIKES = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o",
        "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i",
        "ј": "j", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l", "ь": "b",
        # Greek
        "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o",
        "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ϲ": "c", "ϳ": "j",
        # Latin and digits drawn alike
        "ı": "i", "ł": "l", "0": "o", "1": "l", "|": "l",
    }
)  # fmt: skip


def skeleton(name: str) -> str:
    """What a name looks like: compatibility-folded, case-folded, without accents, with
    look-alike letters of other scripts as the Latin letter they resemble."""
    folded = unicodedata.normalize("NFKD", name.strip().casefold())
    bare = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return bare.translate(LOOKALIKES)


def confusable_with(name: str, others: Iterable[str]) -> list[str]:
    """The other names that look like `name` (not `name` itself)."""
    mine = skeleton(name)
    return sorted(o for o in others if o != name and skeleton(o) == mine)


def spelled_out(name: str) -> str:
    """The characters that set a name apart, for a warning: `а` U+0430 CYRILLIC SMALL
    LETTER A."""
    odd = [ch for ch in dict.fromkeys(name) if not ch.isascii()]
    return ", ".join(f"{ch} U+{ord(ch):04X} {unicodedata.name(ch, '?')}" for ch in odd)
