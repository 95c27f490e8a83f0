"""Items from the rows of a Hugging Face dataset (Parquet, Arrow, `to_json`, `to_csv`).

The Hub's columns are the task's with a few differences the spec already knows how to look
for: `idx` is the id, `label` the gold, fields go by their own name (`premise`, `span1_index`)
when the original file's name (`sentence1`, `target.span1_index`) is not there. An integer
label is an index into the file's ClassLabel names, mapped by name, never by position in the
task's label list; `-1` means no gold (test splits). MultiRC comes one row per answer and
ReCoRD one row per query; both are put back into the items the original files give.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from annotate.errors import DataFileError
from annotate.formats.readers import (
    FileSummary,
    ParsedItem,
    first_present,
    normalise_label,
    split_tags,
)
from annotate.specs import TaskSpec

NO_GOLD = -1
"""The label of an unlabelled row (the test splits of GLUE and SuperGLUE on the Hub)."""

Rows = Iterable[tuple[int, dict[str, Any]]]
"""(row number for messages, row) pairs."""


def _is_no_gold(raw: Any) -> bool:
    if isinstance(raw, bool):
        return False
    if isinstance(raw, int | float):
        return raw == NO_GOLD or (isinstance(raw, float) and math.isnan(raw))
    return raw is None or (isinstance(raw, str) and raw.strip() in ("", str(NO_GOLD)))


def gold_of(raw: Any, names: list[str] | None, spec: TaskSpec, path: Path, line: int) -> Any:
    """The stored gold of one label cell (None: no gold). With class names an integer (or its
    digits, from a CSV) is the index into them, and the name must be one of the task's labels."""
    if _is_no_gold(raw):
        return None
    if names is not None and spec.kind != "regression":
        number = raw
        if isinstance(raw, str) and raw.strip().lstrip("-").isdigit():
            number = int(raw.strip())
        if isinstance(number, int) and not isinstance(number, bool):
            if not 0 <= number < len(names):
                raise DataFileError(
                    path, line, f"label {number} is not a class of the file ({len(names)} names)"
                )
            name = names[number]
            value = spec.label_for_name(name)
            if value is None:
                raise DataFileError(
                    path,
                    line,
                    f"label {number} is {name!r} in the file's class names "
                    f"({', '.join(names)}), not a label of {spec.name} "
                    f"({', '.join(spec.label_values())})",
                )
            return value
    if names is None and spec.kind != "regression" and isinstance(raw, str) and raw.isdigit():
        raw = int(raw)  # `to_csv` writes a class number as its digits: read as the number it is
    return normalise_label(raw, spec, path, line)


def _id(raw: Any, path: Path, line: int) -> str:
    """A row's id as text. A float column of whole numbers (Arrow makes an id column float
    when one of its values is) gives the numbers; the row whose id is not one is refused."""
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    if isinstance(raw, bool) or not isinstance(raw, int | str):
        raise DataFileError(path, line, f"id {raw!r} is not an integer or text")
    return str(raw).strip()


