"""The one split vocabulary: `val`, `validation` and `dev` name the same split.

SuperGLUE ships `val.jsonl`, GLUE `dev.tsv` and the Hugging Face Hub `validation`; a user may say
any of them at import (`--split`) and at every later reference (`study create --train val`).
Splits are stored under their canonical name, and every comparison goes through `same_split`,
so a store written before the names were unified (a dataset stored as `val`) is still found.
"""

from __future__ import annotations

DEV = "dev"

_CANONICAL = {
    "dev": DEV,
    "val": DEV,
    "valid": DEV,
    "validation": DEV,
    "train": "train",
    "test": "test",
}
"""Every spelling of a split name this tool understands, lower-case, and what it means."""


def canonical_split(name: str) -> str:
    """The stored name of split `name` (`validation` -> `dev`); unknown names are kept as given
    (lower-cased), so a custom task's own split (`pilot`) survives. `validation_matched` (the
    Hub's MNLI) becomes `dev_matched`, as the GLUE file is named."""
    text = name.strip().lower()
    head, sep, tail = text.partition("_")
    if text not in _CANONICAL and sep and head in _CANONICAL:
        return f"{_CANONICAL[head]}_{tail}"
    return _CANONICAL.get(text, text)


def same_split(a: str, b: str) -> bool:
    """Whether two names mean one split (`val` and `dev`)."""
    return canonical_split(a) == canonical_split(b)


def named_split(stem: str, official_stem: str) -> str | None:
    """The split a prediction file's name says, jiant's way (`RTE_val` beside the official
    `RTE`): canonical; None when the name is not the official one with a split after it."""
    head, sep, split = stem.lower().rpartition("_")
    if sep and head == official_stem.lower() and is_split_name(split):
        return canonical_split(split)
    return None


def same_split_family(a: str, b: str) -> bool:
    """Whether two splits are of one kind (dev, test, train), MNLI's matched and mismatched
    halves of one: `validation_matched` and `dev`."""
    return canonical_split(a).partition("_")[0] == canonical_split(b).partition("_")[0]


def is_split_name(name: str) -> bool:
    """Whether `name` is a split name this tool knows (a Hub file's `validation-00000-of-…`)."""
    text = name.strip().lower()
    return text in _CANONICAL or text.partition("_")[0] in _CANONICAL
