"""A study's labels in long format, one row per label: the input `annotate agreement` reads, and
what a researcher shares beside a paper.

`item_id` is the item's id in its source file and `value` the label as the source data writes
it (BoolQ `true`, COPA `1`, STS-B `4.000`); a MultiRC answer judges each candidate answer, so
it becomes one row per candidate named `question/answer`, the unit the report's agreement is
computed over. CB's annotators answer on a 7-point scale: `value` is the class it collapses to
(the report's nominal agreement) and an extra `answer` column keeps the point (ordinal α).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, String, Text, case, select, type_coerce

from annotate import specs
from annotate.export.human_answers import numeric_key, source_value
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


def label_table(
    engine: Engine, study_name: str, phases: tuple[str, ...] = (TEST_PHASE,)
) -> LabelTable:
    """The labels of `phases` of a study as a list (see `label_rows`)."""
    columns, rows = label_rows(engine, study_name, phases)
    return LabelTable(columns=columns, rows=list(rows))


STREAM_ROWS = 5000
"""Rows fetched from the store at a time while an export streams."""


def label_rows(
    engine: Engine, study_name: str, phases: tuple[str, ...] = (TEST_PHASE,)
) -> tuple[list[str], Iterator[dict[str, Any]]]:
    """(columns, rows): the labels of `phases` of a study, training before test, then by the
    item's place in its source file, then by annotator name: the same store gives the same
    rows. The rows are ordered by the store and streamed as they are read (constant memory:
    an export writes each row before the next is fetched)."""
    study = find_study(engine, study_name)
    spec = specs.study_task(study.task, study.task_spec, origin=f"study {study_name!r}")
    with_answer = bool(spec.answer_scale)
    columns = LABEL_COLUMNS + (["answer"] if with_answer else [])
    return columns, _rows(engine, study, spec, phases, with_answer)


def _rows(engine, study, spec, phases, with_answer) -> Iterator[dict[str, Any]]:
    rank = case({p: i for i, p in enumerate(PHASES)}, value=Label.phase, else_=len(PHASES))
    name = Annotator.name
    if engine.dialect.name == "postgresql":
        name = name.collate("C")  # code-point order, as SQLite and Python sort
    query = (
        select(
            Label.phase,
            Item.source_id,
            Annotator.name,
            # Raw stored text (SQLite): decoded once per distinct value, times sliced, not
            # parsed by SQLAlchemy row by row. PostgreSQL's driver gives objects either way.
            type_coerce(Label.value, Text),
            type_coerce(Label.shown_at, String),
            type_coerce(Label.answered_at, String),
            Label.flag,
            Label.comment,
        )
        .join(Item, Item.id == Label.item_id)
        .join(Annotator, Annotator.id == Label.annotator_id)
        .where(Label.study_id == study.id, Label.phase.in_(phases))
        .order_by(rank, Label.phase, Item.dataset_id, Item.position, name, Label.id)
    )
    written: dict[Any, tuple[Any, Any]] = {}
    with engine.connect() as conn:
        result = conn.execution_options(stream_results=True, yield_per=STREAM_ROWS).execute(query)
        for phase, source_id, annotator, raw, shown, answered, flag, comment in result:
            value = json.loads(raw) if isinstance(raw, str) else raw
            shown_text, answered_text = _stamp(shown), _stamp(answered)
            base = {
                "study": study.name,
                "annotator": annotator,
                "phase": phase,
                "shown_at": shown_text,
                "answered_at": answered_text,
                "seconds": round((_moment(answered) - _moment(shown)).total_seconds(), 3),
                "flag": bool(flag),
                "comment": comment,
            }
            if spec.kind == "multi_answer" and isinstance(value, dict):
                for answer in sorted(value, key=lambda a: numeric_key(str(a))):
                    yield {
                        **base,
                        "item_id": f"{source_id}/{answer}",
                        "value": source_value(spec, value[answer]),
                    }
                continue
            key = raw if isinstance(raw, str) else json.dumps(raw)
            if key not in written:
                written[key] = _written(spec, value)
            value_written, point = written[key]
            row = {**base, "item_id": str(source_id), "value": value_written}
            if with_answer:
                row["answer"] = point
            yield row


def _written(spec, value: Any) -> tuple[Any, Any]:
    """(value column, answer column) of a stored label value."""
    if spec.kind == "classification":
        value_written = source_value(spec, spec.collapse(str(value)))
    else:
        value_written = source_value(spec, value)
    return value_written, (int(value) if str(value).isdigit() else value)


def _moment(stored: Any) -> datetime:
    return _utc(datetime.fromisoformat(stored) if isinstance(stored, str) else stored)


def _stamp(stored: Any) -> str:
    """ISO 8601 in UTC with microseconds; SQLite's stored text sliced when it has that form."""
    if isinstance(stored, str) and len(stored) == 26 and stored[10] == " ":
        return f"{stored[:10]}T{stored[11:]}+00:00"
    return _timestamp(_moment(stored))
