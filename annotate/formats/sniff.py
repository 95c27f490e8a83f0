"""What a file is, from its first bytes: a binary file is never read as text.

A Parquet file given where a JSON lines file was expected used to fail as "not valid UTF-8
(byte 8 of the line)"; knowing the kind first lets the importer read it, or refuse it by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

Kind = Literal["parquet", "arrow", "zip", "utf-16", "binary", "text"]

_MAGIC: list[tuple[bytes, Kind]] = [
    (b"PAR1", "parquet"),
    (b"ARROW1", "arrow"),  # the Arrow IPC file format
    (b"\xff\xff\xff\xff", "arrow"),  # the Arrow IPC stream format (datasets' .arrow files)
    (b"PK\x03\x04", "zip"),
    (b"PK\x05\x06", "zip"),  # an empty zip
]

KIND_NAMES: dict[Kind, str] = {
    "parquet": "a Parquet file",
    "arrow": "an Arrow file",
    "zip": "a zip archive",
    "utf-16": "UTF-16 text (save it as UTF-8)",
    "binary": "a binary file",
    "text": "a text file",
}

SNIFF_BYTES = 8192


def file_kind(path: Path) -> Kind:
    """The kind of the file at `path`: by its magic number, else binary when its first bytes
    hold a NUL (no UTF-8 or Latin-1 text does), else text."""
    with path.open("rb") as f:
        head = f.read(SNIFF_BYTES)
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # a UTF-16 byte order mark
        return "utf-16"
    if b"\x00" in head or head.startswith(b"\x1f\x8b"):  # NUL bytes, or gzip-compressed
        return "binary"
    return "text"


def place_unit(path: Path) -> str:
    """What a place in the file at `path` is called: a table file (Parquet, Arrow) has rows, a
    text file lines."""
    return "row" if path.is_file() and file_kind(path) in ("parquet", "arrow") else "line"
