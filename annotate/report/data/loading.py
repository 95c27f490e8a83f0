"""Load what a report needs from a store, in one pass and in columns: a study's test items with
gold and tags, its test-phase labels with the seconds each took, and its gate decisions.

Labels are fetched as raw JSON text and decoded once per distinct value (a 3-class study has
three), and answer times are computed by the database, so 500,000 labels load in well under a
second on SQLite.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Connection, Engine, String, Text, cast, func, select, type_coerce
from sqlalchemy.sql.elements import ColumnElement
from sqlmodel import Session

from annotate import specs
from annotate.protocol import catch, flags, set_aside, standing
from annotate.protocol.gate import latest_closure
from annotate.protocol.studies import StudyContext
from annotate.store import json_cells
from annotate.store.models import Annotator, Dataset, GateDecision, Item, Label, StudyItem
from annotate.store.queries import find_study, labels_of_study

TEST_PHASE = "test"

ITEM_COLUMNS = ["item_id", "source_id", "position", "gold", "tags", "pair_id"]
LABEL_COLUMNS = ["item_id", "source_id", "annotator", "value", "seconds"]


@dataclass
class StudyData:
    """A study's test phase as plain data: everything the report reads from the store."""

    study_id: int
    name: str
    state: str
    spec: specs.TaskSpec
    protocol: specs.ProtocolSpec
    """The effective protocol stored with the study."""
    settings: dict[str, Any]
    """The effective protocol as stored, with the catch-drift threshold in force
    (`catch.effective_settings`; printed in every report)."""
    items: pd.DataFrame
    """One row per test item of the sample, in sample order: item_id, source_id, position,
    gold (None without gold), tags ({coarse: [fine]} or None), pair_id (the item's minimal
    pair: AX-g ids 2k and 2k+1; else None)."""
    labels: pd.DataFrame
    """One row per test-phase label: item_id, source_id, annotator (name, categorical), value
    (as stored: text, number, dict or entity text), seconds (answered_at - shown_at)."""
    gate_decisions: list[dict[str, Any]] = field(default_factory=list)
    """Every gate decision of the study, oldest first."""
    gate_closure: dict[str, Any] | None = None
    """Who closed training and when, and why when forced (`gate.Closure.as_dict`); None while
    open or for a gate closed before schema 10."""
    dev_class_counts: dict[str, int] | None = None
    """Gold class counts of the training (dev) dataset: the `dev-majority-class` tie rule."""
    excluded: dict[int, dict[str, Any]] = field(default_factory=dict)
    """Test items the researcher excluded from scoring (item id -> source_id, by, reason, at):
    they are not in `items` or `labels`, so scores and agreement leave them out."""
    excluded_labels: pd.DataFrame | None = None
    """The excluded items' labels (rows as in `labels`), to show the score with them too."""
    excluded_items: pd.DataFrame | None = None
    """The excluded items' rows (as in `items`)."""
    synthetic: frozenset[str] = frozenset()
    """Names of annotators made by `annotate simulate`."""
    roster: list[dict[str, str]] = field(default_factory=list)
    """Everyone in the study (standing.roster), by name: name, phase, gate (and set_aside:
    their test labels set aside by a refusal, where there are any)."""
    members: list[standing.Member] | None = None
    """The same roster as read (the datasheet's attrition), when loaded from the store."""
    test_split: str | None = None
    """The split of the dataset the test items come from (`test`, `dev`), when known: a
    model's predictions on another split name other items by the same ids."""
    test_source: str | None = None
    """The file the test items were imported from (the dataset's path), when known: a
    harness log of QQP or MRPC names other items than GLUE's own files give those ids."""

    @property
    def n_sample(self) -> int:
        return len(self.items)

    @property
    def has_gold(self) -> bool:
        return bool(self.items["gold"].notna().any()) if len(self.items) else False


def json_text(column: Any, dialect: str) -> ColumnElement[Any]:
    """A JSON column as its JSON text, whatever the driver would otherwise decode it to."""
    if dialect == "sqlite":
        return type_coerce(column, String)
    return cast(column, Text)


def decode_json(raw: Any, column: Any, conn: Connection) -> np.ndarray:
    """Decode the JSON texts of `column` read on `conn` (None stays None), parsing each distinct
    text once."""
    codes, uniques = pd.factorize(pd.Series(raw, dtype=object), use_na_sentinel=True)
    decoded = np.empty(len(uniques) + 1, dtype=object)
    decoded[:-1] = [json_cells.loads(u, column, conn) if isinstance(u, str) else u for u in uniques]
    decoded[-1] = None
    return decoded[codes]


def _seconds_expression(dialect: str) -> ColumnElement[Any] | None:
    if dialect == "sqlite":
        return (func.julianday(Label.answered_at) - func.julianday(Label.shown_at)) * 86400.0
    if dialect == "postgresql":
        return func.extract("epoch", Label.answered_at - Label.shown_at)
    return None


