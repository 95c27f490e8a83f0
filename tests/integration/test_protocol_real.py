"""Issue 3 acceptance on real SuperGLUE RTE: training from val, the test sample from test,
seven simulated annotators through the median gate (skipped when ../shared is absent)."""

from __future__ import annotations

from collections import defaultdict

import pytest
from sqlmodel import Session, select

from annotate.store.models import Annotator, GateDecision, Label
from tests.conftest import shared_file

pytestmark = pytest.mark.slow


def test_real_rte_study_with_seven_simulated_annotators(cli, workspace):
    val = shared_file("superglue/RTE/val.jsonl")
    test = shared_file("superglue/RTE/test.jsonl")
    assert cli("import", "superglue/rte", val).code == 0
    assert cli("import", "superglue/rte", test).code == 0
    ids = {d["split"]: d["id"] for d in cli("datasets", "--format", "json").json()}
    created = cli(
        "study",
        "create",
        "rte-real",
        "--task",
        "superglue/rte",
        "--protocol",
        "superglue-2019",
        "--train",
        ids["dev"],
        "--test",
        ids["test"],
    )
    assert created.code == 0, created.stderr
    ran = cli(
        "simulate",
        "rte-real",
        "--annotators",
        "7",
        "--accuracy",
        "0.85",
        "--seed",
        "2",
        "--close-gate",
    )
    assert ran.code == 0, ran.stderr
    status = cli("status", "rte-real", "--format", "json").json()
    assert status["items_total"] == 100 and status["labels_per_item"] == {"5": 100}
    with Session(workspace.engine) as s:
        names = {a.id: a.name for a in s.exec(select(Annotator))}
        decisions = {names[d.annotator_id]: d for d in s.exec(select(GateDecision))}
        labels = s.exec(select(Label).where(Label.phase == "test")).all()
    by_item = defaultdict(set)
    for label in labels:
        by_item[label.item_id].add(names[label.annotator_id])
    admitted = {n for n, d in decisions.items() if d.admitted}
    assert len(decisions) == 7 and all(d.rule == "median" for d in decisions.values())
    assert all(len(who) == 5 and who <= admitted for who in by_item.values())
    median = next(iter(decisions.values())).threshold
    for name, d in decisions.items():
        assert d.admitted == (d.score >= median and d.n_items >= 5)
        if not d.admitted:
            assert all(name not in who for who in by_item.values())
