"""Readers for task data files: GLUE TSV, SuperGLUE JSONL (incl. nested MultiRC and ReCoRD),
the GLUE diagnostic, and generic CSV/JSONL for custom tasks.

Every reader yields `ParsedItem`s one by one (a 400,000-row file is never held as objects) and
raises `DataFileError(path, line, reason)` at the first bad line. Which columns or keys hold what
is declared by the task spec; the quirks of the real files are handled here:
tab split without quoting (fields may start with a stray `"`), a UTF-8 BOM, CRLF, no final
newline, files with or without a header row, string or boolean labels, string ids.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotate.errors import DataFileError
from annotate.formats.sniff import KIND_NAMES, file_kind, place_unit
from annotate.specs import TaskSpec
from annotate.splits import canonical_split

MAX_LINE_BYTES = 16 * 1024 * 1024
"""The longest line a data file may have (16 MiB; a MultiRC paragraph line is some 10 KiB).
A longer one is refused with its line number instead of being read into memory whole."""
MAX_JSON_DEPTH = 64
"""How deeply a JSON line may nest (GLUE/SuperGLUE lines nest 4 levels at most)."""
MAX_ID_CHARS = 200

csv.field_size_limit(1 << 30)  # passages can be long; the default 128 KiB limit is arbitrary


@dataclass(slots=True)
class ParsedItem:
    source_id: str
    line: int
    fields: dict[str, Any]
    gold: Any = None
    tags: dict[str, list[str]] | None = None
    file: Path | None = None
    """The file the item is in, where it is one of several read as one (`read_parts`)."""


@dataclass
class FileSummary:
    """Filled in by a reader while it goes: counts for nested formats."""

    detail: dict[str, int] = field(default_factory=dict)
    has_gold: bool = False


# --- shared pieces ---------------------------------------------------------------------------


def _decoded_lines(path: Path, encoding: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, text without line ending) for each line; a line that is not valid
    text in `encoding` is an error naming that line. A leading BOM is dropped."""
    with path.open("rb") as f:
        number = 0
        while raw := f.readline(MAX_LINE_BYTES + 1):
            number += 1
            if len(raw) > MAX_LINE_BYTES:
                raise DataFileError(
                    path,
                    number,
                    f"line longer than the limit of {MAX_LINE_BYTES // (1024 * 1024)} MiB "
                    "(is this a data file of the task?)",
                )
            try:
                text = raw.decode(encoding)
            except UnicodeDecodeError as exc:
                raise DataFileError(
                    path,
                    number,
                    f"not valid {encoding.removesuffix('-sig').upper()} "
                    f"(byte {exc.start + 1} of the line)",
                ) from None
            if number == 1:
                text = text.removeprefix("\ufeff")
            yield number, text.rstrip("\r\n")


def normalise_label(raw: Any, spec: TaskSpec, path: Path, line: int) -> Any:
    """The gold label in its stored form: text for classes ("true", "0", "entailment"), a float
    for a rating. Unknown labels are errors."""
    if spec.kind == "regression":
        assert spec.scale is not None
        try:
            value = float(raw)
        except (TypeError, ValueError):
            raise DataFileError(path, line, f"label {raw!r} is not a number") from None
        if not math.isfinite(value) or not spec.scale.min <= value <= spec.scale.max:
            raise DataFileError(
                path, line, f"label {raw!r} is outside {spec.scale.min}..{spec.scale.max}"
            )
        return value
    if isinstance(raw, bool):
        text = "true" if raw else "false"
    elif isinstance(raw, int):
        text = str(raw)
    elif isinstance(raw, str):
        text = raw.strip()
    else:
        raise DataFileError(path, line, f"label {raw!r} is not a label")
    allowed = spec.label_values()
    if text not in allowed:
        named = spec.label_for_name(text)  # "True"/"False" in re-exported copies, Hub names
        if named is not None:
            return named
        numbered = all(value.lstrip("-").isdigit() for value in allowed)
        if isinstance(raw, int) and not isinstance(raw, bool) and not numbered:
            # A class number only where the task's labels are names: COPA's are 0 and 1
            # themselves, so its 2 is an unknown label that no --label-names would mend.
            raise DataFileError(
                path,
                line,
                f"label {raw} is a class number, and the file gives no class names; pass "
                "--label-names with the dataset's names in their order (its ClassLabel "
                f"names), or put its dataset_info.json beside it; {spec.name} labels are "
                f"{', '.join(allowed)}",
            )
        raise DataFileError(
            path, line, f"unknown label {raw!r}; {spec.name} labels are {', '.join(allowed)}"
        )
    return text