def flat_items(
    rows: Rows, path: Path, spec: TaskSpec, summary: FileSummary, names: dict[str, list[str]]
) -> Iterator[ParsedItem]:
    """One item per row (every task but MultiRC and ReCoRD)."""
    src = spec.source
    # The Hub's own column of a field is read where the original file's is not there; a field
    # the user's --map names is read from that column only.
    id_keys = [*src.id, *([] if "id" in src.mapped else ["idx"])]
    label_keys = [*src.label, *([] if "label" in src.mapped else ["label"])]
    for number, (line, row) in enumerate(rows):
        found, raw_id = first_present(row, id_keys)
        if found and raw_id is not None:
            source_id = _id(raw_id, path, line)
        elif src.id_required:  # numbered by row, items and predictions would pair at random
            wanted = " or ".join(repr(k) for k in dict.fromkeys(id_keys))
            if found:
                raise DataFileError(path, line, f"the item's id, {wanted}, is empty (null)")
            raise DataFileError(
                path,
                line,
                f"missing column {wanted}, the item's id; the file has {', '.join(sorted(row))} "
                f"(is this a file of another task than {spec.name}?)",
            )
        else:
            source_id = str(number)
        fields: dict[str, Any] = {}
        for f in spec.fields:
            keys = [*f.sources(), *([] if f.name in src.mapped else [f.name])]
            found, value = first_present(row, keys)
            if not found or value is None:
                if not f.optional:
                    wanted = " or ".join(repr(s) for s in dict.fromkeys(keys))
                    raise DataFileError(
                        path,
                        line,
                        f"column {wanted} is empty (null): the item would have no {f.name}"
                        if found
                        else f"missing column {wanted}; the file has {', '.join(sorted(row))} "
                        f"(is this a file of another task than {spec.name}?)",
                    )
                value = ""
            fields[f.name] = value
        gold = None
        label_key = next((k for k in label_keys if k in row), None)
        if label_key is not None:
            gold = gold_of(row[label_key], names.get(label_key), spec, path, line)
            summary.has_gold = summary.has_gold or gold is not None
        tags = None
        if src.tag_columns:
            tags = {
                c: split_tags(first_present(row, keys)[1]) for c, keys in src.tag_columns.items()
            }
        yield ParsedItem(source_id, line, fields, gold, tags)


def _nested_id(row: dict[str, Any], key: str, path: Path, line: int) -> str:
    idx = row.get("idx")
    if isinstance(idx, str) and idx.lstrip().startswith("{"):
        # `Dataset.to_csv` writes a nested column as Python's text of the dict: nothing a
        # reader should evaluate, and the ids inside are not worth guessing at.
        raise DataFileError(
            path,
            line,
            f"idx is text ({idx[:60]!r}), as `to_csv` writes the Hub's nested MultiRC/ReCoRD "
            "ids: save the split with `to_json` or `to_parquet` (or use the Parquet files as "
            "downloaded)",
        )
    if not isinstance(idx, dict) or key not in idx:
        raise DataFileError(path, line, f"missing idx.{key} (the Hub's MultiRC/ReCoRD layout)")
    return _id(idx[key], path, line)


def multirc_items(
    rows: Rows, path: Path, spec: TaskSpec, summary: FileSummary, names: dict[str, list[str]]
) -> Iterator[ParsedItem]:
    """The Hub's MultiRC has one row per answer (`paragraph`, `question`, `answer`, `idx`
    {paragraph, question, answer}, `label`); consecutive rows of one question make one item."""
    current: ParsedItem | None = None
    paragraphs: set[str] = set()
    questions = answers = 0
    for line, row in rows:
        missing = [k for k in ("paragraph", "question", "answer") if k not in row]
        if missing:
            raise DataFileError(
                path, line, f"missing column {', '.join(missing)} (the Hub's MultiRC layout)"
            )
        paragraph_id = _nested_id(row, "paragraph", path, line)
        question_id = _nested_id(row, "question", path, line)
        answer_id = _nested_id(row, "answer", path, line)
        if current is None or current.source_id != question_id:
            if current is not None:
                yield current
            paragraphs.add(paragraph_id)
            questions += 1
            current = ParsedItem(
                question_id,
                line,
                {
                    "paragraph": paragraph_id,
                    "passage": row["paragraph"],
                    "question": row["question"],
                    "answers": [],
                },
                gold={},
            )
        current.fields["answers"].append({"idx": answer_id, "text": row["answer"]})
        answers += 1
        gold = gold_of(row.get("label"), names.get("label"), spec, path, line)
        if gold is None or current.gold is None:
            current.gold = None
        else:
            current.gold[answer_id] = gold
            summary.has_gold = True
    if current is not None:
        yield current
    summary.detail = {"paragraphs": len(paragraphs), "questions": questions, "answers": answers}