def answer_seconds(engine: Engine, study_id: int, phase: str) -> np.ndarray:
    """The seconds each answer of `phase` in the study took (shown to answered); NaN where
    unknown (a label imported without times). `plan --pilot` times training labels by the
    training answers' median: they come with feedback and cost more than a test answer."""
    with engine.connect() as conn:
        seconds = _seconds_expression(conn.dialect.name)
        columns: list[Any] = (
            [seconds] if seconds is not None else [Label.shown_at, Label.answered_at]
        )
        where = (Label.study_id == study_id, Label.phase == phase)
        cols = fetch_columns(conn, select(*columns).where(*where), len(columns))
    if seconds is not None:
        return np.asarray(cols[0], dtype=float)
    return np.asarray(
        [
            np.nan if a is None or b is None else (b - a).total_seconds()
            for a, b in zip(cols[0], cols[1], strict=True)
        ],
        dtype=float,
    )


def fetch_columns(conn: Any, statement: Any, n_columns: int) -> list[tuple[Any, ...]]:
    """Run a select and return its result as columns. Rows come straight from the driver's
    cursor: building 500,000 SQLAlchemy Row objects would cost more than the query."""
    result = conn.execute(statement)
    try:
        rows = result.cursor.fetchall()
    finally:
        result.close()
    # One comprehension per column is ~5x faster than zip(*rows) on 500,000 rows.
    return [[row[i] for row in rows] for i in range(n_columns)]


def load_study_data(engine: Engine, study_name: str, *, exclusions: bool = True) -> StudyData:
    """Everything a report needs about study `study_name` (UserError when there is none).
    `exclusions`: leave out the items the researcher excluded from scoring (the report, scores,
    agreement); exports and submissions pass False, as they answer every test item."""
    study = find_study(engine, study_name)
    spec = specs.study_task(study.task, study.task_spec, origin=f"study {study_name!r}")
    protocol = specs.validate_protocol(study.protocol, origin=f"study {study_name!r}")
    dialect = engine.dialect.name
    assert study.id is not None
    with Session(engine) as session:  # the state follows the data (protocol/standing.py)
        state = standing.state_of(session, study.id, protocol.annotators_per_item, study.state)
        members = standing.roster(session, study.id)
        aside = set_aside.counts(session.connection(), study.id)
        roster = [
            {"name": m.name, "phase": m.phase, "gate": m.gate, **_aside(aside, m.annotator_id)}
            for m in members
        ]
        closure = latest_closure(session, study.id)
    with engine.connect() as conn:
        items = _load_items(conn, study.id, spec, dialect)
        labels = _load_labels(conn, study.id, dialect, items)
        gate = _load_gate(conn, study.id)
        synthetic = frozenset(
            conn.execute(select(Annotator.name).where(Annotator.synthetic.is_(True))).scalars()
        )
        test_dataset = conn.execute(
            select(Dataset.split, Dataset.path).where(Dataset.id == study.test_dataset_id)
        ).first()
        test_split, test_source = test_dataset if test_dataset is not None else (None, None)
        # As stored, but with the catch-drift threshold in force (as `study show` says it)
        context = StudyContext(study=study, spec=spec, protocol=protocol)
        settings = catch.effective_settings(conn, context, dict(study.protocol))
        dev_counts = None
        if protocol.tie_rule == "dev-majority-class" and study.train_dataset_id is not None:
            dev_counts = _dev_class_counts(conn, study.train_dataset_id, spec, dialect)
    excluded = excluded_items_of(engine, study.id) if exclusions else {}
    excluded_items = excluded_labels = None
    if excluded:  # left out of everything scored; kept aside for the with/without comparison
        out_items = items["item_id"].isin(list(excluded))
        out_labels = labels["item_id"].isin(list(excluded))
        excluded_items, excluded_labels = items[out_items], labels[out_labels]
        items = items[~out_items].reset_index(drop=True)
        labels = labels[~out_labels].reset_index(drop=True)
    return StudyData(
        study_id=study.id,
        name=study.name,
        state=state,
        spec=spec,
        protocol=protocol,
        settings=settings,
        items=items,
        labels=labels,
        gate_decisions=gate,
        gate_closure=None if closure is None else closure.as_dict(),
        dev_class_counts=dev_counts,
        excluded=excluded,
        excluded_labels=excluded_labels,
        excluded_items=excluded_items,
        synthetic=synthetic,
        roster=roster,
        members=members,
        test_split=test_split,
        test_source=test_source,
    )


def with_excluded_items(data: StudyData) -> StudyData:
    """The same study with its excluded items put back (the score "with exclusions")."""
    if data.excluded_items is None or data.excluded_labels is None:
        return data
    items = pd.concat([data.items, data.excluded_items]).sort_values("position")
    labels = pd.concat([data.labels, data.excluded_labels])
    return replace(
        data,
        items=items.reset_index(drop=True),
        labels=labels.reset_index(drop=True),
        excluded={},
        excluded_items=None,
        excluded_labels=None,
    )