def split_tags(cell: Any) -> list[str]:
    """Fine tags of one coarse category: `;`-separated with no spaces in the real files."""
    if cell is None:
        return []
    if isinstance(cell, list):
        return [str(t).strip() for t in cell if str(t).strip()]
    return [t.strip() for t in str(cell).split(";") if t.strip()]


def _wrong_task_hint(spec: TaskSpec) -> str:
    return f" (is this a file of another task than {spec.name}?)"


# --- tabular files (GLUE TSV, CSV) -----------------------------------------------------------


class _Columns:
    """Where each wanted value sits in a row, resolved once from the header."""

    def __init__(self, header: list[str], spec: TaskSpec, path: Path, line: int) -> None:
        self.width = len(header)
        position = {name.strip(): i for i, name in enumerate(header)}

        def find(candidates: list[str]) -> int | None:
            return next((position[c] for c in candidates if c in position), None)

        src = spec.source
        self.id = find(src.id)
        if self.id is None and src.id_required:
            raise DataFileError(
                path, line, f"missing id column {' or '.join(src.id)}" + _wrong_task_hint(spec)
            )
        self.label = find(src.label)
        self.fields: list[tuple[str, int | None]] = []
        for f in spec.fields:
            index = find(f.sources())
            if index is None and not f.optional:
                raise DataFileError(
                    path,
                    line,
                    f"missing column {' or '.join(repr(s) for s in f.sources())}; the header has "
                    f"{', '.join(repr(h) for h in header)}" + _wrong_task_hint(spec),
                )
            self.fields.append((f.name, index))
        self.tags = [(coarse, find(cols)) for coarse, cols in src.tag_columns.items()]


def _looks_like_header(row: list[str], spec: TaskSpec) -> bool:
    names = {c.strip() for c in row}
    wanted = [s for f in spec.fields if not f.optional for s in f.sources()]
    return any(w in names for w in wanted) or any(c in names for c in spec.source.id)


def _read_rows(path: Path, spec: TaskSpec) -> Iterator[tuple[int, list[str]]]:
    delimiter = spec.source.delimiter or ("," if path.suffix.lower() == ".csv" else "\t")
    if spec.source.reader == "tsv":
        # GLUE files are tab-split with no quoting at all: a field may begin with a `"` that is
        # never closed (MRPC, STS-B), which a CSV parser would read as a multi-line field.
        for number, text in _decoded_lines(path, spec.source.encoding):
            if text.strip():
                yield number, text.split(delimiter)
        return
    # Real CSV (custom tasks): quoted fields may span lines; csv tracks the line numbers.
    try:
        with path.open(encoding=spec.source.encoding, newline="") as f:
            reader = csv.reader(f, delimiter=delimiter)
            start = 1
            for row in reader:
                if any(cell.strip() for cell in row):
                    yield start, row
                start = reader.line_num + 1
    except UnicodeDecodeError as exc:
        raise DataFileError(
            path, None, f"not valid text in {spec.source.encoding}: {exc}"
        ) from None
    except csv.Error as exc:
        raise DataFileError(path, None, f"CSV syntax error: {exc}") from None


def read_table(
    path: Path, spec: TaskSpec, summary: FileSummary, start: int = 0
) -> Iterator[ParsedItem]:
    rows = _read_rows(path, spec)
    first = next(rows, None)
    if first is None:
        raise DataFileError(path, 1, "the file is empty")
    line, row = first
    if _looks_like_header(row, spec):
        columns = _Columns(row, spec, path, line)
        body: Iterator[tuple[int, list[str]]] = rows
    elif spec.source.headerless_columns and len(row) == len(spec.source.headerless_columns):
        columns = _Columns(spec.source.headerless_columns, spec, path, line)
        body = _chain_first(first, rows)
    else:
        raise DataFileError(
            path, line, "no header row naming the task's columns" + _wrong_task_hint(spec)
        )
    summary.has_gold = columns.label is not None
    for number, (line, row) in enumerate(body, start):
        if len(row) != columns.width:
            raise DataFileError(
                path, line, f"row has {len(row)} fields, expected {columns.width} (ragged row)"
            )
        source_id = row[columns.id].strip() if columns.id is not None else str(number)
        if not source_id:
            raise DataFileError(path, line, "empty id")
        if len(source_id) > MAX_ID_CHARS:
            raise DataFileError(
                path, line, f"id of {len(source_id)} characters (at most {MAX_ID_CHARS})"
            )
        fields = {name: (row[i] if i is not None else "") for name, i in columns.fields}
        gold = None
        if columns.label is not None:
            gold = normalise_label(row[columns.label], spec, path, line)
        tags = None
        if columns.tags:
            tags = {c: split_tags(row[i]) if i is not None else [] for c, i in columns.tags}
        yield ParsedItem(source_id, line, fields, gold, tags)


