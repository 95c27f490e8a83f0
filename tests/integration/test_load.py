"""Load: 10 annotator processes on one store, 500 test items, k = 5, on SQLite and on
PostgreSQL. Every item ends with exactly 5 labels from 5 distinct annotators, no process sees an
error, and `annotate check` finds nothing wrong with the store afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from sqlmodel import Session, select

from annotate.store.models import Label, StudyItem
from annotate.workspace import open_workspace
from tests.engine_helpers import rte_study

pytestmark = pytest.mark.slow

PROCESSES = 10
ITEMS = 500
K = 5
TIMEOUT_S = 600

WORKER = """
import json, sys, time
from annotate.protocol.session import AnnotatorSession, ItemTaken, Phase
from annotate.workspace import open_workspace

url, name = sys.argv[1], sys.argv[2]
ws = open_workspace(url)
s = AnnotatorSession.open(ws.engine, "load", name, create_annotator=True)
while s.phase() is Phase.TRAINING:
    s.submit(s.next_item(), "entailment")
labels = taken = 0
start = time.perf_counter()
while (item := s.next_item()) is not None:
    try:
        s.submit(item, "entailment" if item.item_id % 2 else "not_entailment")
        labels += 1
    except ItemTaken:
        taken += 1
print(json.dumps({"labels": labels, "taken": taken, "seconds": time.perf_counter() - start}))
"""


def test_ten_processes_fill_500_items_with_exactly_k_labels(
    tmp_path: Path, store_url: str, backend: str
):
    ws = open_workspace(store_url, create=True)
    rte_study(
        ws.engine,
        tmp_path,
        name="load",
        train=2,
        test=ITEMS,
        annotators_per_item=K,
        gate_threshold=0.0,
    )
    ws.engine.dispose()
    start = time.perf_counter()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, store_url, f"worker{i:02d}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(PROCESSES)
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=TIMEOUT_S)
        assert p.returncode == 0, err
        assert "Traceback" not in err and "error" not in err.lower(), err
        results.append(json.loads(out.strip().splitlines()[-1]))
    elapsed = time.perf_counter() - start
    print(f"\n[{backend}] {PROCESSES} processes, {ITEMS} items x {K}: {elapsed:.1f} s")

    assert sum(r["taken"] for r in results) == 0  # no lease expired, nothing was lost
    assert sum(r["labels"] for r in results) == ITEMS * K
    with Session(ws.engine) as s:
        labels = s.exec(select(Label).where(Label.phase == "test")).all()
        counters = s.exec(select(StudyItem.n_labels).where(StudyItem.phase == "test")).all()
    per_item = Counter(label.item_id for label in labels)
    assert len(per_item) == ITEMS and set(per_item.values()) == {K}
    assert len({(lab.item_id, lab.annotator_id) for lab in labels}) == len(labels)
    assert counters == [K] * ITEMS

    check = subprocess.run(
        [sys.executable, "-m", "annotate", "--db", store_url, "check"],
        capture_output=True,
        text=True,
        env={**os.environ, "ANNOTATE_DB": ""},
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "no violation" in " ".join(check.stdout.split())
    ws.engine.dispose()
