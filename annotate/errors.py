"""Errors that a user caused and can fix: shown as one clear message, never a traceback."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class UserError(Exception):
    """A mistake in the user's input (a command argument, a file, a setting)."""


class DataFileError(UserError):
    """A data file that cannot be read: names the file, the line and the reason."""

    def __init__(self, path: str | Path, line: int | None, reason: str) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {reason}")


class SpecError(UserError):
    """A task or protocol specification that does not validate."""


def undecodable_at(data: bytes, exc: UnicodeDecodeError) -> tuple[int, int]:
    """(line, byte of that line), both from 1, where `data` (a file's bytes) stopped decoding:
    a file saved in another encoding is mended at the place named, not searched for."""
    line_start = data.rfind(b"\n", 0, exc.start) + 1
    return data.count(b"\n", 0, exc.start) + 1, exc.start - line_start + 1


def field_path(loc: Sequence[str | int]) -> str:
    """Where in a file pydantic found a mistake, as its user counts: ("labels", 1, "key") is
    "labels #2.key" (pydantic's "labels.1.key" counts the tables from 0)."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f" #{part + 1}"
        else:
            text += f".{part}" if text else str(part)
    return text or "(top level)"


def explain_validation(exc: ValidationError) -> str:
    """Every mistake pydantic found, "where: why" joined by "; "."""
    parts = []
    for err in exc.errors():
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        # A check of several keys together (a model validator) has no place: its words name them.
        parts.append(f"{field_path(err['loc'])}: {msg}" if err["loc"] else msg)
    return "; ".join(parts)