def _chain_first(first: tuple[int, list[str]], rest: Iterator[tuple[int, list[str]]]):
    yield first
    yield from rest


# --- JSON lines ------------------------------------------------------------------------------


def json_lines(path: Path, encoding: str) -> Iterator[tuple[int, dict[str, Any]]]:
    seen_any = earlier = False
    for number, text in _decoded_lines(path, encoding):
        if not text.strip():
            continue
        earlier, seen_any = seen_any, True  # a JSON line before this one
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            reason = f"JSON syntax error: {exc.msg} (column {exc.colno})"
            if not earlier and not text.lstrip().startswith(("{", "[")):
                # A first line that is no JSON at all: the file is of another layout.
                reason = f"not JSON lines, as this task's files are (a TSV or CSV file?): {reason}"
            raise DataFileError(path, number, reason) from None
        except RecursionError:
            raise DataFileError(
                path, number, f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
            ) from None
        except ValueError as exc:  # e.g. an integer of more than 4300 digits
            raise DataFileError(path, number, f"JSON value refused: {exc}") from None
        if not isinstance(obj, dict):
            raise DataFileError(path, number, "expected one JSON object per line")
        problem = _json_problem(obj)
        if problem:
            raise DataFileError(path, number, problem)
        yield number, obj
    if not seen_any:
        raise DataFileError(path, 1, "the file is empty")


def _json_problem(value: Any, depth: int = 0) -> str | None:
    """Why a parsed JSON value cannot be stored or shown: nesting past MAX_JSON_DEPTH, or a
    lone surrogate (JSON's `\\ud800` escape parses, but is no Unicode text and fails later
    in every report and export)."""
    if depth > MAX_JSON_DEPTH:
        return f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return (
                f"text with a lone surrogate {value[exc.start]!r} at character "
                f"{exc.start + 1} (not valid Unicode)"
            )
        return None
    if isinstance(value, dict):
        items: Any = [*value.keys(), *value.values()]
    elif isinstance(value, list):
        items = value
    else:
        return None
    for part in items:
        problem = _json_problem(part, depth + 1)
        if problem:
            return problem
    return None


def _lookup(obj: dict[str, Any], dotted: str) -> tuple[bool, Any]:
    current: Any = obj
    for part in dotted.split("."):
        if not isinstance(current, dict) or part not in current:
            return False, None
        current = current[part]
    return True, current


def first_present(obj: dict[str, Any], candidates: list[str]) -> tuple[bool, Any]:
    for key in candidates:
        found, value = _lookup(obj, key)
        if found:
            return True, value
    return False, None


def _id_text(value: Any, path: Path, line: int) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise DataFileError(path, line, f"id {value!r} is not an integer or text")
    text = str(value).strip()
    if len(text) > MAX_ID_CHARS:
        raise DataFileError(path, line, f"id of {len(text)} characters (at most {MAX_ID_CHARS})")
    return text


def read_jsonl(
    path: Path, spec: TaskSpec, summary: FileSummary, start: int = 0
) -> Iterator[ParsedItem]:
    src = spec.source
    for number, (line, obj) in enumerate(json_lines(path, src.encoding), start):
        found, raw_id = first_present(obj, src.id)
        if found:
            source_id = _id_text(raw_id, path, line)
        elif src.id_required:
            raise DataFileError(path, line, f"missing key {' or '.join(src.id)}")
        else:
            source_id = str(number)
        fields: dict[str, Any] = {}
        for f in spec.fields:
            found, value = first_present(obj, f.sources())
            # A shown text that is null would reach the annotators as "None"; a hidden field
            # (WiC's offsets) is checked by its own rule in `well_formed`.
            if not found or (value is None and f.shown):
                if not f.optional:
                    keys = " or ".join(repr(s) for s in f.sources())
                    raise DataFileError(
                        path,
                        line,
                        f"missing key {keys}" + _wrong_task_hint(spec)
                        if not found
                        else f"{keys} is null: the item would have no {f.name}",
                    )
                value = ""
            fields[f.name] = value
        gold = None
        has_label, raw_label = first_present(obj, src.label)
        if has_label and raw_label is not None:
            gold = normalise_label(raw_label, spec, path, line)
            summary.has_gold = True
        tags = None
        if src.tag_columns:
            tags = {
                c: split_tags(first_present(obj, keys)[1]) for c, keys in src.tag_columns.items()
            }
        yield ParsedItem(source_id, line, fields, gold, tags)


