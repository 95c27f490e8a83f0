"""A curator's blind review, after each submission: the next example and the progress line
("12 done, 3,988 waiting"), on a diagnostic set of 1,000 and 4,000 examples (imported from a
generated AX-b file), with a tenth of them already reviewed by this reviewer.

Baseline in the same run: `next_for_review` then `review_progress`, the two reads the review
screen made (each reads every example and review of the set), against `next_with_progress`,
one read. Target: <= 0.6x the baseline.

    python -m bench.bench_review [--sizes 1000,4000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from annotate.curation import review
from annotate.curation.importing import import_diagnostic
from annotate.workspace import open_workspace
from bench.common import against_baseline, alternated, print_rows

REVIEWER = "rex"


def write_axb(path: Path, n: int) -> None:
    """`n` examples in pairs (both directions of a minimal edit), AX-b's layout."""
    with path.open("w") as out:
        for i in range(n // 2):
            one = f"Person {i} painted the fence before the rain came."
            other = f"Person {i} did not paint the fence before the rain came."
            for j, (a, b) in enumerate(((one, other), (other, one))):
                row = {"idx": str(2 * i + j), "label": "not_entailment", "logic": "Negation"}
                out.write(json.dumps({**row, "sentence1": a, "sentence2": b}) + "\n")


def measure(size: int, rounds: int, folder: Path) -> list[tuple[str, str]]:
    engine = open_workspace(f"sqlite:///{folder}/review-{size}.db", create=True).engine
    write_axb(folder / f"axb-{size}.jsonl", size)
    import_diagnostic(engine, "diag", folder / f"axb-{size}.jsonl", "cora")
    for _ in range(size // 10):
        found = review.next_for_review(engine, "diag", REVIEWER)
        assert found is not None
        review.submit_review(engine, "diag", REVIEWER, found.id, "not_entailment", ["Negation"])

    def two_reads() -> None:
        review.next_for_review(engine, "diag", REVIEWER)
        review.review_progress(engine, "diag", REVIEWER)

    def one_read() -> None:
        review.next_with_progress(engine, "diag", REVIEWER)

    times = alternated({"base": two_reads, "ours": one_read}, rounds)
    engine.dispose()
    return against_baseline(
        f"{size} examples",
        ("next_for_review + review_progress", times["base"]),
        ("next_with_progress", times["ours"]),
        "one read/baseline",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,4000")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-review-") as folder:
        for size in (int(s) for s in args.sizes.split(",")):
            rows += measure(size, args.rounds, Path(folder))
    print_rows("Curation review: the next example and the progress after a submission", rows)


if __name__ == "__main__":
    main()
