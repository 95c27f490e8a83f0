"""Build the 0.5.0 store kept as a migration fixture, with the 0.5.0 code (schema 15).

Run from a checkout of release 0.5.0, with that checkout first on the path:

    PYTHONPATH=/path/to/annotate-0.5.0 python tests/migration/build_0_5_0_curators_store.py \
        tests/migration

It writes `store-0.5.0-curators.db` (SQLite, journal folded in): one curation set whose
curator names are stored as 0.5.0 stored them, spaces and Unicode form as typed. Its import
and edit commands kept `--as " lea "` as given; its screens trimmed a name but kept the form a
terminal sent ("léo" as one character, or "e" and a combining accent); its Python API kept
both. So lea's own examples (by " lea ") were served to "lea" to review, and one curator's
reviews, skips and decisions were split over several names. Schema 17 merges them. Only text
written for this project is in it.
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

LEO_ONE_CHARACTER = "l\u00e9o"
LEO_COMBINING = "le\u0301o"

PAIRS = [  # (author, premise, hypothesis, forward, backward, tags): examples 1-2, 3-4, ...
    (" lea ", "The gate is open.", "The gate is not open.", "contradiction", "contradiction",
     ["Negation"]),
    ("lea", "All ten boats were repaired.", "Some boats were repaired.", "entailment",
     "neutral", ["Quantifiers"]),
    ("sam", "Ana gave Ben the map.", "Ana gave the map to Ben.", "entailment", "entailment",
     ["Datives"]),
    ("sam", "The cat sat on the mat.", "A cat sat on a mat.", "entailment", "entailment",
     ["Intersectivity"]),
]  # fmt: skip


def main(out: Path) -> None:
    assert annotate.__version__ == "0.5.0", annotate.__version__
    store = out / "store-0.5.0-curators.db"
    store.unlink(missing_ok=True)
    engine = open_workspace(f"sqlite:///{store}", create=True).engine
    create_set(engine, "sp", created_by=" lea ")
    for author, premise, hypothesis, forward, backward, tags in PAIRS:
        save_pair(engine, "sp", author, PairDraft(premise, hypothesis, forward, backward, tags))

    # Review 1: lea was served her own example (by " lea ") and reviewed it.
    submit_review(engine, "sp", "lea", 1, "contradiction", ["Negation"])
    # Reviews 2, 3: léo reviewed sam's example 5 from two terminals, in two Unicode forms.
    submit_review(engine, "sp", LEO_ONE_CHARACTER, 5, "neutral", ["Datives"], "first look")
    submit_review(engine, "sp", LEO_COMBINING, 5, "entailment", ["Datives"], "second look")
    # Reviews 4, 5: lea reviewed sam's example 7, then (after a note-only edit: the same
    # sentences, version 2) again as "lea ": two opinions of one curator on one pair of sentences.
    submit_review(engine, "sp", "lea", 7, "entailment", ["Intersectivity"])
    edit_example(engine, "sp", 7, "sam ", {"note": "from a primer"})
    submit_review(engine, "sp", "lea ", 7, "neutral", ["Intersectivity"])
    # Reviews 6, 7: kim reviewed lea's example 3; lea edited its sentences (version 2), and
    # " kim" reviewed the new ones: a stale review and a current one, both kept.
    submit_review(engine, "sp", "kim", 3, "entailment", ["Quantifiers"])
    edit_example(engine, "sp", 3, " lea", {"hypothesis": "Some of the boats were repaired."})
    submit_review(engine, "sp", " kim", 3, "entailment", ["Quantifiers"])
    # léo passed example 1 over from both terminals, the combining form last.
    skip_for_review(engine, "sp", LEO_ONE_CHARACTER, 1)
    skip_for_review(engine, "sp", LEO_COMBINING, 1)
    # kim settled léo's disagreement on example 5 (léo's first review disputes its label).
    settle(engine, "sp", 5, " kim ", "entailment", ["Datives"], "a dative shift keeps the meaning")
    engine.dispose()
    with sqlite3.connect(store) as conn:  # fold the WAL journal into the file
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")
    print(f"wrote {store}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
