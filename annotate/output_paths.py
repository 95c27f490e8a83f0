"""Where a command writes, as the user named it: a file where a folder is wanted, a folder
where a file is, or no folder to hold it, is the user's slip, said in one line before
anything is written, not a traceback from deep in a writer."""

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


def output_file(path: Path, example: str) -> Path:
    """`path` as a file to write, in a folder that exists; `example`: the file name to suggest
    when `path` is a folder."""
    if path.is_dir():
        raise UserError(f"{path} is a folder: name the file to write, e.g. {path / example}")
    if not path.parent.is_dir():
        raise UserError(f"no folder {path.parent} to write {path.name} into")
    return path