def read_multirc(
    path: Path, spec: TaskSpec, summary: FileSummary, start: int = 0
) -> Iterator[ParsedItem]:
    """One line per paragraph; one item per question, whose answer is a 0/1 per candidate.
    Question and answer idx are global running numbers in the file."""
    paragraphs = questions = answers = 0
    for line, obj in json_lines(path, spec.source.encoding):
        passage = obj.get("passage")
        if not isinstance(passage, dict) or "text" not in passage or "questions" not in passage:
            raise DataFileError(
                path, line, "missing passage.text / passage.questions" + _wrong_task_hint(spec)
            )
        paragraph_id = _id_text(obj.get("idx", paragraphs), path, line)
        paragraphs += 1
        for q in passage["questions"]:
            if not isinstance(q, dict) or "question" not in q or "answers" not in q:
                raise DataFileError(path, line, "a question lacks 'question' or 'answers'")
            options = []
            gold: dict[str, str] | None = {}
            for a in q["answers"]:
                if not isinstance(a, dict) or "text" not in a or "idx" not in a:
                    raise DataFileError(path, line, "an answer lacks 'text' or 'idx'")
                answer_id = _id_text(a["idx"], path, line)
                options.append({"idx": answer_id, "text": a["text"]})
                if "label" in a and gold is not None:
                    gold[answer_id] = normalise_label(a["label"], spec, path, line)
                else:
                    gold = None
                answers += 1
            questions += 1
            if gold:
                summary.has_gold = True
            yield ParsedItem(
                source_id=_id_text(q.get("idx", start + questions - 1), path, line),
                line=line,
                fields={
                    "paragraph": paragraph_id,
                    "passage": passage["text"],
                    "question": q["question"],
                    "answers": options,
                },
                gold=gold or None,
            )
    summary.detail = {"paragraphs": paragraphs, "questions": questions, "answers": answers}


def _entity_span_problem(first: int, last: int, text: str) -> str | None:
    """Why a ReCoRD entity span (`passage.entities[]` start and end, the end inclusive: the
    entity is `text[start:end + 1]`, as the real files' answers are) is not a part of the
    passage; None when it is."""
    if first < 0:
        return "starts before the passage (a negative start)"
    if last < first:
        return "ends before it starts"
    if last >= len(text):
        return (
            f"ends past the passage, which has {len(text)} characters (0..{len(text) - 1}; an "
            "entity's end is inclusive, its last character)"
        )
    return None


def read_record(
    path: Path, spec: TaskSpec, summary: FileSummary, start: int = 0
) -> Iterator[ParsedItem]:
    """One line per passage; one item per query. Entity spans have an inclusive end."""
    passages = queries = 0
    for line, obj in json_lines(path, spec.source.encoding):
        passage = obj.get("passage")
        if not isinstance(passage, dict) or "text" not in passage or "qas" not in obj:
            raise DataFileError(path, line, "missing passage.text / qas" + _wrong_task_hint(spec))
        text = passage["text"]
        if not isinstance(text, str):
            raise DataFileError(path, line, f"passage.text is {type(text).__name__}, not text")
        entities: list[str] = []
        for number, span in enumerate(passage.get("entities", []), 1):
            try:
                first, last = int(span["start"]), int(span["end"])
            except (KeyError, TypeError, ValueError):
                raise DataFileError(path, line, "an entity lacks integer 'start'/'end'") from None
            if problem := _entity_span_problem(first, last, text):
                raise DataFileError(path, line, f"entity {number} ({first}..{last}) {problem}")
            entity = text[first : last + 1]
            if entity not in entities:
                entities.append(entity)
        passage_id = _id_text(obj.get("idx", passages), path, line)
        passages += 1
        for qa in obj["qas"]:
            if not isinstance(qa, dict) or "query" not in qa:
                raise DataFileError(path, line, "a query lacks 'query'")
            gold = None
            if qa.get("answers"):
                gold = sorted({str(a["text"]) for a in qa["answers"]})
                summary.has_gold = True
            queries += 1
            yield ParsedItem(
                source_id=_id_text(qa.get("idx", start + queries - 1), path, line),
                line=line,
                fields={
                    "passage_idx": passage_id,
                    "source": obj.get("source", ""),
                    "passage": text,
                    "query": qa["query"],
                    "entities": entities,
                },
                gold=gold,
            )
    summary.detail = {"passages": passages, "queries": queries}


