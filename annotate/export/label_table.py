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
A study made by `import-labels` has a last column `raw_answer`: the answer as the file wrote
it (a slider's number) before `--values` mapped it to `value`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine, String, Text, case, exists, func, select, type_coerce
from sqlmodel import Session

from annotate import specs
from annotate.export.values import numeric_key, source_value
from annotate.formats.writers import TABLE_FLOAT_FORMAT, csv_cell, float_cell, neutralised
from annotate.progress_hook import ProgressHook, silent
from annotate.protocol.flags import excluded_items
from annotate.protocol.set_aside import SET_ASIDE
from annotate.protocol.standing import label_times_of
from annotate.protocol.studies import TEST as TEST_PHASE
from annotate.store import json_cells
from annotate.store.label_times import RECORDED
from annotate.store.models import Annotator, Item, Label
from annotate.store.queries import find_study, labels_of_study

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
LABEL_COLUMN_TYPES = {
    "study": "string",
    "item_id": "string",
    "annotator": "string",
    "phase": "string",
    "shown_at": "string",
    "answered_at": "string",
    "seconds": "float64",
    "flag": "bool_",
    "comment": "string",
    "excluded": "bool_",
}
"""The Parquet type of each fixed column (pyarrow's names): the same in every study's file."""
PHASES = ("training", TEST_PHASE, "catch", "refresher", SET_ASIDE)
"""Every phase a label can have, in the export's order (`--phase all`): SET_ASIDE, the test
labels of an annotator refused after admission (protocol/set_aside.py)."""


@dataclass
class LabelTable:
    columns: list[str]
    rows: list[dict[str, Any]]


PROGRESS_EVERY = 5_000
"""Rows between two calls of the progress hook."""

STREAM_ROWS = 5000
"""Rows fetched from the store at a time while an export streams."""


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
    """The labels of `phases` of a study as one list (`label_rows`, read whole)."""
    columns, rows = label_rows(engine, study_name, phases, with_text=with_text, progress=progress)
    return LabelTable(columns=columns, rows=list(rows))


def label_rows(
    engine: Engine,
    study_name: str,
    phases: tuple[str, ...] = (TEST_PHASE,),
    *,
    with_text: bool = False,
    progress: ProgressHook | None = None,
) -> tuple[list[str], Iterator[dict[str, Any]]]:
    """(columns, rows): the labels of `phases` of a study, training before test, then by the
    item's place in its source file, then by annotator name: the same store gives the same
    rows. The rows are ordered by the store and streamed as they are read (constant memory:
    an export writes each row before the next is fetched)."""
    columns, values = label_values(
        engine, study_name, phases, with_text=with_text, progress=progress
    )
    return columns, (dict(zip(columns, row, strict=True)) for row in values)


def label_cells(
    engine: Engine,
    study_name: str,
    phases: tuple[str, ...] = (TEST_PHASE,),
    *,
    with_text: bool = False,
    progress: ProgressHook | None = None,
) -> tuple[list[str], Iterator[list[str]]]:
    """`label_rows` as CSV cells in the columns' order (`writers.csv_cell` of each value):
    the streamed CSV export, which writes 500,000 rows, with no dict per row and each name,
    phase and value formatted once."""
    return label_values(
        engine, study_name, phases, with_text=with_text, progress=progress, as_cells=True
    )


def label_values(
    engine: Engine,
    study_name: str,
    phases: tuple[str, ...] = (TEST_PHASE,),
    *,
    with_text: bool = False,
    progress: ProgressHook | None = None,
    as_cells: bool = False,
) -> tuple[list[str], Iterator[list[Any]]]:
    """`label_rows` as lists of values in the columns' order (no dict per row); `as_cells`:
    as `label_cells`."""
    study = find_study(engine, study_name)
    spec = specs.study_task(study.task, study.task_spec, origin=f"study {study_name!r}")
    with_answer = bool(spec.answer_scale)
    fields = text_columns(spec) if with_text else []
    columns = LABEL_COLUMNS + (["answer"] if with_answer else [])
    if with_text:
        columns = columns[:2] + [c for _, c in fields] + ["gold"] + columns[2:]
    with_raw = _has_raw_answers(engine, study.id)
    if with_raw:
        columns = [*columns, RAW_COLUMN]
    rows = _rows(engine, study, spec, phases, with_answer, fields, progress, as_cells, with_raw)
    return columns, rows


RAW_COLUMN = "raw_answer"
"""The answer as an imported file wrote it (label.raw): the last column of an imported study."""


def _has_raw_answers(engine: Engine, study_id: int) -> bool:
    with engine.connect() as conn:
        return bool(
            conn.scalar(select(exists().where(Label.study_id == study_id, Label.raw.is_not(None))))
        )


def _rows(
    engine: Engine,
    study: Any,
    spec: specs.TaskSpec,
    phases: tuple[str, ...],
    with_answer: bool,
    fields: list[tuple[str, str]],
    progress: ProgressHook | None,
    as_cells: bool = False,
    with_raw: bool = False,
) -> Iterator[list[Any]]:
    """Each label's values in the order of `label_values`' columns (`as_cells`: their CSV
    cells; the common table's are made here, each distinct name, phase and value once)."""
    assert study.id is not None
    with Session(engine) as session:
        excluded = set(excluded_items(session, study.id))
        # Durations laid end to end from 1970 (store/label_times.py): no shown_at or
        # answered_at to give, only the seconds.
        dates = label_times_of(session, study.id) == RECORDED
    rank = case({p: i for i, p in enumerate(PHASES)}, value=Label.phase, else_=len(PHASES))
    # One phase: its rank is the same on every row, and sorting by it costs SQLite a second.
    by_phase = (rank, Label.phase) if len(phases) > 1 else ()
    name = Annotator.name
    if engine.dialect.name == "postgresql":
        name = name.collate("C")  # code-point order, as SQLite and Python sort
    with engine.connect() as conn:
        where = (labels_of_study(conn, study.id), Label.phase.in_(phases))
    # SQLite: the raw stored text, decoded once per distinct value, times sliced, not parsed by
    # SQLAlchemy row by row. PostgreSQL's driver decodes JSON and times itself.
    raw_text = engine.dialect.name == "sqlite"
    query = (
        select(
            Label.phase,
            Item.source_id,
            Annotator.name,
            type_coerce(Label.value, Text) if raw_text else Label.value,
            type_coerce(Label.shown_at, String) if raw_text else Label.shown_at,
            type_coerce(Label.answered_at, String) if raw_text else Label.answered_at,
            Label.flag,
            Label.comment,
            Item.id,
            *((Item.fields, Item.gold) if fields else ()),
            *((type_coerce(Label.raw, Text) if raw_text else Label.raw,) if with_raw else ()),
        )
        .join(Item, Item.id == Label.item_id)
        .join(Annotator, Annotator.id == Label.annotator_id)
        .where(*where)
        .order_by(*by_phase, Item.dataset_id, Item.position, name, Label.id)
    )
    tell = progress or silent
    study_name = study.name
    written: dict[Any, tuple[Any, Any]] = {}
    multi = spec.kind == "multi_answer"
    fast_cells = as_cells and not fields and not multi
    study_cell, no_comment = csv_cell(study_name), csv_cell(None)
    yes_no = (csv_cell(False), csv_cell(True))
    name_cells: dict[str, str] = {}  # names and phases: few distinct values, made once
    fromiso = datetime.fromisoformat
    last_source: Any = object()  # an item's labels come one after another: its cell once
    source_cell = ""

    with engine.connect() as conn:
        total = 0
        if progress is not None:  # one count, only when someone draws a bar
            total = int(conn.scalar(select(func.count(Label.id)).where(*where)) or 0)
            tell("export: labels", 0, total)
        if raw_text:  # SQLite's own cursor streams: no SQLAlchemy Row per label
            result = conn.execute(query)
            batches: Iterator[Sequence[Any]] = iter(
                lambda: result.cursor.fetchmany(STREAM_ROWS), []
            )
        else:  # a server-side cursor, read in batches
            result = conn.execution_options(stream_results=True, yield_per=STREAM_ROWS).execute(
                query
            )
            batches = result.partitions()
        texts = conn if raw_text else None
        n = 0
        try:
            for batch in batches:
                for row_values in batch:
                    n += 1
                    if progress is not None and n % PROGRESS_EVERY == 0:
                        tell("export: labels", n, total)
                    phase, source_id, annotator, raw, shown, answered, flag, comment, item_id = (
                        row_values[:9]
                    )
                    # SQLite's JSON column has numeric affinity: a number comes back a number
                    text = raw_text and isinstance(raw, str)
                    if fast_cells:
                        key = raw if text else json.dumps(raw, sort_keys=True)
                        known = written.get(key)
                        if known is None:
                            known = _written(spec, _json(raw, Label.value, texts))
                            known = written[key] = (csv_cell(known[0]), csv_cell(known[1]))
                        who = name_cells.get(annotator)
                        if who is None:
                            who = name_cells[annotator] = csv_cell(annotator)
                        when = name_cells.get(phase)
                        if when is None:
                            when = name_cells[phase] = csv_cell(phase)
                        if source_id != last_source:
                            last_source, source_cell = source_id, neutralised(str(source_id))
                        if (  # _times, inline for the usual stored form (a call per row less)
                            dates
                            and shown.__class__ is str
                            and answered.__class__ is str
                            and len(shown) == len(answered) == 26
                            and shown[10] == answered[10] == " "
                        ):
                            seconds = (fromiso(answered) - fromiso(shown)).total_seconds()
                            shown_cell = f"{shown[:10]}T{shown[11:]}+00:00"
                            answered_cell = f"{answered[:10]}T{answered[11:]}+00:00"
                            seconds_cell = TABLE_FLOAT_FORMAT % seconds
                        else:
                            shown_cell, answered_cell, seconds_cell = _times(shown, answered, dates)
                        row = [
                            study_cell,
                            source_cell,  # csv_cell of a text
                            who,
                            when,
                            known[0],
                            shown_cell,
                            answered_cell,
                            seconds_cell,
                            yes_no[bool(flag)],
                            no_comment if comment is None else csv_cell(comment),
                            yes_no[item_id in excluded],
                        ]
                        if with_answer:
                            row.append(known[1])
                        if with_raw:
                            row.append(csv_cell(_json(row_values[-1], Label.raw, texts)))
                        yield row
                        continue
                    unknown = shown is None or answered is None  # imported without times
                    times = [
                        None if unknown or not dates else _stamp(shown),
                        None if unknown or not dates else _stamp(answered),
                        None if unknown else round(_seconds(shown, answered), 3),
                        bool(flag),
                        comment,
                        item_id in excluded,
                    ]
                    if multi:
                        value = _json(raw, Label.value, texts)
                        if isinstance(value, dict):
                            answer_rows = _answer_rows(
                                spec,
                                study_name,
                                source_id,
                                annotator,
                                phase,
                                value,
                                times,
                                row_values[9:11] if fields else None,
                                fields,
                                texts,
                                with_answer,
                            )
                            yield from (
                                ([csv_cell(v) for v in r] for r in answer_rows)
                                if as_cells
                                else answer_rows
                            )
                            continue
                    key = raw if text else json.dumps(raw, sort_keys=True)
                    known = written.get(key)
                    if known is None:
                        known = written[key] = _written(spec, _json(raw, Label.value, texts))
                    row = [study_name, str(source_id)]
                    if fields:
                        row += _text_cells(spec, row_values[9:11], fields, texts)
                    row += [annotator, phase, known[0], *times]
                    if with_answer:
                        row.append(known[1])
                    if with_raw:
                        row.append(_json(row_values[-1], Label.raw, texts))
                    yield [csv_cell(v) for v in row] if as_cells else row
        finally:
            result.close()
        if progress is not None:
            tell("export: labels", total, total)


def _text_cells(
    spec: specs.TaskSpec,
    stored: Sequence[Any],
    fields: list[tuple[str, str]],
    texts: Connection | None,
) -> list[Any]:
    """The item's fields and its gold, as `with_text` adds them."""
    item_fields, gold = _json(stored[0], Item.fields, texts), _json(stored[1], Item.gold, texts)
    cells = [_cell((item_fields or {}).get(f)) for f, _ in fields]
    return [*cells, _cell(_gold_written(spec, gold))]


def _answer_rows(
    spec: specs.TaskSpec,
    study_name: str,
    source_id: Any,
    annotator: str,
    phase: str,
    value: dict[str, Any],
    times: list[Any],
    stored: Sequence[Any] | None,
    fields: list[tuple[str, str]],
    texts: Connection | None,
    with_answer: bool,
) -> Iterator[list[Any]]:
    """A MultiRC label's rows: one per candidate answer, named `question/answer`."""
    gold = _json(stored[1], Item.gold, texts) if stored is not None else None
    text = _text_cells(spec, stored, fields, texts) if stored is not None else []
    for answer in sorted(value, key=lambda a: numeric_key(str(a))):
        if text:
            text[-1] = source_value(spec, (gold or {}).get(str(answer)))
        row = [study_name, f"{source_id}/{answer}", *text, annotator, phase]
        row += [source_value(spec, value[answer]), *times]
        yield row + ([None] if with_answer else [])


def _json(value: Any, column: Any, texts: Connection | None) -> Any:
    """A JSON column read as raw text (SQLite: `texts` is the connection read on) decoded; the
    driver's value otherwise."""
    return json_cells.loads(value, column, texts) if texts and isinstance(value, str) else value


def _written(spec: specs.TaskSpec, value: Any) -> tuple[Any, Any]:
    """(value column, answer column) of a stored label value."""
    if spec.kind == "classification":
        value_written = source_value(spec, spec.collapse(str(value)))
    else:
        value_written = source_value(spec, value)
    return value_written, (int(value) if str(value).isdigit() else value)


def _times(shown: Any, answered: Any, dates: bool = True) -> tuple[str, str, str]:
    """The shown_at, answered_at and seconds cells of a label; SQLite's stored text sliced
    and parsed in one step where it has the usual form. Unknown times (a label imported from
    a file without them) are empty cells, never 0; `dates` False (a file of durations, laid
    end to end from 1970): the seconds alone."""
    if shown is None or answered is None:
        if not dates or (shown is None and answered is None):
            return "", "", ""
        # One side known (a clock time without a duration): that moment, no seconds
        return (
            "" if shown is None else _stamp(shown),
            "" if answered is None else _stamp(answered),
            "",
        )
    if not dates:
        return "", "", float_cell(round(_seconds(shown, answered), 3))
    if (
        shown.__class__ is str
        and answered.__class__ is str
        and len(shown) == len(answered) == 26
        and shown[10] == answered[10] == " "
    ):
        seconds = (datetime.fromisoformat(answered) - datetime.fromisoformat(shown)).total_seconds()
        # A finite float: its fixed-decimals cell is float_cell(round(seconds, 3))'s digits.
        return (
            f"{shown[:10]}T{shown[11:]}+00:00",
            f"{answered[:10]}T{answered[11:]}+00:00",
            TABLE_FLOAT_FORMAT % seconds,
        )
    return _stamp(shown), _stamp(answered), float_cell(round(_seconds(shown, answered), 3))


def _seconds(shown: Any, answered: Any) -> float:
    """answered - shown in seconds (naive stored times are both UTC: no zone to attach)."""
    if isinstance(shown, str) and isinstance(answered, str):
        try:
            later, earlier = datetime.fromisoformat(answered), datetime.fromisoformat(shown)
            return (later - earlier).total_seconds()
        except TypeError:  # one with a zone, one without: both to UTC below
            pass
    return (_moment(answered) - _moment(shown)).total_seconds()


def _moment(stored: Any) -> datetime:
    return _utc(datetime.fromisoformat(stored) if isinstance(stored, str) else stored)


def _stamp(stored: Any) -> str:
    """ISO 8601 in UTC with microseconds; SQLite's stored text sliced when it has that form."""
    if isinstance(stored, str) and len(stored) == 26 and stored[10] == " ":
        return f"{stored[:10]}T{stored[11:]}+00:00"
    return _timestamp(_moment(stored))


def _gold_written(spec: specs.TaskSpec, gold: Any) -> Any:
    """Gold as the source data writes it (ReCoRD: its list of answers)."""
    if gold is None or spec.kind == "multi_answer":
        return gold
    if spec.kind == "entity_choice" and isinstance(gold, list):
        return gold
    return source_value(spec, gold)
