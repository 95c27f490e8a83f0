"""Errors that a user caused and can fix: shown as one clear message, never a traceback."""

from __future__ import annotations

from pathlib import Path


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
