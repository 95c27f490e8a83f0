"""The Python API: a store's studies as pandas DataFrames, and the typed report.

    import annotate

    store = annotate.open_store("sqlite:///annotate.db")
    study = store.study("rte-pilot")
    labels = study.labels()          # one row per label, with the item's text and gold
    report = study.report(bootstrap=200, seed=1)
    report.to_json()                 # the same as `annotate report rte-pilot --format json`
    annotate.agreement(labels, item="item_id", annotator="annotator", label="value")

Read-only: a SQLite store is opened with `mode=ro` (nothing here can write it, and a store
that annotators are filling can be read at the same time); a PostgreSQL session is read-only.
The frames are computed by the same functions as the CLI's exports and report, so a number
here is the number the CLI prints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from annotate.errors import DataFileError, UserError

if TYPE_CHECKING:  # pandas, SQLAlchemy and the report load when the API is used
    import pandas as pd
    from sqlalchemy import Engine

    from annotate.report.model.schema import FileAgreement, StudyReport

Phase = Literal["test", "training", "catch", "refresher", "all"]
Level = Literal["nominal", "ordinal", "interval", "ratio"]
TIME_COLUMNS = ("shown_at", "answered_at")
TIME_DTYPE = "datetime64[us, UTC]"
LABEL_DTYPES = {"seconds": "float64", "flag": "bool", "excluded": "bool"}
"""The types of `labels()`'s columns of numbers and truths, whatever the rows: a study without
labels (or without a single known time) had object columns, which concat made of every frame
joined with it."""


def _read_only_engine(url: str) -> Engine:
    from sqlalchemy import event

    from annotate.store.engine import make_engine, reading_url
    from annotate.store.schema import require_current
    from annotate.workspace import no_store_error, resolve_url

    resolved = resolve_url(url)
    engine = make_engine(resolved)
    if engine.dialect.name == "sqlite":
        database = engine.url.database
        if not database or database == ":memory:" or not Path(database).exists():
            engine.dispose()
            raise no_store_error(resolved, database)
        if Path(database).is_dir():  # read-only, SQLite said "disk I/O error; check the disk"
            engine.dispose()
            raise UserError(f"no annotate store at {resolved}: a folder, not a file")
        engine.dispose()
        engine = make_engine(reading_url(Path(database)), read_only=True)
    elif engine.dialect.name == "postgresql":

        @event.listens_for(engine, "connect")
        def _read_only(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
            cursor.close()
            dbapi_connection.commit()

    try:
        current = require_current(engine)
    except BaseException:  # an older store, a file that is no database: no connection kept
        engine.dispose()
        raise
    if not current:
        engine.dispose()
        raise no_store_error(resolved, None)  # the URL said with its password hidden
    return engine


def open_store(url: str | Path | None = None) -> Store:
    """Open a store for reading: a URL (`sqlite:///annotate.db`,
    `postgresql+psycopg://…`), a SQLite file's path, or None for ANNOTATE_DB / annotate.db."""
    return Store(_read_only_engine(None if url is None else str(url)))


@dataclass
class Store:
    """A store opened read-only. Use as a context manager, or call `close()`: after it, the
    store and its studies refuse to be read (they reopened a connection, silently)."""

    engine: Engine
    closed: bool = field(default=False, repr=False)

    def _open(self) -> Engine:
        if self.closed:
            raise UserError("this store was closed: open it again with annotate.open_store()")
        return self.engine

    def studies(self) -> list[Study]:
        """Every study, oldest first."""
        from sqlalchemy import select

        from annotate.store.models import Study as StudyRow

        with self._open().connect() as conn:
            names = conn.execute(select(StudyRow.name).order_by(StudyRow.id)).scalars().all()
        return [Study(self, name) for name in names]

    def study(self, name: str) -> Study:
        """The study of that name (a UserError naming the studies there are, if none)."""
        from annotate.report.data.loading import find_study

        find_study(self._open(), name)
        return Study(self, name)

    def close(self) -> None:
        self.closed = True
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


