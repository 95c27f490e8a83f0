"""Build small studies for engine tests (no screen): in a store, or in memory for the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from annotate import specs
from annotate.formats.importer import import_file
from annotate.protocol.studies import StudyContext, create_study
from annotate.report.data.loading import ITEM_COLUMNS, LABEL_COLUMNS, StudyData

WORDS = ["harbor", "lantern", "orchard", "ledger", "meadow", "quarry", "signal", "thimble"]


def rte_rows(n: int, start: int = 0) -> list[dict[str, Any]]:
    """Original RTE-shaped items with alternating gold labels."""
    rows = []
    for i in range(start, start + n):
        word = WORDS[i % len(WORDS)]
        rows.append(
            {
                "premise": f"The {word} near gate {i} was repaired last spring.",
                "hypothesis": f"Gate {i} has a {word} nearby.",
                "label": "entailment" if i % 2 == 0 else "not_entailment",
                "idx": i,
            }
        )
    return rows


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def rte_study(
    engine,
    tmp_path: Path,
    *,
    name: str = "pilot",
    train: int = 6,
    test: int = 20,
    protocol: str = "quick",
    test_split: str = "test",
    **overrides: Any,
) -> StudyContext:
    """An RTE study: `train` training items, `test` test items (idx from 1000) from a file of
    `test_split` (a study on validation items: `dev`)."""
    spec = specs.load_task("superglue/rte")
    dev = import_file(engine, spec, write_jsonl(tmp_path / "rte" / "val.jsonl", rte_rows(train)))
    tst = import_file(
        engine,
        spec,
        write_jsonl(tmp_path / "rte" / "test.jsonl", rte_rows(test, 1000)),
        split=test_split,
    )
    settings = {"training_items": train, "gate_min_items": train, "test_sample": test, **overrides}
    return create_study(
        engine,
        name,
        "superglue/rte",
        protocol,
        train_dataset_id=dev.dataset_id,
        test_dataset_id=tst.dataset_id,
        overrides=settings,
    )


def catch_study(engine, tmp_path: Path, name: str = "c", **overrides: Any) -> StudyContext:
    """An RTE study with catch items: 40 dev items (all of them training items, so they are
    the catch pool too), 40 test items, a gate threshold of 0.6 and catch_rate 0.25."""
    settings = {"gate_threshold": 0.6, "catch_rate": 0.25, **overrides}
    return rte_study(engine, tmp_path, name=name, train=40, test=40, **settings)


RTE_CLASSES = ("entailment", "not_entailment")


def rte_answers_study(
    gold: np.ndarray,
    right: np.ndarray,
    who: np.ndarray,
    *,
    name: str = "sim",
    seconds: float = 5.0,
    task: str = "superglue/rte",
    pair_id: list[str] | None = None,
) -> StudyData:
    """A complete RTE study in memory, for the report without a store (simulated studies).

    Item i (of `len(gold)`) has gold label `gold[i]` and is answered by annotators
    `who[i, 0], who[i, 1], ...` (whole numbers, named "a0", "a1", ...); answer j is the gold
    label where `right[i, j]` and the other class where not. `right` and `who` have one row
    per item and one column per answer; every answer took `seconds`. Protocol: superglue-2019.
    Draw `gold`, `right` and `who` from the test's own seeded generator. `task`: another task
    with RTE's two classes (AX-g, its minimal pairs given as `pair_id` per item)."""
    spec = specs.load_task(task)
    protocol = specs.load_protocol("superglue-2019").effective(spec.name, {})
    n, k = right.shape
    other = {RTE_CLASSES[0]: RTE_CLASSES[1], RTE_CLASSES[1]: RTE_CLASSES[0]}
    values = [g if r else other[g] for g, row in zip(gold, right, strict=True) for r in row]
    items = pd.DataFrame(
        {
            "item_id": np.arange(n),
            "source_id": [str(i) for i in range(n)],
            "position": np.arange(n),
            "gold": list(gold),
            "tags": [None] * n,
            "pair_id": [None] * n if pair_id is None else list(pair_id),
        }
    )[ITEM_COLUMNS]
    labels = pd.DataFrame(
        {
            "item_id": np.repeat(np.arange(n), k),
            "source_id": [str(i) for i in np.repeat(np.arange(n), k)],
            "annotator": pd.Categorical([f"a{j}" for j in np.asarray(who).ravel()]),
            "value": values,
            "seconds": np.full(n * k, float(seconds)),
        }
    )[LABEL_COLUMNS]
    return StudyData(
        study_id=1,
        name=name,
        state="complete",
        spec=spec,
        protocol=protocol,
        settings=protocol.model_dump(),
        items=items,
        labels=labels,
    )


def disk_syncing_in(monkeypatch, seconds: float) -> None:
    """The store's disk, as a server process measures it (store/sync_speed.py), taking
    `seconds` per sync: each sync is made, and the clock that times it moves by `seconds`."""
    from annotate.store import sync_speed

    clock = [0.0]
    real = sync_speed.SYNC

    def sync(fd: int) -> None:
        real(fd)
        clock[0] += seconds

    monkeypatch.setattr(sync_speed, "SYNC", sync)
    monkeypatch.setattr(sync_speed, "perf_counter", lambda: clock[0])
