"""Import task data files into the store: all or nothing, in bulk, once per file."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine, delete, func, insert, select, update
from sqlmodel import Session, SQLModel

from annotate.errors import DataFileError, UserError
from annotate.formats.readers import FileSummary, labelled_throughout
from annotate.formats.sources import (
    Source,
    file_sha256,
    files_in_folder,
    guess_split,
    sources_for,
    text_source,
)
from annotate.formats.well_formed import well_formed
from annotate.specs import FieldSpec, TaskSpec
from annotate.splits import canonical_split
from annotate.store import curation_models  # noqa: F401  (its tables in the metadata below)
from annotate.store.engine import refresh_statistics, write_session
from annotate.store.models import Dataset, Item, Study

__all__ = [  # the readers' helpers, imported from here by earlier callers
    "file_sha256",
    "files_in_folder",
    "guess_split",
    "import_file",
    "import_path",
    "import_source",
    "import_sources",
]

CHUNK = 5_000
"""Rows per executemany: large enough to amortise the call, small enough to keep memory flat."""

Progress = Callable[[int, int], None]
"""(lines read, lines in the file)."""


@dataclass
class ImportResult:
    dataset_id: int
    task: str
    split: str
    path: str
    n_items: int
    sha256: str
    detail: dict[str, int]
    already_imported: bool = False
    identical_to: str | None = None
    """When already imported: the earlier file with the same content (its dataset is this one)."""
    replaced: int | None = None
    """Imported with `replace`: the id of the earlier dataset of the same content, removed."""


def with_field_mapping(spec: TaskSpec, mapping: dict[str, str]) -> TaskSpec:
    """The spec with some fields (or `id` / `label`) read from other columns or keys."""
    known = {f.name for f in spec.fields} | {"id", "label"}
    unknown = sorted(set(mapping) - known)
    if unknown:
        raise UserError(f"--map names unknown field(s) {unknown}; {spec.name} has {sorted(known)}")
    fields = [
        FieldSpec(**{**f.model_dump(), "source": [mapping[f.name]]}) if f.name in mapping else f
        for f in spec.fields
    ]
    source_update: dict[str, list[str]] = {"mapped": sorted(mapping)}
    if "id" in mapping:
        source_update["id"] = [mapping["id"]]
    if "label" in mapping:
        source_update["label"] = [mapping["label"]]
    source = spec.source.model_copy(update=source_update)
    return spec.model_copy(update={"fields": fields, "source": source})


ITEM_COLUMNS = ("dataset_id", "position", "source_id", "fields", "gold", "tags")
SQLITE_INSERT = (
    f"INSERT INTO item ({', '.join(ITEM_COLUMNS)}) VALUES ({', '.join('?' * len(ITEM_COLUMNS))})"
)


def _insert_items(session: Session, rows: list[tuple]) -> None:
    """Insert (dataset_id, position, source_id, fields, gold, tags) rows in one executemany.

    On SQLite the JSON values are serialised here and the rows go straight to the driver:
    SQLAlchemy's per-value bind processing roughly doubled the import time of a large file
    (bench/bench_import.py). The stored text is what the JSON column type writes itself
    (json.dumps), so reading through the ORM is unchanged. Other databases take the typed path.
    """
    connection = session.connection()
    if connection.dialect.name == "sqlite":
        dumps = json.dumps
        connection.exec_driver_sql(
            SQLITE_INSERT,
            [
                (d, p, s, dumps(f), dumps(g), None if t is None else dumps(t))
                for d, p, s, f, g, t in rows
            ],
        )
    else:
        connection.execute(
            insert(Item.__table__), [dict(zip(ITEM_COLUMNS, row, strict=True)) for row in rows]
        )


def count_lines(path: Path) -> int:
    count = 0
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            count += block.count(b"\n")
    return count + 1


def import_file(
    engine: Engine,
    spec: TaskSpec,
    path: Path,
    split: str | None = None,
    progress: Progress | None = None,
    *,
    replace: bool = False,
) -> ImportResult:
    """Read `path` as a file of `spec` in the task's own layout and store its items as one new
    dataset (see `import_source`)."""
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    return import_source(engine, spec, text_source(path, spec, split), progress, replace=replace)


def import_path(
    engine: Engine,
    spec: TaskSpec,
    path: Path,
    split: str | None = None,
    label_names: list[str] | None = None,
    *,
    replace: bool = False,
) -> list[ImportResult]:
    """Import every dataset `path` holds (a file, a folder, a Hub layout, a task zip), all or
    nothing (see `import_sources`)."""
    sources = sources_for(path, spec, split, label_names)
    return import_sources(engine, spec, sources, replace=replace)


def import_source(
    engine: Engine,
    spec: TaskSpec,
    source: Source,
    progress: Progress | None = None,
    *,
    replace: bool = False,
) -> ImportResult:
    """Store the items of `source` as one new dataset (see `import_sources`)."""
    return import_sources(engine, spec, [source], lambda _: progress, replace=replace)[0]


def import_sources(
    engine: Engine,
    spec: TaskSpec,
    sources: list[Source],
    progress: Callable[[Source], Progress | None] | None = None,
    *,
    replace: bool = False,
) -> list[ImportResult]:
    """Store the items of each source as one new dataset, all in one transaction.

    A bad line in any of them rolls everything back and raises a DataFileError naming the file
    and line: a folder or zip whose last file is broken leaves no dataset of its earlier files
    behind. Content already imported for this task (same sha256) is not imported again; its
    existing dataset is returned. With `replace` it is imported again (this run's split, field
    mapping and label names) and the earlier dataset and its items are removed, in the same
    transaction; refused (UserError, nothing written) while anything in the store uses that
    dataset or its items (a study, its labels). `progress` gives each source's progress
    callback, or None."""
    for source in sources:  # before anything is written
        if source.split is None:
            raise UserError(f"{source.said}: cannot tell which split this is; pass --split NAME")
    made: set[int] = set()  # this run's datasets: a second file of the same bytes skips them
    try:
        with write_session(engine) as session:
            results = []
            for source in sources:
                result = _store_source(
                    session,
                    spec,
                    source,
                    progress(source) if progress else None,
                    replace=replace,
                    made=made,
                )
                made.add(result.dataset_id)
                results.append(result)
    except DataFileError as exc:
        if len(sources) == 1:
            raise
        raise DataFileError(
            exc.path,
            exc.line,
            f"{exc.reason} (nothing imported: the {len(sources)} files of this import go in "
            "together)",
        ) from None
    if any(not r.already_imported for r in results):
        refresh_statistics(engine, Item.__tablename__)  # type: ignore[arg-type]
    return results


def _users_of(session: Session, dataset_id: int) -> tuple[list[str], list[str]]:
    """What in the store refers to the dataset or its items: the names of the studies (by a
    study_id, or as the study's own training or test dataset), and for rows of other tables
    "N rows of TABLE". Every foreign key to the dataset or item table is looked at, so a
    table added later is not missed."""
    items = select(Item.id).where(Item.dataset_id == dataset_id).scalar_subquery()
    study_ids: set[int] = set()
    others: list[str] = []
    for table in SQLModel.metadata.sorted_tables:
        if table.name == Item.__tablename__:
            continue  # the dataset's own items, removed with it
        for fk in table.foreign_keys:
            target = fk.column.table.name
            if target == Dataset.__tablename__:
                refers = fk.parent == dataset_id
            elif target == Item.__tablename__:
                refers = fk.parent.in_(items)
            else:
                continue
            if table.name == Study.__tablename__:
                study_ids.update(session.scalars(select(table.c.id).where(refers)))
            elif "study_id" in table.c:
                study_ids.update(session.scalars(select(table.c.study_id).where(refers)))
            else:
                n = session.scalar(select(func.count()).select_from(table).where(refers)) or 0
                if n:
                    others.append(f"{n} rows of {table.name}")
    names = session.scalars(select(Study.name).where(Study.id.in_(study_ids))) if study_ids else []
    return sorted(names), others


def _remove_for_replace(session: Session, existing: Dataset, path: Path) -> int:
    """Remove the dataset `existing` and its items, which `path` (the same bytes) replaces;
    refused, removing nothing, while anything uses them."""
    dataset_id = existing.id
    assert dataset_id is not None
    studies, others = _users_of(session, dataset_id)
    if studies or others:
        users = [
            *([f"{'study' if len(studies) == 1 else 'studies'} {', '.join(map(repr, studies))}"]
              if studies else []),
            *others,
        ]  # fmt: skip
        raise UserError(
            f"{path}: not replaced: its earlier import, dataset {dataset_id} ({existing.task} "
            f"{existing.split}), is used by {' and '.join(users)}; nothing was imported or "
            "removed"
        )
    session.expunge(existing)
    session.execute(delete(Item).where(Item.dataset_id == dataset_id))  # type: ignore[arg-type]
    session.execute(delete(Dataset).where(Dataset.id == dataset_id))  # type: ignore[arg-type]
    return dataset_id


def _store_source(
    session: Session,
    spec: TaskSpec,
    source: Source,
    progress: Progress | None,
    *,
    replace: bool = False,
    made: set[int] | None = None,
) -> ImportResult:
    """One source's dataset and items, in the caller's transaction."""
    path = source.path  # stored; messages name `said`, the path as the user gave it
    said = source.said
    assert source.split is not None
    split = canonical_split(source.split)
    sha256 = source.sha256()
    query = select(Dataset).where(Dataset.task == spec.name, Dataset.sha256 == sha256)
    if replace:  # PostgreSQL: no study can take the dataset up between the check and the removal
        query = query.with_for_update()
    existing = session.scalars(query).first()
    replaced = None
    fresh_id = None
    if existing is not None and replace and existing.id not in (made or set()):
        if session.get_bind().dialect.name == "sqlite":
            # SQLite would give the removed row's id (the highest) to the new one: a dataset
            # id is never reused, as on PostgreSQL, so the earlier id names no other dataset.
            fresh_id = (session.scalar(select(func.max(Dataset.id))) or 0) + 1
        replaced = _remove_for_replace(session, existing, said)
        existing = None
    if existing is not None:
        return ImportResult(
            existing.id or 0,
            existing.task,
            existing.split,
            str(path),  # the file given now; the earlier one is `identical_to`
            existing.n_items,
            sha256,
            existing.detail,
            already_imported=True,
            identical_to=existing.path,
        )
    dataset = Dataset(
        id=fresh_id, task=spec.name, split=split, path=str(path), sha256=sha256, n_items=0
    )
    session.add(dataset)
    session.flush()
    assert dataset.id is not None
    summary = FileSummary()
    counted = progress is not None and source.text_file is not None
    total_lines = count_lines(source.text_file) if counted and source.text_file else 0
    n_items = 0
    chunk: list[tuple] = []
    items = labelled_throughout(well_formed(source.items(summary), spec, said), said)
    for position, item in enumerate(items):
        chunk.append((dataset.id, position, item.source_id, item.fields, item.gold, item.tags))
        if len(chunk) >= CHUNK:
            _insert_items(session, chunk)
            n_items += len(chunk)
            chunk = []
            if progress and counted:
                progress(item.line, total_lines)
    if chunk:
        _insert_items(session, chunk)
        n_items += len(chunk)
    if n_items == 0:
        raise DataFileError(said, None, "the file has no items")
    if progress and counted:
        progress(total_lines, total_lines)
    detail = {"items": n_items, **summary.detail, "labelled": int(summary.has_gold)}
    session.execute(
        update(Dataset).where(Dataset.id == dataset.id).values(n_items=n_items, detail=detail)
    )
    return ImportResult(
        dataset.id, spec.name, split, dataset.path, n_items, sha256, detail, replaced=replaced
    )