@dataclass
class Study:
    """One study of a store: its labels, items and annotators as DataFrames; its report."""

    store: Store
    name: str

    @property
    def _engine(self) -> Engine:
        return self.store._open()

    def info(self) -> dict[str, Any]:
        """Task, effective protocol, state and how the labels were collected: the protocol
        and state that `annotate study show` and the report give (the catch-drift threshold
        in force, a state that follows the labels)."""
        from sqlmodel import Session

        from annotate import specs
        from annotate.formats.label_import import import_record
        from annotate.protocol import catch, standing
        from annotate.protocol.studies import StudyContext
        from annotate.report.data.loading import find_study

        row = find_study(self._engine, self.name)
        assert row.id is not None
        record = import_record(self._engine, row.id)
        origin = f"study {self.name!r}"
        protocol = specs.validate_protocol(row.protocol, origin=origin)
        context = StudyContext(
            study=row, spec=specs.study_task(row.task, row.task_spec, origin), protocol=protocol
        )
        with Session(self._engine) as session:
            state = standing.state_of(session, row.id, protocol.annotators_per_item, row.state)
            settings = catch.effective_settings(session.connection(), context, dict(row.protocol))
        return {
            "name": row.name,
            "task": row.task,
            "state": state,
            "protocol": settings,
            "created_at": row.created_at,
            "collected": None if record is None else record.detail.get("collected"),
        }

    def labels(self, phase: Phase = "test", *, with_text: bool = True) -> pd.DataFrame:
        """One row per label: study, item_id, the item's fields and gold (`with_text`),
        annotator (pseudonym), phase, value, shown_at, answered_at (UTC timestamps; empty for
        labels imported from a file that gives durations, not dates), seconds, flag, comment,
        excluded (the item is excluded from scoring); `answer` for tasks
        answered on a scale (CB). The rows and values of `export --format labels`.
        `phase`: test (default), training, catch (catch items), refresher, set-aside (an
        annotator refused by hand), or all."""
        import pandas as pd

        from annotate.export.label_table import PHASES, label_table

        phases = PHASES if phase == "all" else (phase,)
        if phase != "all" and phase not in PHASES:
            raise UserError(f"phase {phase!r}: one of {', '.join(PHASES)} or all")
        table = label_table(self._engine, self.name, phases, with_text=with_text)
        frame = pd.DataFrame(table.rows, columns=table.columns)
        for column in TIME_COLUMNS:
            when = pd.to_datetime(frame[column], utc=True, format="ISO8601")
            frame[column] = when.astype(TIME_DTYPE)
        return frame.astype({c: t for c, t in LABEL_DTYPES.items() if c in frame.columns})

    def items(self) -> pd.DataFrame:
        """One row per test item of the sample, in sample order: item_id, position (in the
        source file), the item's fields, gold, n_labels, excluded."""
        import pandas as pd
        from sqlalchemy import select
        from sqlmodel import Session

        from annotate import specs
        from annotate.export.label_table import text_columns
        from annotate.protocol.flags import excluded_items
        from annotate.report.data.loading import find_study
        from annotate.store.models import Item, StudyItem

        study = find_study(self._engine, self.name)
        spec = specs.study_task(study.task, study.task_spec, origin=f"study {self.name!r}")
        assert study.id is not None
        with Session(self._engine) as session:
            excluded = set(excluded_items(session, study.id))
            rows = session.execute(
                select(Item.id, Item.source_id, Item.position, Item.fields, Item.gold)
                .add_columns(StudyItem.n_labels)
                .join(StudyItem, StudyItem.item_id == Item.id)
                .where(StudyItem.study_id == study.id, StudyItem.phase == "test")
                .order_by(StudyItem.position)
            ).all()
        fields = text_columns(spec)
        out = []
        for item_id, source_id, position, item_fields, gold, n_labels in rows:
            row: dict[str, Any] = {"item_id": str(source_id), "position": position}
            row.update({c: (item_fields or {}).get(f) for f, c in fields})
            row.update({"gold": gold, "n_labels": n_labels, "excluded": item_id in excluded})
            out.append(row)
        columns = ["item_id", "position", *(c for _, c in fields), "gold", "n_labels", "excluded"]
        return pd.DataFrame(out, columns=columns)

    def answers(self, *, models: bool = True) -> pd.DataFrame:
        """One row per test item (MultiRC: candidate answer) as the report aggregates it:
        item_id, n_labels, the count of each answer, majority (by the study's tie rule),
        tied, tied_answers, tie_rule and tie_pick, then each aggregation model's answer and
        posterior (dawid_skene, dawid_skene_posterior, mace, mace_posterior; empty where no
        model could be fitted: no labels yet, or one answer only; `models=False` leaves them
        out), and gold. Ratings (STS-B) have the mean or median instead of the
        votes. The rows and values of `export --format answers`, in the source file's order;
        excluded items are left out, as in the report."""
        import pandas as pd

        from annotate.export.item_answers import unit_answers
        from annotate.export.submission import source_positions
        from annotate.report.data.loading import load_study_data

        data = load_study_data(self._engine, self.name)
        positions = source_positions(self._engine, self.name, data.spec)
        table = unit_answers(data, models=models, positions=positions)
        frame = pd.DataFrame(table.rows, columns=table.columns)
        posteriors = [c for c in frame.columns if c.endswith("_posterior")]
        return frame.astype(dict.fromkeys(posteriors, "float64"))  # a model not fitted: NaN

    def annotators(self) -> pd.DataFrame:
        """One row per annotator with labels in the study: annotator (pseudonym), labels per
        phase, first and last answer (UTC; empty for labels imported from a file that gives
        durations, not dates, as `status` leaves them), synthetic (made by `annotate
        simulate`)."""
        import pandas as pd

        labels = self.labels("all", with_text=False)
        columns = ["annotator", "n_labels", "n_test", "n_training", "first_at", "last_at"]
        if labels.empty:  # the types of a study with labels
            counts = {c: "int64" for c in ("n_labels", "n_test", "n_training")}
            types = {"annotator": "str", **counts, "first_at": TIME_DTYPE, "last_at": TIME_DTYPE}
            empty = pd.DataFrame(columns=[*columns, "synthetic"])
            return empty.astype({**types, "synthetic": "bool"})
        grouped = labels.groupby("annotator", sort=True)
        frame = pd.DataFrame(
            {
                "n_labels": grouped.size(),
                "n_test": grouped["phase"].agg(lambda p: int((p == "test").sum())),
                "n_training": grouped["phase"].agg(lambda p: int((p == "training").sum())),
                "first_at": grouped["shown_at"].min(),
                "last_at": grouped["answered_at"].max(),
            }
        ).reset_index()
        frame["synthetic"] = frame["annotator"].isin(_synthetic(self._engine))
        if not self._dates_known():  # durations laid end to end from 1970: no real date
            for column in ("first_at", "last_at"):
                frame[column] = pd.Series(pd.NaT, index=frame.index, dtype=TIME_DTYPE)
        return frame

    def _dates_known(self) -> bool:
        from annotate.formats.label_import import import_record
        from annotate.report.data.loading import find_study
        from annotate.store.label_times import dates_known

        row = find_study(self._engine, self.name)
        assert row.id is not None
        record = import_record(self._engine, row.id)
        return dates_known(None if record is None else record.detail)

    def report(
        self, *, bootstrap: int = 1000, seed: int | None = None, hourly_rate: float | None = None
    ) -> StudyReport:
        """The typed report (annotate/report/model/schema.py): `.to_json()` is what
        `annotate report STUDY --format json` prints with the same bootstrap and seed."""
        from annotate.report.build import study_report

        _require_replicates(bootstrap)
        if hourly_rate is not None and not (
            isinstance(hourly_rate, int | float) and math.isfinite(hourly_rate) and hourly_rate >= 0
        ):
            raise UserError(f"hourly_rate={hourly_rate!r}: a pay per hour of 0 or more")
        return study_report(
            self._engine, self.name, bootstrap=bootstrap, seed=seed, hourly_rate=hourly_rate
        )