def excluded_items_of(engine: Engine, study_id: int) -> dict[int, dict[str, Any]]:
    with Session(engine) as session:
        return {
            item_id: ex.as_dict() for item_id, ex in flags.excluded_items(session, study_id).items()
        }


def _load_items(conn: Any, study_id: int, spec: specs.TaskSpec, dialect: str) -> pd.DataFrame:
    wants_pair = spec.minimal_pairs is not None
    columns = [
        StudyItem.item_id,
        Item.source_id,
        StudyItem.position,
        json_text(Item.gold, dialect),
        json_text(Item.tags, dialect),
    ]
    if wants_pair:
        columns.append(json_text(Item.fields, dialect))
    cols = fetch_columns(
        conn,
        select(*columns)
        .join(Item, Item.id == StudyItem.item_id)
        .where(StudyItem.study_id == study_id, StudyItem.phase == TEST_PHASE)
        .order_by(StudyItem.position),
        len(columns),
    )
    frame = pd.DataFrame(
        {
            "item_id": np.asarray(cols[0], dtype=np.int64),
            "source_id": np.asarray(cols[1], dtype=object),
            "position": np.asarray(cols[2], dtype=np.int64),
            "gold": decode_json(cols[3], Item.gold, conn),
            "tags": decode_json(cols[4], Item.tags, conn),
        }
    )
    if wants_pair:
        fields = [f or {} for f in decode_json(cols[5], Item.fields, conn)]
        frame["pair_id"] = spec.pair_keys(frame["source_id"].tolist(), fields).keys
    else:
        frame["pair_id"] = None
    return frame[ITEM_COLUMNS]


def _load_labels(conn: Any, study_id: int, dialect: str, items: pd.DataFrame) -> pd.DataFrame:
    seconds = _seconds_expression(dialect)
    columns: list[Any] = [Label.item_id, Label.annotator_id, json_text(Label.value, dialect)]
    columns += [seconds] if seconds is not None else [Label.shown_at, Label.answered_at]
    where = (labels_of_study(conn, study_id), Label.phase == TEST_PHASE)
    cols = fetch_columns(conn, select(*columns).where(*where), len(columns))
    names = dict(conn.execute(select(Annotator.id, Annotator.name)).all())
    item_ids = np.asarray(cols[0], dtype=np.int64)
    if seconds is not None:
        secs = np.asarray(cols[3], dtype=float)
    else:
        delta = pd.to_datetime(pd.Series(cols[4])) - pd.to_datetime(pd.Series(cols[3]))
        secs = delta.dt.total_seconds().to_numpy(dtype=float)
    ids = pd.Categorical(np.asarray(cols[1], dtype=np.int64))
    annotator = ids.rename_categories([names.get(int(i), f"annotator {i}") for i in ids.categories])
    source = pd.Series(items["source_id"].to_numpy(), index=items["item_id"].to_numpy())
    return pd.DataFrame(
        {
            "item_id": item_ids,
            "source_id": source.reindex(item_ids).to_numpy(),
            "annotator": annotator,
            "value": decode_json(cols[2], Label.value, conn),
            "seconds": secs,
        }
    )


def _aside(counts: dict[int, int], annotator_id: int) -> dict[str, int]:
    """A roster entry's test labels set aside by a refusal, where there are any."""
    n = counts.get(annotator_id, 0)
    return {"set_aside": n} if n else {}


def _load_gate(conn: Any, study_id: int) -> list[dict[str, Any]]:
    rows = conn.execute(
        select(GateDecision.__table__, Annotator.name.label("annotator"))
        .join(Annotator, Annotator.id == GateDecision.annotator_id)
        .where(GateDecision.study_id == study_id)
        .order_by(GateDecision.decided_at, GateDecision.id)
    ).all()
    decisions = []
    for row in rows:
        m = row._mapping
        decided = m["decided_at"]
        decisions.append(
            {
                "annotator": m["annotator"],
                "admitted": bool(m["admitted"]),
                "rule": m["rule"],
                "threshold": m["threshold"],
                "score": m["score"],
                "n_items": m["n_items"],
                "decided_by": m["decided_by"],
                "decided_at": decided.isoformat(timespec="seconds")
                if hasattr(decided, "isoformat")
                else str(decided),
                "cohort_size": len(m["cohort"] or []),
                "reason": m["reason"],
            }
        )
    return decisions


def _dev_class_counts(
    conn: Any, dataset_id: int, spec: specs.TaskSpec, dialect: str
) -> dict[str, int] | None:
    """Gold class frequencies of the training dataset (MultiRC: of its answer judgements)."""
    if spec.kind not in {"classification", "multi_answer"}:
        return None
    raw = (
        conn.execute(select(json_text(Item.gold, dialect)).where(Item.dataset_id == dataset_id))
        .scalars()
        .all()
    )
    counts: Counter[str] = Counter()
    for gold in decode_json(raw, Item.gold, conn):
        if gold is None:
            continue
        if isinstance(gold, dict):
            counts.update(str(v) for v in gold.values())
        else:
            counts[spec.collapse(str(gold))] += 1
    return dict(counts) or None
