"""`annotate import-labels`: make a study from labels collected outside annotate, all or nothing.

The file is read and every label checked first (its item, its answer, no worker labelling an
item twice); only then does one transaction write the items (when the file brings its own),
the annotators, the study, its test items and labels, and the import's record. A bad line is a
DataFileError naming file and line, and the store is left as it was.

Annotators are pseudonymous: `w01`, `w02`, … in the order the file first names them (a worker
seen in an earlier import of the same platform keeps the name given then); the platform's
worker id is kept on the annotator (annotator.platform/platform_id, the columns a worker who
arrives by a platform link has; `annotate annotator show` and payment files read them) and
nowhere else: the import record lists the pseudonyms only (schema 20), and no report shows it.

The study is a test phase only: no training, no gate. Its effective protocol is the task's
published preset with that said: name `outside-annotate`, the description "collected outside
annotate: MTurk batch, 24 assignments, gate unknown", k the number of labels most items have.
"""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, insert, select
from sqlmodel import Session

from annotate import specs
from annotate.errors import DataFileError, UserError
from annotate.formats.importer import file_sha256
from annotate.formats.label_answers import (
    as_given,
    check_text,
    import_options,
    skip_and_flag,
    skip_text,
)
from annotate.formats.label_sources import registry
from annotate.formats.label_sources.labels import LabelFile, RawLabel
from annotate.formats.label_sources.options import ReadOptions, check_map_keys
from annotate.formats.label_values import value_map
from annotate.formats.readers import normalise_label
from annotate.store import label_times
from annotate.store.engine import refresh_statistics, write_session
from annotate.store.models import (
    Annotator,
    Dataset,
    Item,
    Label,
    LabelImport,
    Study,
    StudyItem,
)

PROTOCOL_NAME = "outside-annotate"


@dataclass
class LabelImportResult:
    study: str
    format: str
    path: str
    sha256: str
    n_labels: int
    n_items: int
    n_annotators: int
    k: int
    collected: str
    """The sentence the report's datasheet prints: "collected outside annotate: …"."""
    notes: list[str] = field(default_factory=list)
    excluded: dict[str, int] = field(default_factory=dict)
    n_skipped: int = 0
    """Answers left out by --skip-when."""
    n_flagged: int = 0
    """Answers flagged by --map flag=COLUMN."""
    dataset_id: int | None = None
    created_items: bool = False
    already_imported: bool = False

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def collected_sentence(file: LabelFile, skipped: str = "", flagged: str = "") -> str:
    """The datasheet's sentence, "collected outside annotate: MTurk batch, 24 assignments, gate
    unknown", with what --skip-when left out and --map flag= flagged when they did."""
    return (
        f"collected outside annotate: {file.description}, "
        f"{_plural(file.n_assignments, file.unit)}, gate unknown"
        + (f"; {skipped}" if skipped else "")
        + (f"; {flagged}" if flagged else "")
    )


def import_record(engine: Engine, study_id: int) -> LabelImport | None:
    """The import a study came from (None for a study run in annotate)."""
    with Session(engine) as session:
        row = session.scalars(select(LabelImport).where(LabelImport.study_id == study_id)).first()
        if row is not None:
            session.expunge(row)
        return row


def _already(
    engine: Engine, sha256: str, options: dict[str, Any], study: str | None
) -> tuple[LabelImport, str] | None:
    """The earlier import of this file that this one repeats: the same options (any study
    name), or, for an import recorded before options were kept, any unless `--study` names a
    new study. None: this import makes a new study."""
    with Session(engine) as session:
        rows = session.execute(
            select(LabelImport, Study.name)
            .join(Study, Study.id == LabelImport.study_id)
            .where(LabelImport.sha256 == sha256)
            .order_by(LabelImport.id)
        ).all()
        for record, name in rows:
            recorded = record.detail.get("options")
            if recorded == options or (recorded is None and study in (None, name)):
                session.expunge(record)
                return record, name
        return None


def _spec_and_dataset(
    engine: Engine, task: str | None, dataset_id: int | None
) -> tuple[specs.TaskSpec, Dataset | None]:
    if dataset_id is None:
        if task is None:
            raise UserError(
                "say where the items come from: --dataset ID (an imported dataset, matched by "
                "item id) or --task TASK (items made from the file's columns)"
            )
        return specs.load_task(task), None
    with Session(engine) as session:
        dataset = session.get(Dataset, dataset_id)
        if dataset is None:
            raise UserError(f"no dataset {dataset_id}; `annotate datasets` lists them")
        session.expunge(dataset)
    spec = specs.load_task(dataset.task)
    if task is not None and specs.load_task(task).name != spec.name:
        raise UserError(f"dataset {dataset_id} is {dataset.task}, not {task}")
    return spec, dataset


