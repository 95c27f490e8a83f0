"""The one split vocabulary: `val`, `validation` and `dev` name the same split.

SuperGLUE ships `val.jsonl`, GLUE `dev.tsv` and the Hugging Face Hub `validation`; a user may say
any of them at import (`--split`) and at every later reference (`study create --train val`).
Splits are stored under their canonical name, and every comparison goes through `same_split`,
so a store written before the names were unified (a dataset stored as `val`) is still found.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from annotate.errors import DataFileError

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


def file_split(name: str, known: Iterable[tuple[str, Iterable[str]]] = ()) -> str | None:
    """The split a data file's name says: the split whose file names (`known`: a task's
    download layout, split -> names) hold it, else a word of its stem that is a split name
    (`RTE_val_subset.jsonl`); canonical, None when the name says none. A word, not a part of
    one: `interval.jsonl` says no split."""
    for split, names in known:
        if name in names:
            return canonical_split(split)
    stem = name.rsplit(".", 1)[0] if "." in name else name
    for word in re.split(r"[^A-Za-z0-9]+", stem):
        if word.lower() in _CANONICAL:
            return canonical_split(word)
    return None


def refuse_other_split(path: str, said: str | None, items_split: str | None, items: str) -> None:
    """The one rule for predictions against items of a known split (`compare` and `report
    --model` against a study's test items, `score` against a gold file): predictions that say
    they are on another split (`RTE_val.jsonl`, a harness log's validation documents) are a
    DataFileError, as their ids name other items there. `items` says what the items are
    ("the study's items are"). Nothing is refused where either split is not said."""
    if not said or not items_split or not is_split_name(items_split):
        return
    if not same_split_family(said, items_split):
        raise DataFileError(
            path,
            None,
            f"its predictions are on the {canonical_split(said)} split; {items} from "
            f"{canonical_split(items_split)}, and the same ids there are other items",
        )
