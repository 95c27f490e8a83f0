"""Read-only questions about a store, answered as plain data."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Engine, func, select
from sqlmodel import Session

from annotate.errors import UserError
from annotate.store.models import Dataset, Label, Study


def dataset_rows(engine: Engine) -> list[dict[str, Any]]:
    """Every dataset with the stable keys of `annotate datasets --format json`."""
    with Session(engine) as session:
        datasets = session.scalars(select(Dataset).order_by(Dataset.id)).all()
        return [
            {
                "id": d.id,
                "task": d.task,
                "split": d.split,
                "items": d.n_items,
                "labelled": bool(d.detail.get("labelled", 0)),
                "detail": {k: v for k, v in d.detail.items() if k not in {"items", "labelled"}},
                "sha256": d.sha256,
                "path": d.path,
                "imported_at": d.imported_at.isoformat(timespec="seconds"),
            }
            for d in datasets
        ]


def get_dataset(session: Session, dataset_id: int) -> Dataset:
    dataset = session.get(Dataset, dataset_id)
    if dataset is None:
        raise UserError(f"no dataset {dataset_id}; `annotate datasets` lists them")
    return dataset


def labels_of_study(conn: Any, study_id: int) -> ColumnElement[bool]:
    """`label.study_id = :id`, written so SQLite scans the table when the study holds most of
    its labels: following the (study, annotator, phase) index to every row costs two to eight
    times a scan (the rows are read in index order, not in the table's)."""
    if conn.dialect.name == "sqlite":
        mine = conn.execute(select(func.count()).where(Label.study_id == study_id)).scalar_one()
        total = conn.execute(select(func.count()).select_from(Label)).scalar_one()
        if mine > total // 4:
            return (Label.study_id + 0) == study_id
    return Label.study_id == study_id


def find_study(engine: Engine, name: str) -> Study:
    with engine.connect() as conn:
        row = conn.execute(select(Study.__table__).where(Study.name == name)).first()
        if row is None:
            names = conn.execute(select(Study.name).order_by(Study.id)).scalars().all()
            known = ", ".join(names) or "none yet"
            raise UserError(f"no study named {name!r} (studies: {known})")
    return Study.model_validate(dict(row._mapping))
