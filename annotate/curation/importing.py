"""Import a diagnostic file into a set as its starting content: GLUE `diagnostic-full.tsv` or
SuperGLUE `AX-b.jsonl`, read by the task readers of glue/ax and superglue/axb.

Each row becomes one example (one direction), in file order. Two consecutive rows whose
sentences are swapped are the two directions of one pair, as in the real files, and share a
pair number. All or nothing: a bad row names its line and nothing is stored. A file already
imported into the set (same sha256) is skipped, and so is each pair (or unpaired row) of a file
that the set already holds (the same sentences, spacing and accent encoding aside, as the
duplicate rule of `validation.sentence_key` has it; a pair counts when either direction is
there): importing an export of the set, or a file that shares pairs with it, adds no
duplicates. Rows that repeat within the file itself are kept (the GLUE diagnostic has such).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, insert
from sqlmodel import Session, select

from annotate import specs
from annotate.curation.curators import stored_name
from annotate.curation.examples import next_numbers, sentence_keys
from annotate.curation.sets import SetInfo
from annotate.curation.validation import (
    curator_name,
    empty_sentence_problems,
    sentence_key,
    tsv_problem,
)
from annotate.errors import DataFileError, UserError
from annotate.formats.importer import file_sha256
from annotate.formats.readers import FileSummary, ParsedItem, read_items
from annotate.store.curation_models import CurationExample, CurationSet
from annotate.store.engine import write_session
from annotate.store.models import utcnow
from annotate.taxonomy import check_tags

TASK_OF_FORMAT = {"glue": "glue/ax", "superglue": "superglue/axb"}
SCHEME_OF_FORMAT = {"glue": "three-way", "superglue": "two-way"}
SENTENCE_FIELDS = {"glue": ("premise", "hypothesis"), "superglue": ("sentence1", "sentence2")}


@dataclass
class ImportSummary:
    set_name: str
    path: str
    format: str
    created: bool
    """Whether the import created the set."""
    rows: int = 0
    pairs: int = 0
    labels: dict[str, int] = field(default_factory=dict)
    already_imported: bool = False
    skipped: int = 0
    """Rows of the file left out because the set holds their pair already."""
    skipped_pairs: int = 0


@dataclass(frozen=True)
class _Row:
    line: int
    source_id: str
    premise: str
    hypothesis: str
    label: str
    tags: dict[str, list[str]]
    domain: str


def detect_format(path: Path) -> str:
    """The format of a diagnostic file from its name: superglue for JSON lines (AX-b.jsonl),
    glue for the TSV (diagnostic-full.tsv)."""
    return "superglue" if path.suffix.lower() in {".jsonl", ".json"} else "glue"


def _row(item: ParsedItem, fmt: str, path: Path) -> _Row:
    if item.gold is None:
        raise DataFileError(
            path,
            item.line,
            "no label: curation needs the labelled, tagged file (diagnostic-full.tsv or "
            "AX-b.jsonl, not AX.tsv)",
        )
    try:
        tags = check_tags(item.tags or {})
    except UserError as exc:
        raise DataFileError(path, item.line, str(exc)) from None
    first, second = SENTENCE_FIELDS[fmt]
    premise, hypothesis = str(item.fields[first]), str(item.fields[second])
    domain = str(item.fields.get("domain") or "")
    problems = [*empty_sentence_problems(premise, hypothesis), *tsv_problem(domain, "domain")]
    if problems:
        raise DataFileError(path, item.line, problems[0].message)
    return _Row(
        line=item.line,
        source_id=item.source_id,
        premise=premise,
        hypothesis=hypothesis,
        label=str(item.gold),
        tags=tags,
        domain=domain,
    )


def read_diagnostic(path: Path, fmt: str) -> list[_Row]:
    spec = specs.load_task(TASK_OF_FORMAT[fmt])
    return [_row(item, fmt, path) for item in read_items(path, spec, FileSummary())]


def pair_numbers(rows: list[_Row], first: int) -> list[int | None]:
    """Pair numbers from `first` on for consecutive rows with swapped sentences, else None."""
    numbers: list[int | None] = [None] * len(rows)
    i, pair = 0, first
    while i < len(rows) - 1:
        a, b = rows[i], rows[i + 1]
        if a.premise == b.hypothesis and a.hypothesis == b.premise:
            numbers[i] = numbers[i + 1] = pair
            pair += 1
            i += 2
        else:
            i += 1
    return numbers


def _units(rows: list[_Row]) -> list[list[int]]:
    """The file's rows, by index, as pairs (two consecutive rows with swapped sentences) and
    unpaired rows, in file order: what is imported or skipped as one."""
    numbers = pair_numbers(rows, 1)
    units: list[list[int]] = []
    for i, number in enumerate(numbers):
        if number is not None and i and numbers[i - 1] == number:
            units[-1].append(i)
        else:
            units.append([i])
    return units


def _open_or_create(
    session: Session, set_name: str, scheme: str, author: str
) -> tuple[SetInfo, bool]:
    row = session.exec(
        select(CurationSet).where(CurationSet.name == set_name).with_for_update()
    ).first()
    if row is None:
        if not set_name.strip():
            raise UserError("a curation set needs a name")
        row = CurationSet(name=set_name, labels=scheme, created_by=author)
        session.add(row)
        session.flush()
        return SetInfo.of(row), True
    if row.labels != scheme:
        raise UserError(
            f"set {set_name!r} has {row.labels} labels but this file has {scheme} labels; "
            "import it into another set"
        )
    return SetInfo.of(row), False


def import_diagnostic(
    engine: Engine, set_name: str, path: Path, author: str = "", *, fmt: str | None = None
) -> ImportSummary:
    """Import `path` into set `set_name`, creating the set when it does not exist (with the
    file's label scheme). Examples are credited to `author` (default: "imported")."""
    author = curator_name(author) if author else ""
    if path.is_dir():
        raise UserError(
            f"{path} is a folder: name the diagnostic file in it "
            "(diagnostic-full.tsv or AX-b.jsonl)"
        )
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    fmt = fmt or detect_format(path)
    if fmt not in TASK_OF_FORMAT:
        raise UserError(f"unknown diagnostic format {fmt!r}; use glue or superglue")
    rows = read_diagnostic(path, fmt)  # read (and fail) before taking the write lock
    if not rows:
        raise DataFileError(path, None, "the file has no rows")
    sha256 = file_sha256(path)
    scheme = SCHEME_OF_FORMAT[fmt]
    with write_session(engine) as session:
        author = stored_name(session, author) if author else ""
        info, created = _open_or_create(session, set_name, scheme, author)
        summary = ImportSummary(info.name, str(path), fmt, created)
        if any(source.get("sha256") == sha256 for source in info.sources):
            summary.already_imported = True
            return summary
        position, pair = next_numbers(session, info.id)
        held = sentence_keys(session, info.id)
        new: list[tuple[_Row, int | None]] = []
        for unit in _units(rows):
            paired = len(unit) == 2
            if any(sentence_key(rows[i].premise, rows[i].hypothesis) in held for i in unit):
                summary.skipped += len(unit)
                summary.skipped_pairs += 1 if paired else 0
                continue
            new += [(rows[i], pair if paired else None) for i in unit]
            pair += 1 if paired else 0
        now = utcnow()
        values = [
            _values(info.id, position + n, number, row, author or "imported", path.name, now)
            for n, (row, number) in enumerate(new)
        ]
        if values:
            session.connection().execute(insert(CurationExample.__table__), values)
        set_row = session.get(CurationSet, info.id)
        assert set_row is not None
        source = {
            "file": path.name,
            "sha256": sha256,
            "format": fmt,
            "rows": len(new),
            "skipped": summary.skipped,
            "imported_at": now.isoformat(timespec="seconds"),
        }
        set_row.sources = [*set_row.sources, source]  # a new list: SQLAlchemy sees the change
        session.add(set_row)
        summary.rows = len(new)
        summary.pairs = len({number for _, number in new if number is not None})
        summary.labels = dict(Counter(row.label for row, _ in new))
        return summary


def _values(
    set_id: int,
    position: int,
    pair_id: int | None,
    row: _Row,
    author: str,
    file_name: str,
    now: datetime,
) -> dict[str, Any]:
    return {
        "set_id": set_id,
        "position": position,
        "pair_id": pair_id,
        "premise": row.premise,
        "hypothesis": row.hypothesis,
        "label": row.label,
        "tags": row.tags,
        "domain": row.domain,
        "note": "",
        "author": author,
        "origin": f"{file_name}:{row.line}",
        "source_id": row.source_id,
        "version": 1,
        "retired": False,
        "created_at": now,
        "updated_at": now,
    }
