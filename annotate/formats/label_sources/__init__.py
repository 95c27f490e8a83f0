"""Label sources: readers for label files made outside annotate (an MTurk batch, a Qualtrics
export, Potato's output, a Label Studio export, a long CSV/JSONL) and any that installed
packages add. One module per source; `registry` lists them and asks each whether a file is
its own; `label_import` checks what a source read and writes the study.

What a third-party source needs is importable from here: subclass `LabelSource`, read into
`RawLabel`s and a `LabelFile`, raise `DataFileError(path, line, reason)` for a bad line;
`read_text`, `cell_text`, `parse_time` and `seconds` read text, cells, dates and durations as
the built-in sources do."""

from annotate.errors import DataFileError
from annotate.formats.label_sources.cells import cell_text, read_text
from annotate.formats.label_sources.labels import LabelFile, RawLabel
from annotate.formats.label_sources.options import ReadOptions
from annotate.formats.label_sources.source import LabelSource, Peek
from annotate.formats.label_sources.times import parse_time, seconds

__all__ = [
    "DataFileError",
    "LabelFile",
    "LabelSource",
    "Peek",
    "RawLabel",
    "ReadOptions",
    "cell_text",
    "parse_time",
    "read_text",
    "seconds",
]