def _check_labels(
    file: LabelFile, spec: specs.TaskSpec, values: str | None
) -> list[tuple[RawLabel, Any]]:
    """Each label with its stored value; the first bad one is a DataFileError."""
    mapper = value_map(spec, values)
    seen: dict[tuple[str, str], int] = {}
    out = []
    for label in file.labels:
        key = (label.item, label.worker)
        if key in seen:
            raise DataFileError(
                file.where(label),
                label.line,
                # The line names the worker: their platform id never goes in a message.
                f"the worker of this line labels item {label.item!r} twice "
                f"(first on line {seen[key]})",
            )
        seen[key] = label.line
        value, reason = mapper(label.value)
        if reason is not None:
            raise DataFileError(file.where(label), label.line, reason)
        out.append((label, value))
    return out


def _dataset_items(engine: Engine, dataset: Dataset, file: LabelFile) -> dict[str, int]:
    with engine.connect() as conn:
        ids = dict(
            conn.execute(select(Item.source_id, Item.id).where(Item.dataset_id == dataset.id)).all()
        )
    for label in file.labels:
        if label.item not in ids:
            raise DataFileError(
                file.where(label),
                label.line,
                f"item {label.item!r} is not in dataset {dataset.id} "
                f"({Path(dataset.path).name}, {dataset.task})",
            )
    return ids


def _new_items(file: LabelFile, spec: specs.TaskSpec) -> list[tuple[str, dict[str, Any], Any]]:
    """(source id, fields, gold) of each item the file names, from its first label's columns.
    A later label of the item that gives another text or gold is an error at its line: one
    of the two is wrong, and keeping the first would score that worker against an item they
    never saw."""
    first: dict[str, RawLabel] = {}
    for label in file.labels:
        seen = first.setdefault(label.item, label)
        if seen is not label:
            _same_item(file, spec, seen, label)
    items = []
    for source_id, label in first.items():
        fields: dict[str, Any] = {}
        for f in spec.fields:
            value = label.fields.get(f.name)
            if value in (None, "") and not f.optional:
                raise DataFileError(
                    file.where(label),
                    label.line,
                    f"item {source_id!r} has no {f.name} (the file's column for it: "
                    f"--map {f.name}=COLUMN; or import the dataset and pass --dataset)",
                )
            if value not in (None, ""):
                fields[f.name] = value
        gold = None
        if label.gold is not None:
            gold = normalise_label(label.gold, spec, file.where(label), label.line)
        items.append((source_id, fields, gold))
    return items


def _same_item(file: LabelFile, spec: specs.TaskSpec, first: RawLabel, later: RawLabel) -> None:
    """Refuse `later` if it gives the item a text or a gold label other than `first` gave (a
    column left empty on a later line gives none)."""
    given = [(f.name, first.fields.get(f.name), later.fields.get(f.name)) for f in spec.fields]
    if first.gold is not None and later.gold is not None:
        where = file.where(first), file.where(later)
        golds = [
            normalise_label(g, spec, w, label.line)
            for g, w, label in ((first.gold, where[0], first), (later.gold, where[1], later))
        ]
        given.append(("gold label", *golds))
    for what, before, now in given:
        if now in (None, "") or before in (None, "") or _plain(before) == _plain(now):
            continue
        there = file.where(first)
        on = f"line {first.line}" if there == file.where(later) else f"{there}:{first.line}"
        raise DataFileError(
            file.where(later),
            later.line,
            f"item {later.item!r} has another {what} than on {on} ({_shown(now)} against "
            f"{_shown(before)}): each item must read the same on every line",
        )


def _same_items(
    session: Session, dataset: Dataset, new_items: list[tuple[str, dict[str, Any], Any]]
) -> dict[str, int]:
    """Source id -> item id of `dataset`, made by an earlier import of the same file, when
    this import reads the same items from it; else the import is refused (the columns it
    maps to the items' text or gold differ: they would be other items under the same ids)."""
    stored = session.execute(
        select(Item.source_id, Item.id, Item.fields, Item.gold)
        .where(Item.dataset_id == dataset.id)
        .order_by(Item.position)
    ).all()
    if [(r.source_id, r.fields, r.gold) for r in stored] != new_items:
        raise UserError(
            f"this file was imported before (dataset {dataset.id}) with other columns as the "
            "items' text or gold: import it with the same --map, or pass --dataset "
            f"{dataset.id} to label its items as imported then"
        )
    return {r.source_id: r.id for r in stored}


