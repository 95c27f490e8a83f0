"""The folder a command writes into, as the user named it: a file there is the user's slip,
said in one line before anything is written, not a traceback from deep in a writer."""

from __future__ import annotations

from pathlib import Path

from annotate.errors import UserError


def output_folder(path: Path, option: str) -> Path:
    """`path` as a folder to write into, made if missing (with its parents)."""
    if path.exists() and not path.is_dir():
        raise UserError(f"{option} {path} is a file: name a folder to write into")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot make the folder {path}: {exc.strerror}") from None
    return path
