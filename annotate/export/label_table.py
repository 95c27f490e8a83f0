"""A study's labels in long format, one row per label: the input `annotate agreement` reads, and
what a researcher shares beside a paper.

`item_id` is the item's id in its source file and `value` the label as the source data writes
it (BoolQ `true`, COPA `1`, STS-B `4.000`); a MultiRC answer judges each candidate answer, so
it becomes one row per candidate named `question/answer`, the unit the report's agreement is
computed over. CB's annotators answer on a 7-point scale: `value` is the class it collapses to
(the report's nominal agreement) and an extra `answer` column keeps the point (ordinal α).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, select

from annotate import specs
from annotate.export.human_answers import source_value
from annotate.report.data.loading import TEST_PHASE, find_study
from annotate.store.models import Annotator, Item, Label

LABEL_COLUMNS = [
    "study",
    "item_id",
    "annotator",
    "phase",
    "value",
    "shown_at",
    "answered_at",
    "seconds",
    "flag",
    "comment",
]
PHASES = ("training", TEST_PHASE)


@dataclass
class LabelTable:
    columns: list[str]
    rows: list[dict[str, Any]]


def _utc(moment: datetime) -> datetime:
    """Stored times are UTC; SQLite gives them back without a zone."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _timestamp(moment: datetime) -> str:
    return _utc(moment).isoformat(timespec="microseconds")


def _numeric_key(text: str) -> tuple[int, int, str]:
    return (0, int(text), "") if text.lstrip("-").isdigit() else (1, 0, text)


def label_table(
    engine: Engine, study_name: str, phases: tuple[str, ...] = (TEST_PHASE,)
) -> LabelTable:
    """The labels of `phases` of a study, training before test, then by the item's place in
    its source file, then by annotator name: the same store gives the same rows."""
    study = find_study(engine, study_name)
    spec = specs.study_task(study.task, study.task_spec, origin=f"study {study_name!r}")
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                Label.phase,
                Item.source_id,
                Item.dataset_id,
                Item.position,
                Annotator.name,
                Label.value,
                Label.shown_at,
                Label.answered_at,
                Label.flag,
                Label.comment,
            )
            .join(Item, Item.id == Label.item_id)
            .join(Annotator, Annotator.id == Label.annotator_id)
            .where(Label.study_id == study.id, Label.phase.in_(phases))
        ).all()
    rank = {p: i for i, p in enumerate(PHASES)}
    rows = sorted(rows, key=lambda r: (rank.get(r[0], len(rank)), r[0], r[2], r[3], r[4]))
    with_answer = bool(spec.answer_scale)
    columns = LABEL_COLUMNS + (["answer"] if with_answer else [])
    out = []
    for phase, source_id, _, _, annotator, value, shown, answered, flag, comment in rows:
        base = {
            "study": study.name,
            "annotator": annotator,
            "phase": phase,
            "shown_at": _timestamp(shown),
            "answered_at": _timestamp(answered),
            "seconds": round((_utc(answered) - _utc(shown)).total_seconds(), 3),
            "flag": bool(flag),
            "comment": comment,
        }
        if spec.kind == "multi_answer" and isinstance(value, dict):
            for answer in sorted(value, key=lambda a: _numeric_key(str(a))):
                out.append(
                    {
                        **base,
                        "item_id": f"{source_id}/{answer}",
                        "value": source_value(spec, value[answer]),
                    }
                )
            continue
        if spec.kind == "classification":
            value_written = source_value(spec, spec.collapse(str(value)))
        else:
            value_written = source_value(spec, value)
        row = {**base, "item_id": str(source_id), "value": value_written}
        if with_answer:
            row["answer"] = int(value) if str(value).isdigit() else value
        out.append(row)
    return LabelTable(columns=columns, rows=out)