def _plain(value: Any) -> Any:
    """A cell as compared: text without the spaces around it."""
    return value.strip() if isinstance(value, str) else value


def _shown(value: Any) -> str:
    return repr(textwrap.shorten(str(_plain(value)), 60, placeholder="…"))


def _pseudonyms(
    session: Session, platform: str, workers: list[str]
) -> tuple[dict[str, int], list[str]]:
    """Annotator id per worker id, and the workers' pseudonyms in the file's order. A worker
    keeps one annotator per platform (the crowd columns annotator.platform/platform_id, as a
    worker who arrives by a platform link does), so a second import, or a crowd study, finds
    them again; a new worker gets the next free pseudonym (w01, w02, ...)."""
    known = dict(
        session.execute(
            select(Annotator.platform_id, Annotator.id).where(Annotator.platform == platform)
        ).all()
    )
    names = dict(session.execute(select(Annotator.id, Annotator.name)).all())
    taken = set(names.values())
    width = max(2, len(str(len(workers) + len(taken))))
    number = 0
    ids: dict[str, int] = {}
    pseudonyms: list[str] = []
    for worker in workers:
        annotator_id = known.get(worker)
        if annotator_id is None:
            while True:
                number += 1
                name = f"w{number:0{width}d}"
                if name not in taken:
                    break
            annotator = Annotator(name=name, platform=platform, platform_id=worker)
            session.add(annotator)
            session.flush()
            assert annotator.id is not None
            annotator_id = known[worker] = annotator.id
            names[annotator_id] = name
            taken.add(name)
        ids[worker] = annotator_id
        pseudonyms.append(names[annotator_id])
    return ids, pseudonyms


def _protocol(
    spec: specs.TaskSpec,
    k: int,
    n_items: int,
    sentence: str,
    notes: list[str],
    tie_rule: str | None,
) -> specs.ProtocolSpec:
    preset = specs.load_protocol("superglue-2019" if spec.benchmark == "superglue" else "glue-2019")
    overrides: dict[str, Any] = {
        "name": PROTOCOL_NAME,
        "description": sentence,
        "source": "labels imported with `annotate import-labels`",
        "training_items": 0,
        "gate_rule": "manual",
        "gate_min_items": 0,
        "test_sample": max(n_items, 1),
        "annotators_per_item": k,
        "stop_when_decided": False,
        "catch_rate": 0.0,
        "assumptions": [sentence, *notes],
    }
    if tie_rule is not None:
        overrides["tie_rule"] = tie_rule
    return preset.effective(spec.name, overrides)


