"""What refitting Dawid–Skene and MACE per bootstrap replicate costs the report, by study size:
the report built with the refit (`report.aggregation.refit`) against the same report with the
fit held fixed, alternated in one session (ratios, not absolute times, are the result).

    python -m bench.bench_refit [--sizes 1000,2500,5000,10000,20000] [--rounds 1]

Studies are built in memory as bench_report builds its stores (MNLI, 3 classes, 5 labels per
item from a pool of 50 annotators of accuracy 0.55 to 0.95) and reported with the default
1000 bootstrap replicates. `refit.REFIT_LABELS` is the largest size whose ratio stays small.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench.common import print_rows

TASK = "glue/mnli-m"
CLASSES = ["entailment", "neutral", "contradiction"]
N_ANNOTATORS = 50
PER_ITEM = 5


def study(labels: int, seed: int = 1):
    import pandas as pd

    from annotate import specs
    from annotate.report.data.loading import ITEM_COLUMNS, LABEL_COLUMNS, StudyData

    spec = specs.load_task(TASK)
    protocol = specs.load_protocol("superglue-2019").effective(spec.name, {})
    items = labels // PER_ITEM
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 3, items)
    skill = np.linspace(0.55, 0.95, N_ANNOTATORS)
    who = np.argsort(rng.random((items, N_ANNOTATORS)), axis=1)[:, :PER_ITEM]
    right = rng.random((items, PER_ITEM)) < skill[who]
    wrong = (gold[:, None] + rng.integers(1, 3, (items, PER_ITEM))) % 3
    value = np.where(right, gold[:, None], wrong)
    names = np.array(CLASSES)
    item_frame = pd.DataFrame(
        {
            "item_id": np.arange(items),
            "source_id": [str(i) for i in range(items)],
            "position": np.arange(items),
            "gold": list(names[gold]),
            "tags": [None] * items,
            "pair_id": [None] * items,
        }
    )[ITEM_COLUMNS]
    label_frame = pd.DataFrame(
        {
            "item_id": np.repeat(np.arange(items), PER_ITEM),
            "source_id": [str(i) for i in np.repeat(np.arange(items), PER_ITEM)],
            "annotator": pd.Categorical([f"annotator-{a:02d}" for a in who.ravel()]),
            "value": list(names[value.ravel()]),
            "seconds": rng.uniform(2, 30, items * PER_ITEM),
        }
    )[LABEL_COLUMNS]
    return StudyData(
        study_id=1,
        name="bench",
        state="complete",
        spec=spec,
        protocol=protocol,
        settings=protocol.model_dump(),
        items=item_frame,
        labels=label_frame,
    )


def report_seconds(data, refit_on: bool) -> float:
    from annotate.report.aggregation import refit
    from annotate.report.build import build_report

    limit = refit.REFIT_LABELS
    refit.REFIT_LABELS = 10**9 if refit_on else 0
    try:
        start = time.perf_counter()
        build_report(data)
        return time.perf_counter() - start
    finally:
        refit.REFIT_LABELS = limit


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,2500,5000,10000,20000")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    from annotate.report.aggregation import refit

    report_seconds(study(500), True)  # imports and first calls before the clock
    for labels in [int(s) for s in args.sizes.split(",")]:
        data = study(labels)
        fixed, refitted = [], []
        for _ in range(args.rounds):
            fixed.append(report_seconds(data, False))
            refitted.append(report_seconds(data, True))
        f, r = min(fixed), min(refitted)
        print_rows(
            f"report at {labels:,} labels (refit limit now {refit.REFIT_LABELS:,})",
            [
                ("fit held fixed (baseline)", f"{f:.2f} s"),
                ("refitted per replicate", f"{r:.2f} s"),
                ("ratio refitted / fixed", f"{r / f:.2f}x"),
            ],
        )


if __name__ == "__main__":
    main()
