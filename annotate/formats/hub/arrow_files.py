"""Rows of Parquet and Arrow files, through pyarrow (the `parquet` extra, loaded on use).

A Hub file is Parquet; `save_to_disk` and the library's cache write the Arrow IPC stream
format (`data-00000-of-00001.arrow`); the Arrow IPC file format is read as well. Rows come out
a batch at a time, as dicts, with the features stored in the file's schema.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotate import install_hint
from annotate.errors import DataFileError
from annotate.formats.hub.features import Features, features_from_metadata

PYARROW_EXTRA = "parquet"
"""The extra that brings pyarrow (it writes `export --format parquet` too)."""
BATCH_ROWS = 5_000


def _pyarrow(path: Path, what: str) -> Any:
    try:
        import pyarrow.ipc
        import pyarrow.parquet
    except ImportError:
        raise DataFileError(
            path, None, f"{what}; reading it needs pyarrow: {install_hint(PYARROW_EXTRA)}"
        ) from None
    import pyarrow

    return pyarrow


@dataclass
class ArrowRows:
    """One Parquet or Arrow file: its features and a way to walk its rows."""

    path: Path
    kind: str
    features: Features | None
    columns: list[str]

    def rows(self) -> Iterator[dict[str, Any]]:
        pa = _pyarrow(self.path, f"a {self.kind} file")
        try:
            if self.kind == "Parquet":
                batches = pa.parquet.ParquetFile(self.path).iter_batches(batch_size=BATCH_ROWS)
                for batch in batches:
                    yield from batch.to_pylist()
                return
            with pa.memory_map(str(self.path)) as source:
                reader = _ipc_reader(pa, source)
                if isinstance(reader, pa.ipc.RecordBatchFileReader):  # not iterable itself
                    batches = (reader.get_batch(i) for i in range(reader.num_record_batches))
                else:
                    batches = reader
                for batch in batches:
                    yield from batch.to_pylist()
        except (pa.ArrowException, OSError) as exc:
            raise DataFileError(
                self.path, None, f"{self.kind} file cannot be read: {exc}"
            ) from None


def _ipc_reader(pa: Any, source: Any) -> Any:
    """A reader of Arrow record batches: the stream format (datasets), else the file format."""
    try:
        return pa.ipc.open_stream(source)
    except pa.ArrowInvalid:
        source.seek(0)
        return pa.ipc.open_file(source)


def open_parquet(path: Path) -> ArrowRows:
    pa = _pyarrow(path, "a Parquet file")
    try:
        schema = pa.parquet.read_schema(path)
    except (pa.ArrowException, OSError) as exc:
        raise DataFileError(path, None, f"not a readable Parquet file ({exc})") from None
    return ArrowRows(path, "Parquet", features_from_metadata(schema.metadata), schema.names)


def open_arrow(path: Path) -> ArrowRows:
    pa = _pyarrow(path, "an Arrow file")
    try:
        with pa.memory_map(str(path)) as source:
            schema = _ipc_reader(pa, source).schema
    except (pa.ArrowException, OSError) as exc:
        raise DataFileError(
            path, None, f"not a readable Arrow file (stream or file format) ({exc})"
        ) from None
    return ArrowRows(path, "Arrow", features_from_metadata(schema.metadata), schema.names)