def import_labels(
    engine: Engine,
    path: Path,
    *,
    study: str | None = None,
    fmt: str | None = None,
    task: str | None = None,
    dataset_id: int | None = None,
    mapping: dict[str, str] | None = None,
    values: str | None = None,
    k: int | None = None,
    keep_rejected: bool = False,
    tie_rule: str | None = None,
    skip_when: list[tuple[str, str | None]] | None = None,
) -> LabelImportResult:
    """Read `path`, check every label, then write the study in one transaction."""
    mapping = dict(mapping or {})
    skip_when = list(skip_when or [])
    chosen = registry.get(fmt) if fmt else None  # an unknown --format: before anything else
    if not path.exists():
        raise UserError(f"{path}: no such file")
    source = chosen or registry.detect(path)
    if path.is_file():
        sha256 = file_sha256(path)
    else:
        sha256 = _folder_sha256(path, source.files(path))
    spec, dataset = _spec_and_dataset(engine, task, dataset_id)
    reads = source.source
    fields = [f.name for f in spec.fields] if reads.reads_fields else []
    check_map_keys(mapping, reads.name, reads.map_keys, fields)
    if dataset is not None:
        # The items' text and gold are the dataset's: a column for them would be ignored.
        for key in mapping:
            if key == "gold" or key in {f.name for f in spec.fields}:
                raise UserError(
                    f"--map {key}={mapping[key]}: with --dataset the items' text and gold "
                    f"come from dataset {dataset.id}; leave it out, or make the items from "
                    "the file's columns with --task instead of --dataset"
                )
    flag = mapping.get("flag")
    side = tuple(dict.fromkeys([*(c for c, _ in skip_when), *([flag] if flag else [])]))
    if side and not reads.reads_side_columns:
        what = "--skip-when" if skip_when else "--map flag="
        raise UserError(
            f"{what}: the {reads.name} format has no column beside each answer to read "
            "(MTurk batches and long files have)"
        )
    options_key = import_options(
        reads.name, task, dataset_id, mapping, values, k, keep_rejected, tie_rule, skip_when
    )
    earlier = _already(engine, sha256, options_key, study)
    if earlier is not None:
        record, name = earlier
        return LabelImportResult(
            study=name,
            format=record.format,
            path=record.path,
            sha256=sha256,
            n_labels=record.n_labels,
            n_items=int(record.detail.get("n_items", 0)),
            n_annotators=len(record.detail.get("annotators", ())),
            k=int(record.detail.get("k", 0)),
            collected=str(record.detail.get("collected", "")),
            already_imported=True,
        )
    name = (study or path.stem).strip()
    if not name:
        raise UserError("a study needs a name (--study NAME)")
    options = ReadOptions(
        {k_: v for k_, v in mapping.items() if k_ != "flag"},
        [f.name for f in spec.fields],
        keep_rejected=keep_rejected,
        side_columns=side,
    )
    file = source.read(path, options)
    check_text(file)
    # The file's items, whichever answers --skip-when leaves out: an import of the same file
    # with other options finds the same items (one dataset per task and file).
    new_items = _new_items(file, spec) if dataset is None else []
    n_skipped, n_flagged = skip_and_flag(file, skip_when, flag)
    checked = _check_labels(file, spec, values)
    per_item = Counter(label.item for label in file.labels)
    items_in_order = list(per_item)
    if k is None:
        counts = Counter(per_item.values()).most_common()
        k = min(n for n, c in counts if c == counts[0][1])  # a tie: the smaller k
    if k < 1:
        raise UserError("--k must be at least 1")
    notes = _notes(file, per_item, k)
    sentence = collected_sentence(
        file,
        f"left out: {_plural(n_skipped, 'answer')} with {skip_text(skip_when)} (--skip-when)"
        if skip_when
        else "",
        f"flagged: {_plural(n_flagged, 'answer')} with {flag} set, its value as the comment "
        f"(--map flag={flag})"
        if flag
        else "",
    )
    protocol = _protocol(spec, k, len(items_in_order), sentence, notes, tie_rule)
    known_ids = _dataset_items(engine, dataset, file) if dataset is not None else None
    with write_session(engine) as session:
        if session.scalars(select(Study).where(Study.name == name)).first() is not None:
            again = session.scalar(
                select(Study.name)
                .join(LabelImport, LabelImport.study_id == Study.id)
                .where(LabelImport.sha256 == sha256)
            )
            raise UserError(
                f"a study named {name!r} exists already (--study NAME)"
                + (
                    f"; the file was imported as study {again!r} with other options: "
                    "name this import's study with --study NAME"
                    if again is not None
                    else ""
                )
            )
        if dataset is None:
            # The same file imported before with other options (`--tie-rule`, another study):
            # its items are the dataset made then (one dataset per task and file).
            dataset = session.scalars(
                select(Dataset).where(Dataset.task == spec.name, Dataset.sha256 == sha256)
            ).first()
            if dataset is not None:
                known_ids = _same_items(session, dataset, new_items)
        if dataset is None:
            made = Dataset(
                task=spec.name,
                split="test",
                path=str(path.resolve()),
                sha256=sha256,
                n_items=len(new_items),
                detail={
                    "items": len(new_items),
                    "labelled": int(any(g is not None for _, _, g in new_items)),
                    "from_labels": 1,
                },
            )
            session.add(made)
            session.flush()
            assert made.id is not None
            session.connection().execute(
                insert(Item.__table__),
                [
                    {
                        "dataset_id": made.id,
                        "position": n,
                        "source_id": source_id,
                        "fields": fields,
                        "gold": gold,
                        "tags": None,
                    }
                    for n, (source_id, fields, gold) in enumerate(new_items)
                ],
            )
            known_ids = dict(
                session.execute(
                    select(Item.source_id, Item.id).where(Item.dataset_id == made.id)
                ).all()
            )
            test_dataset_id = made.id
        else:
            assert dataset.id is not None
            test_dataset_id = dataset.id
        assert known_ids is not None
        workers = list(dict.fromkeys(label.worker for label in file.labels))
        annotator_ids, pseudonyms = _pseudonyms(session, file.platform, workers)
        record = Study(
            name=name,
            task=spec.name,
            protocol=protocol.model_dump(),
            task_spec=spec.model_dump(mode="json"),
            train_dataset_id=None,
            test_dataset_id=test_dataset_id,
            state="test",
        )
        session.add(record)
        session.flush()
        assert record.id is not None
        session.connection().execute(
            insert(StudyItem.__table__),
            [
                {
                    "study_id": record.id,
                    "item_id": known_ids[item],
                    "phase": "test",
                    "position": n,
                    "n_labels": per_item[item],
                    "remaining": max(k - per_item[item], 0),
                }
                for n, item in enumerate(items_in_order)
            ],
        )
        session.connection().execute(
            insert(Label.__table__),
            [
                {
                    "study_id": record.id,
                    "item_id": known_ids[label.item],
                    "annotator_id": annotator_ids[label.worker],
                    "phase": "test",
                    "value": value,
                    "correct": None,
                    # No time in the file: none stored (unknown, never the import's moment);
                    # a clock time without a duration keeps the other side empty (the time
                    # on task unknown, never 0 s).
                    "shown_at": label.shown_at,
                    "answered_at": label.answered_at,
                    "flag": label.flag,
                    "comment": label.comment,
                    "revisions": 0,
                    "raw": as_given(label.value),
                }
                for label, value in checked
            ],
        )
        detail = {
            "platform": file.platform,
            "collected": sentence,
            "n_assignments": file.n_assignments,
            "n_items": len(items_in_order),
            "k": k,
            "excluded": file.n_excluded,
            "notes": notes,
            "values": values,
            "map": mapping,
            "options": options_key,
            "skipped": n_skipped,
            "flagged": n_flagged,
            "times": (
                label_times.RECORDED
                if file.has_times and file.dates
                else label_times.DURATIONS_ONLY
                if file.has_times
                else label_times.NONE_IN_FILE
            ),
            # The pseudonyms only: each worker's platform id is personal data, kept on their
            # annotator row alone (where payment files and allow-lists read it).
            "annotators": pseudonyms,
        }
        session.add(
            LabelImport(
                study_id=record.id,
                format=file.format,
                path=str(path.resolve()),
                sha256=sha256,
                n_labels=len(checked),
                detail=json.loads(json.dumps(detail)),
            )
        )
    tables = (Item.__tablename__, StudyItem.__tablename__, Label.__tablename__)
    refresh_statistics(engine, *tables)  # type: ignore[arg-type]
    return LabelImportResult(
        study=name,
        format=file.format,
        path=str(path),
        sha256=sha256,
        n_labels=len(checked),
        n_items=len(items_in_order),
        n_annotators=len(workers),
        k=k,
        collected=sentence,
        notes=notes,
        excluded=file.n_excluded,
        n_skipped=n_skipped,
        n_flagged=n_flagged,
        dataset_id=test_dataset_id,
        created_items=dataset is None,
    )


