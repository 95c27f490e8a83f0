"""Build large synthetic studies straight through SQLAlchemy Core (fast), in the real schema."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import Engine, func, insert, select, text

from annotate.store.models import (
    Annotator,
    Dataset,
    GateDecision,
    Item,
    Label,
    Study,
    StudyItem,
    utcnow,
)
from annotate.workspace import open_workspace

CHUNK = 20_000


def _chunks(rows, size: int = CHUNK):
    batch = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def build_study(
    path: str,
    n_items: int,
    *,
    k: int = 5,
    complete: int = 0,
    annotators: int = 5,
    name: str = "bench",
    protocol: dict | None = None,
    seed: int = 1,
) -> Engine:
    """A superglue/rte study with `n_items` test items, the first `complete` of which already
    have k labels from `annotators` admitted annotators (labels rotate over them). Labels are
    realistic: each annotator is right with their own accuracy (0.70 to 0.95, spread over the
    annotators), drawn with `seed`, so agreement is defined and few items look like gold
    errors."""
    import numpy as np

    from annotate import specs

    ws = open_workspace(path, create=True)
    engine = ws.engine
    now = utcnow()
    proto = (
        protocol
        or specs.load_protocol("quick")
        .effective(None, {"annotators_per_item": k, "test_sample": n_items, "training_items": 0})
        .model_dump()
    )
    with engine.begin() as conn:
        dataset_id = conn.execute(
            insert(Dataset).values(
                task="superglue/rte",
                split="test",
                path="bench",
                sha256=f"bench-{name}",
                n_items=n_items,
                detail={"labelled": 1},
                imported_at=now,
            )
        ).inserted_primary_key[0]
        first_item = None
        for batch in _chunks(
            {
                "dataset_id": dataset_id,
                "position": i,
                "source_id": str(i),
                "fields": {
                    "premise": f"Premise number {i} is here.",
                    "hypothesis": f"Hypothesis {i}.",
                },
                "gold": "entailment" if i % 2 else "not_entailment",
                "tags": None,
            }
            for i in range(n_items)
        ):
            conn.execute(insert(Item.__table__), batch)
        first_item = conn.execute(
            select(func.min(Item.id)).where(Item.dataset_id == dataset_id)
        ).scalar_one()
        study_id = conn.execute(
            insert(Study).values(
                name=name,
                task="superglue/rte",
                protocol=proto,
                train_dataset_id=None,
                test_dataset_id=dataset_id,
                state="test",
                created_at=now,
            )
        ).inserted_primary_key[0]
        for batch in _chunks(
            {
                "study_id": study_id,
                "item_id": first_item + i,
                "phase": "test",
                "position": i,
                "n_labels": k if i < complete else 0,
                "remaining": 0 if i < complete else k,
            }
            for i in range(n_items)
        ):
            conn.execute(insert(StudyItem.__table__), batch)
        annotator_ids = []
        for a in range(annotators):
            aid = conn.execute(
                insert(Annotator).values(name=f"{name}-a{a}", created_at=now, failed_logins=0)
            ).inserted_primary_key[0]
            annotator_ids.append(aid)
            conn.execute(
                insert(GateDecision).values(
                    study_id=study_id,
                    annotator_id=aid,
                    admitted=True,
                    rule="bench",
                    n_items=0,
                    cohort=[],
                    decided_by="rule",
                    decided_at=now,
                )
            )
        shown = now - timedelta(days=1)
        accuracy = np.linspace(0.95, 0.70, annotators) if annotators > 1 else np.array([0.85])
        slot = (np.arange(complete)[:, None] + np.arange(k)[None, :]) % annotators
        gold_e = (np.arange(complete) % 2 == 1)[:, None]
        right = np.random.default_rng(seed).random((complete, k)) < accuracy[slot]
        says_e = (right == gold_e).tolist()
        for batch in _chunks(
            {
                "study_id": study_id,
                "item_id": first_item + i,
                "annotator_id": annotator_ids[(i + j) % annotators],
                "phase": "test",
                "value": "entailment" if says_e[i][j] else "not_entailment",
                "correct": None,
                "shown_at": shown,
                "answered_at": shown + timedelta(seconds=5),
                "flag": False,
                "comment": None,
                "revisions": 0,
            }
            for i in range(complete)
            for j in range(k)
        ):
            conn.execute(insert(Label.__table__), batch)
    if engine.dialect.name == "postgresql":
        # A freshly loaded table has no statistics: PostgreSQL would plan for empty tables
        # (autovacuum's analyze catches up later in a real store).
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("ANALYZE"))
    return engine


def admitted_session(engine: Engine, study: str, name: str):
    """A new annotator on `study` with a passing gate decision, as an engine session."""
    from sqlmodel import Session

    from annotate.protocol.session import AnnotatorSession
    from annotate.protocol.studies import load_study

    ctx = load_study(engine, study)
    with Session(engine) as s:
        a = Annotator(name=name)
        s.add(a)
        s.flush()
        s.add(
            GateDecision(
                study_id=ctx.id,
                annotator_id=a.id,
                admitted=True,
                rule="bench",
                decided_by="rule",
                decided_at=utcnow(),
            )
        )
        s.commit()
        s.refresh(a)
        s.expunge(a)
    return AnnotatorSession(engine, ctx, a)
