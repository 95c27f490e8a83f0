"""Crowd studies for engine tests: an RTE study with platform settings, and workers who answer
right or wrong on purpose (the gold is read from the store, never shown to a session)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlmodel import Session

from annotate.protocol import crowd
from annotate.protocol.crowd_config import CrowdConfig, with_codes
from annotate.protocol.session import AnnotatorSession, ItemView
from annotate.store.models import Item
from tests.engine_helpers import rte_study

STUDY_A = "a" * 23 + "1"
STUDY_B = "b" * 23 + "2"
CODES = {
    "completed": "DONE1234",
    "screened_out": "SCREEN99",
    "study_full": "FULL0000",
    "no_consent": "NOCONS11",
    "training_done": "TRAINED7",
    "not_admitted": "NOTADM55",
}


def pid(n: int) -> str:
    """A well-formed Prolific participant id (24 hex characters)."""
    return f"{n:024x}"


def crowd_study(engine, tmp_path: Path, *, crowd_settings: dict[str, Any] | None = None, **kw):
    """An RTE study (6 training items, 20 test items, threshold 0.5 by default) on Prolific."""
    ctx = rte_study(engine, tmp_path, **kw)
    settings = {"platform": "prolific", "study_ids": [STUDY_A], "codes": CODES}
    settings.update(crowd_settings or {})
    crowd.set_config(engine, ctx.study.name, with_codes(CrowdConfig.model_validate(settings)))
    return ctx


def short_study(engine, tmp_path: Path, **crowd_settings: Any):
    """A study a worker walks through in a test: two training items (threshold 0: every
    worker passes), then its three test items."""
    return crowd_study(
        engine, tmp_path, train=2, test=3, gate_threshold=0.0, crowd_settings=crowd_settings
    )


def batch_study(engine, tmp_path: Path, **crowd_settings: Any):
    """A study whose whole way can be walked in a test: two training items (threshold 0: every
    worker passes), a batch of 2 of its 6 test items, then an exit survey."""
    survey = [{"name": "remarks", "prompt": "Anything to tell us?"}]
    return crowd_study(
        engine,
        tmp_path,
        train=2,
        test=6,
        gate_threshold=0.0,
        max_test_items_per_annotator=2,
        crowd_settings={"survey": survey, **crowd_settings},
    )


def prolific_query(n: int, study_id: str = STUDY_A) -> dict[str, str]:
    return {"PROLIFIC_PID": pid(n), "STUDY_ID": study_id, "SESSION_ID": f"{n + 500:024x}"}


def gold(engine, item: ItemView) -> Any:
    with Session(engine) as session:
        return session.get(Item, item.item_id).gold  # type: ignore[union-attr]


def wrong(value: Any) -> str:
    return "not_entailment" if value == "entailment" else "entailment"


def arrive(engine, study: str, n: int, study_id: str = STUDY_A) -> AnnotatorSession:
    """Worker n arrives by the Prolific link: their session, attached to the new visit."""
    ctx = crowd.load_study(engine, study)
    arrival = crowd.enter_by_link(engine, study, crowd.parse_link(ctx, prolific_query(n, study_id)))
    session = AnnotatorSession.open(engine, study, arrival.annotator)
    session.attach_window(arrival.visit_id)
    return session


def train(engine, session: AnnotatorSession, *, right: bool = True) -> None:
    while (item := session.next_item()) is not None and item.phase == "training":
        truth = gold(engine, item)
        session.submit(item, truth if right else wrong(truth))


def label_test(session: AnnotatorSession) -> int:
    n = 0
    while (item := session.next_item()) is not None:
        session.submit(item, "entailment")
        n += 1
    return n
