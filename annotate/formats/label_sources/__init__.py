"""Label sources: readers for label files made outside annotate (an MTurk batch, a Qualtrics
export, Potato's output, a Label Studio export, a long CSV/JSONL) and any that installed
packages add. One module per source; `registry` lists them and asks each whether a file is
its own; `label_import` checks what a source read and writes the study.

What a third-party source needs is importable from here: subclass `LabelSource`, read into
`RawLabel`s and a `LabelFile`, raise `DataFileError(path, line, reason)` for a bad line."""

from annotate.errors import DataFileError
from annotate.formats.label_sources.labels import LabelFile, RawLabel
from annotate.formats.label_sources.options import ReadOptions
from annotate.formats.label_sources.source import LabelSource, Peek

__all__ = ["DataFileError", "LabelFile", "LabelSource", "Peek", "RawLabel", "ReadOptions"]