def _folder_sha256(folder: Path, files: list[Path]) -> str:
    """A folder's files (Potato: one per user) as one digest: names and contents, in order."""
    import hashlib

    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(file_sha256(path).encode())
    return digest.hexdigest()


def _notes(file: LabelFile, per_item: Counter[str], k: int) -> list[str]:
    """What the datasheet should say about the collection beyond the headline sentence."""
    notes = []
    for why, n in sorted(file.n_excluded.items()):
        notes.append(f"left out: {why}: {n}")
    over = sorted({h for h, m in file.max_assignments.items() if m > k})
    if over:
        most = max(file.max_assignments[h] for h in over)
        notes.append(
            f"{_plural(len(over), 'HIT')} asked for more than k = {k} assignments "
            f"(MaxAssignments up to {most}); every approved assignment is counted"
        )
    more = sum(1 for n in per_item.values() if n > k)
    fewer = sum(1 for n in per_item.values() if n < k)
    if more:
        notes.append(f"{_plural(more, 'item')} with more than k = {k} labels: all are counted")
    if fewer:
        notes.append(f"{_plural(fewer, 'item')} with fewer than k = {k} labels")
    if not file.has_times:
        notes.append("the file records no times: time on task is unknown (left empty, never 0)")
    elif not file.dates:
        notes.append(
            f"{label_times.DURATIONS_NOTE}: each worker's answers are laid end to end "
            "from 1970-01-01, so first and last label times are not real dates"
        )
    elif file.time_note:
        notes.append(file.time_note)
    return notes
