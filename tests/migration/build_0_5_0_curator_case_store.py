"""Build the 0.5.0 store kept as a migration fixture for curator names in other letter cases,
with the 0.5.0 code (schema 15).

Run from a checkout of release 0.5.0, with that checkout first on the path:

    PYTHONPATH=/path/to/annotate-0.5.0 python tests/migration/build_0_5_0_curator_case_store.py \
        tests/migration

It writes `store-0.5.0-curator-case.db` (SQLite, journal folded in): one curation set whose
curator names are stored as 0.5.0 stored them, letter case as typed. 0.5.0 (and every release
up to schema 18) compared names case-sensitively, so Léa typing `--as LÉA` was another curator:
she was served her own pairs to review, reviewed the same sentences twice, and her counts were
split. Schema 19 merges them. Only text written for this project is in it.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import annotate
from annotate.curation.examples import edit_example, save_pair
from annotate.curation.review import settle, skip_for_review, submit_review
from annotate.curation.sets import create_set
from annotate.curation.validation import PairDraft
from annotate.workspace import open_workspace

LEA = "L\u00e9a"  # how she first wrote her name (NFC)
LEA_CAPITALS = "L\u00c9A"
LEA_SMALL_COMBINING = "le\u0301a"  # small letters, "é" as "e" and a combining accent

PAIRS = [  # (author, premise, hypothesis, forward, backward, tags): examples 1-2, 3-4, ...
    (LEA, "The gate is open.", "The gate is not open.", "contradiction", "contradiction",
     ["Negation"]),
    ("sam", "Ana gave Ben the map.", "Ana gave the map to Ben.", "entailment", "entailment",
     ["Datives"]),
    (LEA_CAPITALS, "All ten boats were repaired.", "Some boats were repaired.", "entailment",
     "neutral", ["Quantifiers"]),
    ("Sam", "The cat sat on the mat.", "A cat sat on a mat.", "entailment", "entailment",
     ["Intersectivity"]),
]  # fmt: skip


def main(out: Path) -> None:
    assert annotate.__version__ == "0.5.0", annotate.__version__
    store = out / "store-0.5.0-curator-case.db"
    store.unlink(missing_ok=True)
    engine = open_workspace(f"sqlite:///{store}", create=True).engine
    create_set(engine, "cc", created_by=LEA)
    for author, premise, hypothesis, forward, backward, tags in PAIRS:
        save_pair(engine, "cc", author, PairDraft(premise, hypothesis, forward, backward, tags))

    # Review 1: Léa, as LÉA, was served her own example 1 (by Léa) and reviewed it.
    submit_review(engine, "cc", LEA_CAPITALS, 1, "contradiction", ["Negation"])
    # Reviews 2, 3: léa reviewed sam's example 3; after a note-only edit by "SAM" (the same
    # sentences, version 2) she reviewed it again as LÉA: two opinions on one pair of sentences.
    submit_review(engine, "cc", LEA_SMALL_COMBINING, 3, "entailment", ["Datives"])
    edit_example(engine, "cc", 3, "SAM", {"note": "from a grammar"})
    submit_review(engine, "cc", LEA_CAPITALS, 3, "neutral", ["Datives"])
    # Review 4: kim reviewed example 5 (by LÉA) and disputes its label.
    submit_review(engine, "cc", "kim", 5, "neutral", ["Quantifiers"])
    # Review 5: KIM reviewed Sam's example 7; review 6: Léa reviewed it too.
    submit_review(engine, "cc", "KIM", 7, "entailment", ["Intersectivity"])
    submit_review(engine, "cc", LEA, 7, "entailment", ["Intersectivity"])
    # Reviews 7, 8: Groß reviewed example 1, and as GROSS (case folding makes "ß" "ss") 4.
    submit_review(engine, "cc", "Gro\u00df", 1, "contradiction", ["Negation"])
    submit_review(engine, "cc", "GROSS", 4, "entailment", ["Datives"])
    # Review 9: léa reviewed her own example 5 (by LÉA), with spaces around her name.
    submit_review(engine, "cc", " l\u00e9a ", 5, "entailment", ["Quantifiers"])
    # Kim passed example 1 over as "Kim", then again as "kim".
    skip_for_review(engine, "cc", "Kim", 1)
    skip_for_review(engine, "cc", "kim", 1)
    # Sam settled kim's disagreement on example 5.
    settle(engine, "cc", 5, "Sam", "entailment", ["Quantifiers"], "all ten is some")
    engine.dispose()
    with sqlite3.connect(store) as conn:  # fold the WAL journal into the file
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")
    print(f"wrote {store}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