READERS: dict[str, Callable[[Path, TaskSpec, FileSummary, int], Iterator[ParsedItem]]] = {
    "tsv": read_table,
    "csv": read_table,
    "jsonl": read_jsonl,
    "multirc": read_multirc,
    "record": read_record,
}


def lone_part(path: Path, spec: TaskSpec) -> None:
    """Refuse a file that is one part of a split in several files (`[source] parts`: CoLA's
    public dev set), read alone: its rows are numbered as one with the other parts', so alone
    it would give its items other ids than the split's (GLUE's, the Hub's)."""
    for split, names in spec.source.parts.items():
        if path.name in names:
            raise DataFileError(
                path,
                None,
                f"one of the {len(names)} files of {spec.name}'s {canonical_split(split)} split "
                f"({', then '.join(names)}), whose rows are numbered as one: alone, its items "
                "would not have the split's ids; give the folder that holds them all",
            )


def read_items(
    path: Path, spec: TaskSpec, summary: FileSummary, start: int = 0
) -> Iterator[ParsedItem]:
    """Items of one file, checked: ids unique. Errors name the file and line. A file without
    ids has its rows numbered from `start`. One part of a split in several files is refused
    (`lone_part`): `read_parts` reads them together."""
    lone_part(path, spec)
    return _checked_items(path, spec, summary, start)


def read_parts(paths: list[Path], spec: TaskSpec, summary: FileSummary) -> Iterator[ParsedItem]:
    """Items of a split that comes in several files (`[source] parts`), read one after the
    other as one file: rows without ids are numbered on from file to file (CoLA's out-of-domain
    dev rows follow the in-domain ones, 527..1042, as in GLUE's dev.tsv), and ids are unique
    across the files."""
    seen: dict[str, tuple[Path, int]] = {}  # shared: an id is unique across the files
    start = 0
    for path in paths:
        for item in _checked_items(path, spec, summary, start, seen):
            start += 1
            item.file = path
            yield item
    summary.detail = {**summary.detail, "files": len(paths)}


def labelled_throughout(items: Iterable[ParsedItem], where: Path) -> Iterator[ParsedItem]:
    """`items`, refused at the first row without a gold label in a file where another row has
    one (or the first row with one where an earlier row has none): a file is labelled on
    every row (train, dev, a diagnostic) or on none (a test file, the Hub's -1 on every row).
    Otherwise the dataset would count as labelled while some items have no gold, and a
    study's training or scoring would meet them unawares."""
    first_labelled: ParsedItem | None = None
    first_unlabelled: ParsedItem | None = None
    for item in items:
        if item.gold is None:
            first_unlabelled = first_unlabelled or item
        else:
            first_labelled = first_labelled or item
        if first_labelled is not None and first_unlabelled is not None:
            missing, other = first_unlabelled, first_labelled
            elsewhere = (
                "" if other.file == missing.file or other.file is None else f"{other.file.name} "
            )
            unit = place_unit(other.file or where)
            raise DataFileError(
                missing.file or where,
                missing.line,
                f"no gold label, while {elsewhere}{unit} {other.line} has one: every row of a "
                "data file has its label, or none does (a test file); give this row its label, "
                "or take the labels out to import the file as unlabelled",
            )
        yield item


def _checked_items(
    path: Path,
    spec: TaskSpec,
    summary: FileSummary,
    start: int,
    seen: dict[str, tuple[Path, int]] | None = None,
) -> Iterator[ParsedItem]:
    """The items of `path`, each id once: in this file, or in the files read before it into
    the same `seen` (a split in several files)."""
    kind = file_kind(path)
    if kind != "text":  # never decode a binary file as lines: say what it is instead
        raise DataFileError(
            path,
            None,
            f"{KIND_NAMES[kind]}; expected a UTF-8 text file of {spec.name} (JSON lines, TSV "
            "or CSV; `annotate import` reads Parquet, Arrow and zip files as well)",
        )
    reader = READERS[spec.source.reader]
    if spec.source.reader == "csv" and path.suffix.lower() in {".jsonl", ".json"}:
        reader = read_jsonl  # a custom task may come as CSV or JSON lines
    seen = {} if seen is None else seen
    for item in reader(path, spec, summary, start):
        if (first := seen.get(item.source_id)) is not None:
            where = f"line {first[1]}" + ("" if first[0] == path else f" of {first[0].name}")
            message = f"duplicate id {item.source_id!r} (first on {where})"
            raise DataFileError(path, item.line, message)
        seen[item.source_id] = (path, item.line)
        yield item
