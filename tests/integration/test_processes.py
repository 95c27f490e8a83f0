"""Several annotator processes on one store, and a process killed with kill -9: on SQLite and on
PostgreSQL (the `store_url` fixture runs each test once per backend)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from sqlmodel import Session, select

from annotate.protocol.session import AnnotatorSession
from annotate.store.models import Label, StudyItem
from annotate.workspace import open_workspace
from tests.engine_helpers import rte_study

pytestmark = pytest.mark.slow


def test_five_processes_fill_100_items_with_exactly_5_distinct_labels(
    tmp_path: Path, store_url: str
):
    ws = open_workspace(store_url, create=True)
    rte_study(ws.engine, tmp_path, name="crowd", train=4, test=100, annotators_per_item=5)
    env = {**os.environ, "ANNOTATE_DB": store_url}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "annotate",
                "simulate",
                "crowd",
                "--annotators",
                "1",
                "--accuracy",
                "0.9",
                "--seed",
                str(i),
                "--prefix",
                f"p{i}-",
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(5)
    ]
    for p in procs:
        _out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert "Traceback" not in err
    with Session(ws.engine) as s:
        labels = s.exec(select(Label).where(Label.phase == "test")).all()
        counts = [si.n_labels for si in s.exec(select(StudyItem).where(StudyItem.phase == "test"))]
    per_item = Counter(label.item_id for label in labels)
    assert len(per_item) == 100 and set(per_item.values()) == {5}
    assert all(len({lab.annotator_id for lab in labels if lab.item_id == i}) == 5 for i in per_item)
    assert counts == [5] * 100


WORKER = """
import sys
from annotate.protocol.session import AnnotatorSession, Phase
from annotate.workspace import open_workspace
ws = open_workspace(sys.argv[1])
s = AnnotatorSession.open(ws.engine, "crash", "ana", create_annotator=True)
while s.phase() is Phase.TRAINING:
    s.submit(s.next_item(), "entailment")
while (item := s.next_item()) is not None:
    s.submit(item, "entailment")
    print(item.item_id, flush=True)   # acknowledged only after the commit
"""


def test_kill_9_loses_nothing_acknowledged_and_resumes_at_the_next_item(
    tmp_path: Path, store_url: str
):
    ws = open_workspace(store_url, create=True)
    rte_study(
        ws.engine,
        tmp_path,
        name="crash",
        train=2,
        test=400,
        annotators_per_item=1,
        gate_threshold=0.0,
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", WORKER, store_url], stdout=subprocess.PIPE, text=True
    )
    acknowledged = []
    assert proc.stdout is not None
    while len(acknowledged) < 25:
        line = proc.stdout.readline()
        assert line, "worker ended early"
        acknowledged.append(int(line))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with Session(ws.engine) as s:
        stored = set(s.exec(select(Label.item_id).where(Label.phase == "test")))
    assert set(acknowledged) <= stored
    resumed = AnnotatorSession.open(ws.engine, "crash", "ana").next_item()
    assert resumed is not None and resumed.item_id not in stored
