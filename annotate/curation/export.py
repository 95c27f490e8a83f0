"""Write a set's active examples in the layouts of the originals, so that an export imports
back as a task dataset (glue/ax, superglue/axb) and runs through the human protocol.

- glue: `diagnostic-full.tsv` — header `Lexical Semantics, Predicate-Argument Structure, Logic,
  Knowledge, Domain, Premise, Hypothesis, Label`; fine tags `;`-joined in their coarse column;
  CRLF line endings on every line, as the original.
- superglue: `AX-b.jsonl` — `{"idx": "<n>", "label", "sentence1", "sentence2"}` then the tag
  keys (`lexical-semantics` …) only when non-empty; idx is a JSON string counting from 0, labels
  two-way (neutral and contradiction become not_entailment); LF line endings, ASCII escapes, as
  the original.

Exports are deterministic: the same set gives byte-identical files (set order, no timestamps).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine

from annotate import specs
from annotate.curation.examples import ExampleQuery, ExampleView, find_examples
from annotate.curation.review import disagreement_queue
from annotate.curation.sets import load_set
from annotate.curation.validation import tsv_problem
from annotate.errors import UserError
from annotate.output_paths import output_file
from annotate.taxonomy import COARSE, two_way

EXPORT_FORMATS = ("glue", "superglue")
GLUE_HEADER = (*COARSE, "Domain", "Premise", "Hypothesis", "Label")


@dataclass(frozen=True)
class ExportSummary:
    set_name: str
    path: str
    format: str
    rows: int
    task: str
    """The task the file imports back as."""
    open_disagreements: int = 0
    """Examples written as they stand while a review disputes their label or tags, unsettled."""
    unchecked_labels: int = 0
    """Examples whose label is "to check" (sentences edited since it was given)."""


def _tag_keys() -> dict[str, str]:
    """AX-b's JSON key of each coarse category, from the superglue/axb task spec."""
    columns = specs.load_task("superglue/axb").source.tag_columns
    return {coarse: columns[coarse][0] for coarse in COARSE}


def _tsv_cell(text: str, example: ExampleView, what: str) -> str:
    # The GLUE TSV has no quoting: a tab or line break would shift or split the row. Edits and
    # imports refuse such a domain by the same rule; a store written before they did may hold one.
    if problems := tsv_problem(text, what):
        raise UserError(f"example {example.id}: {problems[0].message}; edit it first")
    return text


def glue_lines(examples: Iterable[ExampleView]) -> Iterator[str]:
    yield "\t".join(GLUE_HEADER) + "\r\n"
    for e in examples:
        cells = [";".join(e.tags.get(coarse, [])) for coarse in COARSE]
        cells += [e.domain, e.premise, e.hypothesis, e.label]
        names = [*COARSE, "domain", "premise", "hypothesis", "label"]
        yield "\t".join(_tsv_cell(c, e, n) for c, n in zip(cells, names, strict=True)) + "\r\n"


def superglue_lines(examples: Iterable[ExampleView]) -> Iterator[str]:
    keys = _tag_keys()
    for idx, e in enumerate(examples):
        record: dict[str, str] = {
            "idx": str(idx),
            "label": two_way(e.label),
            "sentence1": e.premise,
            "sentence2": e.hypothesis,
        }
        for coarse in COARSE:
            if e.tags.get(coarse):
                record[keys[coarse]] = ";".join(e.tags[coarse])
        yield json.dumps(record) + "\n"


def _write_atomically(path: Path, lines: Iterable[str]) -> None:
    """Write to a temporary file beside `path`, then rename: a failed export (a row that the
    layout cannot hold) leaves no half-written file."""
    output_file(path, "diagnostic.tsv")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.writelines(lines)
        # mkstemp makes the file 0600; give it the mode a plain write would (0666 - umask).
        os.chmod(tmp, 0o666 & ~_current_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _current_umask() -> int:
    # The umask can only be read by setting it: set it back at once.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


JSON_SUFFIXES = (".jsonl", ".json")
"""Names read as AX-b's JSON lines, by `curate import` and by `annotate import glue/ax`."""


def _layout_name_problem(path: Path, fmt: str) -> str | None:
    """Why `path` cannot hold `fmt`: the file's name decides how it is read back (`curate
    import` and `annotate import glue/ax` read a .jsonl or .json name as JSON lines, a .csv
    name as commas), so a layout under another's name would not import again."""
    suffix = path.suffix.lower()
    if fmt == "superglue" and suffix not in JSON_SUFFIXES:
        return f"{path}: the superglue layout is JSON lines; name the file .jsonl (as AX-b.jsonl)"
    if fmt == "glue" and suffix in (*JSON_SUFFIXES, ".csv"):
        return (
            f"{path}: the glue layout is TSV; name the file .tsv (as diagnostic-full.tsv), "
            "or export --format superglue (AX-b's layout: two-way labels)"
        )
    return None


def export_set(engine: Engine, set_name: str, path: Path, fmt: str | None = None) -> ExportSummary:
    """Write the set's active examples (retired ones left out) to `path` in `fmt` (default:
    glue for a three-way set, superglue for a two-way one). A name the layout would not be
    read back under is refused, before anything is written."""
    info = load_set(engine, set_name)
    fmt = fmt or ("glue" if info.scheme == "three-way" else "superglue")
    if fmt not in EXPORT_FORMATS:
        raise UserError(f"unknown export format {fmt!r}; use glue or superglue")
    if fmt == "glue" and info.scheme != "three-way":
        raise UserError(
            f"set {set_name!r} has two-way labels (entailment / not_entailment); the GLUE "
            "layout needs entailment / neutral / contradiction: export --format superglue"
        )
    if problem := _layout_name_problem(path, fmt):
        raise UserError(problem)
    examples = find_examples(engine, set_name, ExampleQuery())
    if not examples:
        raise UserError(f"set {set_name!r} has no active examples to export")
    lines = glue_lines(examples) if fmt == "glue" else superglue_lines(examples)
    _write_atomically(path, lines)
    task = "glue/ax" if fmt == "glue" else "superglue/axb"
    return ExportSummary(
        info.name,
        str(path),
        fmt,
        len(examples),
        task,
        open_disagreements=len(disagreement_queue(engine, set_name)),
        unchecked_labels=sum(e.label_unchecked for e in examples),
    )