def record_items(
    rows: Rows, path: Path, spec: TaskSpec, summary: FileSummary, names: dict[str, list[str]]
) -> Iterator[ParsedItem]:
    """The Hub's ReCoRD has one row per query (`passage`, `query`, `entities`, `answers`,
    `idx` {passage, query}); the entities are already the passage's spans as text."""
    passages: set[str] = set()
    queries = 0
    for line, row in rows:
        missing = [k for k in ("passage", "query", "entities") if k not in row]
        if missing:
            raise DataFileError(
                path, line, f"missing column {', '.join(missing)} (the Hub's ReCoRD layout)"
            )
        passage_id = _nested_id(row, "passage", path, line)
        passages.add(passage_id)
        queries += 1
        answers = sorted({str(a) for a in row.get("answers") or []})
        summary.has_gold = summary.has_gold or bool(answers)
        yield ParsedItem(
            _nested_id(row, "query", path, line),
            line,
            {
                "passage_idx": passage_id,
                "source": row.get("source") or "",
                "passage": row["passage"],
                "query": row["query"],
                "entities": _in_passage_order(row),
            },
            gold=answers or None,
        )
    summary.detail = {"passages": len(passages), "queries": queries}


def _in_passage_order(row: dict[str, Any]) -> list[str]:
    """A query's entities as the original files list them and annotators read them: in the
    passage's order. The Hub's `entities` is a set of texts (sorted by the older loader, in a
    set's order by the newer); its `entity_spans`, where the row has it, are in the passage's
    order, and else each text's first place in the passage gives it."""
    texts = list(dict.fromkeys(str(e) for e in row["entities"] or []))
    spans = _span_texts(row.get("entity_spans"))
    passage = str(row["passage"])

    def first_place(text: str) -> int:
        place = passage.find(text)
        return place if place >= 0 else len(passage)

    listed = set(texts)
    by_spans = [t for t in dict.fromkeys(spans) if t in listed]
    rest = sorted(listed.difference(by_spans), key=lambda t: (first_place(t), texts.index(t)))
    return by_spans + rest


def _span_texts(spans: Any) -> list[str]:
    """The texts of the Hub's `entity_spans` by their start: a list of {text, start, end} as
    Parquet holds it, or {text: [...], start: [...]} as `datasets` hands a sequence of dicts."""
    if isinstance(spans, dict):
        texts, starts = spans.get("text") or [], spans.get("start") or []
        pairs = list(zip(starts, texts, strict=False))
    elif isinstance(spans, list):
        pairs = [(s.get("start"), s.get("text")) for s in spans if isinstance(s, dict)]
    else:
        return []
    ordered = sorted(
        (
            (start, str(text))
            for start, text in pairs
            if isinstance(start, int) and text is not None
        ),
        key=lambda pair: pair[0],
    )
    return [text for _, text in ordered]


def hub_items(
    rows: Rows,
    path: Path,
    spec: TaskSpec,
    summary: FileSummary,
    names: dict[str, list[str]],
    place: Callable[[int], tuple[Path, int]] | None = None,
) -> Iterator[ParsedItem]:
    """Items of `spec` from Hub rows, ids checked unique. `place` gives a row's own file and
    row there, where the rows are several shards' numbered on."""
    reader = {"multirc": multirc_items, "record": record_items}.get(spec.source.reader, flat_items)
    seen: dict[str, int] = {}
    for item in reader(rows, path, spec, summary, names):
        if item.source_id in seen:
            first = seen[item.source_id]
            where = f"row {first}"
            if place is not None:
                (file, row), (here, _) = place(first), place(item.line)
                where = f"row {row}" if file == here else f"{file.name} row {row}"
            raise DataFileError(
                path, item.line, f"duplicate id {item.source_id!r} (first on {where})"
            )
        seen[item.source_id] = item.line
        yield item
