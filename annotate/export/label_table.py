"""A study's labels in long format, one row per label: the input `annotate agreement` reads, and
what a researcher shares beside a paper.

`item_id` is the item's id in its source file and `value` the label as the source data writes
it (BoolQ `true`, COPA `1`, STS-B `4.000`); a MultiRC answer judges each candidate answer, so
it becomes one row per candidate named `question/answer`, the unit the report's agreement is
computed over. CB's annotators answer on a 7-point scale: `value` is the class it collapses to
(the report's nominal agreement) and an extra `answer` column keeps the point (ordinal α).

`excluded` marks the labels of an item the researcher excluded from scoring and agreement
(`annotate flags exclude`): the export keeps them, so the file is complete, and says which they
are. With `with_text` each row also carries the item's fields (its text, as the source file
has it; a field whose name is taken by a label column is written `item_NAME`) and its gold.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, select
from sqlmodel import Session

from annotate import specs
from annotate.export.human_answers import numeric_key, source_value
from annotate.progress_hook import ProgressHook, silent
from annotate.protocol.flags import excluded_items
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
    "excluded",
]
PHASES = ("training", TEST_PHASE, "catch", "refresher")
"""Every phase a label can have, in the export's order (`--phase all`)."""


@dataclass
class LabelTable:
    columns: list[str]
    rows: list[dict[str, Any]]


PROGRESS_EVERY = 5_000
"""Rows between two calls of the progress hook."""


def _utc(moment: datetime) -> datetime:
    """Stored times are UTC; SQLite gives them back without a zone."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _timestamp(moment: datetime) -> str:
    return _utc(moment).isoformat(timespec="microseconds")


def _cell(value: Any) -> Any:
    """A field as one cell: text and numbers as they are, lists and objects as JSON text."""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value


def text_columns(spec: specs.TaskSpec) -> list[tuple[str, str]]:
    """(field name, column name) of the item's fields in a `with_text` export, then gold."""
    taken = set(LABEL_COLUMNS) | {"answer", "gold"}
    return [(f.name, f"item_{f.name}" if f.name in taken else f.name) for f in spec.fields]


def label_table(
    engine: Engine,
    study_name: str,
    phases: tuple[str, ...] = (TEST_PHASE,),
    *,
    with_text: bool = False,
    progress: ProgressHook | None = None,
) -> LabelTable:
    """The labels of `phases` of a study, training before test, then by the item's place in
    its source file, then by annotator name: the same store gives the same rows."""
    study = find_study(engine, study_name)
    spec = specs.study_task(study.task, study.task_spec, origin=f"study {study_name!r}")
    assert study.id is not None
    with Session(engine) as session:
        excluded = set(excluded_items(session, study.id))
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
                Item.id,
                Item.fields,
                Item.gold,
            )
            .join(Item, Item.id == Label.item_id)
            .join(Annotator, Annotator.id == Label.annotator_id)
            .where(Label.study_id == study.id, Label.phase.in_(phases))
        ).all()
    rank = {p: i for i, p in enumerate(PHASES)}
    rows = sorted(rows, key=lambda r: (rank.get(r[0], len(rank)), r[0], r[2], r[3], r[4]))
    with_answer = bool(spec.answer_scale)
    fields = text_columns(spec) if with_text else []
    columns = LABEL_COLUMNS + (["answer"] if with_answer else [])
    if with_text:
        columns = columns[:2] + [c for _, c in fields] + ["gold"] + columns[2:]
    out = []
    tell = progress or silent
    tell("export: labels", 0, len(rows))
    for n, row_values in enumerate(rows, 1):
        if n % PROGRESS_EVERY == 0:
            tell("export: labels", n, len(rows))
        phase, source_id, _, _, annotator, value, shown, answered, flag, comment = row_values[:10]
        item_id, item_fields, gold = row_values[10:]
        base = {
            "study": study.name,
            "annotator": annotator,
            "phase": phase,
            "shown_at": _timestamp(shown),
            "answered_at": _timestamp(answered),
            "seconds": round((_utc(answered) - _utc(shown)).total_seconds(), 3),
            "flag": bool(flag),
            "comment": comment,
            "excluded": item_id in excluded,
        }
        if with_text:
            base.update({c: _cell((item_fields or {}).get(f)) for f, c in fields})
            base["gold"] = _cell(_gold_written(spec, gold))
        if spec.kind == "multi_answer" and isinstance(value, dict):
            for answer in sorted(value, key=lambda a: numeric_key(str(a))):
                extra = {}
                if with_text:
                    extra["gold"] = source_value(spec, (gold or {}).get(str(answer)))
                out.append(
                    {
                        **base,
                        "item_id": f"{source_id}/{answer}",
                        "value": source_value(spec, value[answer]),
                        **extra,
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
    tell("export: labels", len(rows), len(rows))
    return LabelTable(columns=columns, rows=out)


def _gold_written(spec: specs.TaskSpec, gold: Any) -> Any:
    """Gold as the source data writes it (ReCoRD: its list of answers)."""
    if gold is None or spec.kind == "multi_answer":
        return gold
    if spec.kind == "entity_choice" and isinstance(gold, list):
        return gold
    return source_value(spec, gold)
