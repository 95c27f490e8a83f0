"""What every label source is: a name for `--format`, a description for the datasheet, a test
that tells its files from the others' (`claims`), and a reader (`read`).

A source answers `claims` from a `Peek`: the path and, read once for every source, the file's
text, first line, first JSON object and first CSV rows. Detection asks each source; exactly one
may claim a file (else the import asks for `--format`), and a file no source claims is read as
a long file. A third-party source subclasses `LabelSource` and is registered under the
entry-point group `annotate.label_sources` (see registry.py)."""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path
from typing import Any

from annotate.errors import DataFileError
from annotate.formats.label_sources.cells import csv_rows, read_text
from annotate.formats.label_sources.labels import LabelFile
from annotate.formats.label_sources.options import ReadOptions

PEEK_ROWS = 6
"""How many lines of a delimited file `Peek.table` parses (headers sit at the top)."""


class Peek:
    """A look at a path that detection shares among the sources: each part is computed when a
    source first asks for it. A folder, a missing file or one that is not UTF-8 has no text
    (its source, or the long reader, says what is wrong with it)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @cached_property
    def text(self) -> str | None:
        """The whole text, or None for a folder or a file that is not UTF-8 text."""
        if not self.path.is_file():
            return None
        try:
            return read_text(self.path)
        except DataFileError:
            return None

    @cached_property
    def head(self) -> str:
        """The first character that is not white space ("" when there is none)."""
        return (self.text or "").lstrip()[:1]

    @cached_property
    def first_line(self) -> str:
        """The first line that is not blank, stripped of its line break."""
        return (self.text or "").lstrip().split("\n", 1)[0].rstrip("\r")

    @cached_property
    def first_object(self) -> Any:
        """The first line as JSON (a JSON-lines file's first record), or None."""
        if self.head != "{":
            return None
        try:
            return json.loads(self.first_line)
        except (ValueError, RecursionError):  # bad JSON, too deep, too many digits
            return None

    @cached_property
    def table(self) -> list[list[str]]:
        """The cells of the first rows of a CSV/TSV file (a header row first); empty for JSON
        (text starting with `[` or `{`) or a file without text."""
        if self.text is None or self.head in ("[", "{"):
            return []
        head = "\n".join(self.text.splitlines()[:PEEK_ROWS])
        try:
            return [cells for _, cells in csv_rows(self.path, head)]
        except DataFileError:
            return []  # not a table: the long reader names the line

    @cached_property
    def header(self) -> list[str]:
        """The first row of `table`, each name stripped."""
        return [c.strip() for c in self.table[0]] if self.table else []


class LabelSource:
    """A kind of label file: subclass it, set the class attributes, write `claims` and `read`.

    `read` returns a `LabelFile` of `RawLabel`s, one per (item, worker) answer with the line it
    is on; a bad line is a `DataFileError(path, line, reason)`. The registry sets the file's
    format (this source's name) and fills in description, unit and platform where the file
    leaves them empty."""

    name: str = ""
    """The `--format` name: lower case, no spaces (mturk, labelstudio, quillboard)."""
    description: str = ""
    """What the file is, in "collected outside annotate: MTurk batch, 3 assignments, …"."""
    unit: str = "annotator"
    """What `LabelFile.n_assignments` counts, singular: assignment, response, annotator."""
    platform: str = ""
    """Whose worker ids the file holds (a worker keeps one pseudonym per platform); "" = name."""
    map_keys: tuple[str, ...] | None = None
    """The `--map` keys `read` uses (besides the task's fields when `reads_fields`); any other
    is refused by name. None: the source does not say (any key is passed on)."""
    reads_fields: bool = True
    """Whether the file may carry the items' text (`--map FIELD=COLUMN`)."""
    reads_side_columns: bool = False
    """Whether `read` fills `RawLabel.side` for `ReadOptions.side_columns` (`--skip-when`,
    `--map flag=`)."""
    folder_hint: str | None = None
    """For a source that reads folders: the file it looks for in one ("annotated_instances.jsonl"),
    named when a folder holds nothing any source reads."""

    def claims(self, peek: Peek) -> bool:
        """True when the file is surely this source's. Cheap, and never raises for a file of
        another kind: detection asks every source about every file."""
        return False

    def files(self, path: Path) -> list[Path]:
        """The files an import of `path` reads: a folder's import is recognised again by their
        digest. A source that reads folders lists them; others read one file."""
        if not path.is_file():
            raise DataFileError(path, None, "no such file")
        return [path]

    def read(self, path: Path, options: ReadOptions) -> LabelFile:
        """Every label in the file; a bad line is a DataFileError naming file and line."""
        raise NotImplementedError(f"label source {self.name!r} has no read()")