def _require_replicates(bootstrap: object) -> None:
    """The CLI's --bootstrap takes 0 or more; here a negative count was read as 0, silently."""
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 0:
        raise UserError(f"bootstrap={bootstrap!r}: a number of replicates, 0 or more")


def _synthetic(engine: Engine) -> set[str]:
    from sqlalchemy import select

    from annotate.store.models import Annotator

    with engine.connect() as conn:
        return set(conn.execute(select(Annotator.name).where(Annotator.synthetic)).scalars())


def agreement(
    frame: pd.DataFrame,
    *,
    item: str = "item_id",
    annotator: str = "annotator",
    label: str = "value",
    level: Level = "nominal",
    bootstrap: int = 1000,
    seed: int = 0,
) -> FileAgreement:
    """Agreement of any long DataFrame, as `annotate agreement FILE` computes it: α at `level`,
    and κ only where it applies (nominal level; Fleiss' κ over items with the same number of
    raters), each saying what it was computed on. Missing labels (NaN, None) are skipped."""
    import numpy as np
    import pandas as pd

    from annotate.report.data.longformat import MISSING, LongLabels, _text
    from annotate.report.stats.agreement_summary import agreement_report

    _require_replicates(bootstrap)
    if not isinstance(frame, pd.DataFrame):  # it stopped on `.columns`, an AttributeError
        raise UserError(f"agreement reads a pandas DataFrame, not {type(frame).__name__}")
    for column in (item, annotator, label):
        if column not in frame.columns:
            raise UserError(f"no column {column!r}; the frame has {', '.join(map(str, frame))}")
    items, annotators, labels, lines = [], [], [], []
    seen: dict[tuple[str, str], int] = {}
    missing = 0
    for number, (i, a, v) in enumerate(
        zip(frame[item], frame[annotator], frame[label], strict=True), start=1
    ):
        value = None if _is_missing(v) else _text(v)
        if value is None or value.lower() in MISSING:
            missing += 1
            continue
        key = (str(_text(i)), str(_text(a)))
        if key in seen:
            raise UserError(
                f"row {number}: annotator {key[1]!r} labels item {key[0]!r} twice "
                f"(first in row {seen[key]})"
            )
        seen[key] = number
        items.append(key[0])
        annotators.append(key[1])
        labels.append(value)
        lines.append(number)
    if not labels:
        raise UserError("no labels in the frame (every label is missing)")
    long = LongLabels(
        path="DataFrame",
        item=np.asarray(items, dtype=object),
        annotator=np.asarray(annotators, dtype=object),
        label=np.asarray(labels, dtype=object),
        line=np.asarray(lines, dtype=np.int64),
        n_missing=missing,
    )
    try:
        return agreement_report(long, level, bootstrap=bootstrap, seed=seed)
    except DataFileError as exc:  # a file's "path:line", here the frame's row as above
        raise UserError(f"row {exc.line}: {exc.reason}") from None


def _is_missing(value: Any) -> bool:
    try:
        import pandas as pd

        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False
