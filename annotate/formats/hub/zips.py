"""The task zips GLUE and SuperGLUE distributed, read as they are.

SuperGLUE's `RTE.zip` unpacks to `RTE/train.jsonl`, `val.jsonl`, `test.jsonl`; GLUE's to
`RTE/train.tsv`, `dev.tsv`, `test.tsv` (MNLI's to `dev_matched.tsv` …). A member is one of the
task's files when its name is one the task's layout names; each is read from a temporary copy
with the same readers as an unpacked file, and errors name the member inside the zip.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from annotate.errors import DataFileError
from annotate.formats.hub.layout import shown_path
from annotate.specs import TaskSpec
from annotate.splits import same_split


@dataclass(frozen=True)
class ZipMember:
    archive: Path
    name: str
    split: str

    @property
    def shown(self) -> Path:
        """Where messages and the store say the data came from: `…/RTE.zip/RTE/val.jsonl`."""
        return shown_path(self.archive) / self.name

    def sha256(self) -> str:
        digest = hashlib.sha256()
        with zipfile.ZipFile(self.archive) as archive, archive.open(self.name) as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()

    def unpacked(self) -> Iterator[Path]:
        """The member as a temporary file (removed when the generator closes)."""
        with tempfile.TemporaryDirectory(prefix="annotate-zip-") as tmp:
            target = Path(tmp) / PurePosixPath(self.name).name
            with (
                zipfile.ZipFile(self.archive) as archive,
                archive.open(self.name) as source,
                target.open("wb") as out,
            ):
                shutil.copyfileobj(source, out)
            yield target


def _is_junk(name: str) -> bool:
    """macOS resource forks and folders a zip tool adds."""
    parts = PurePosixPath(name).parts
    return name.endswith("/") or "__MACOSX" in parts or parts[-1].startswith("._")


def zip_members(
    path: Path, spec: TaskSpec
) -> tuple[list[ZipMember], list[tuple[list[ZipMember], str]]]:
    """The task's files in the zip, each with its split, and the sets of a split in parts
    (`[source] parts`, where no file of its own holds the split); an error naming what was
    expected when there is neither."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if not _is_junk(n)]
    except (zipfile.BadZipFile, OSError) as exc:
        raise DataFileError(path, None, f"not a readable zip archive ({exc})") from None
    found: list[ZipMember] = []
    for split, wanted in spec.source.files.items():
        for file_name in wanted:
            for name in sorted(names):
                if PurePosixPath(name).name == file_name and all(m.name != name for m in found):
                    found.append(ZipMember(path, name, split))
    parts: list[tuple[list[ZipMember], str]] = []
    for split, wanted in spec.source.parts.items():
        if any(same_split(m.split, split) for m in found):
            continue
        by_folder: dict[PurePosixPath, dict[str, str]] = {}
        for name in sorted(names):
            member = PurePosixPath(name)
            if member.name in wanted:
                by_folder.setdefault(member.parent, {})[member.name] = name
        for present in by_folder.values():
            missing = [n for n in wanted if n not in present]
            if missing:
                first = next(iter(present.values()))
                raise DataFileError(
                    shown_path(path) / first,
                    None,
                    f"one of the {len(wanted)} files of {spec.name}'s {split} split "
                    f"({', then '.join(wanted)}), whose rows are numbered as one; "
                    f"{', '.join(missing)} is not beside it",
                )
            parts.append(([ZipMember(path, present[n], split) for n in wanted], split))
    left_out = {
        str(p)
        for p in spec.source.variant_copies(
            [PurePosixPath(m.name) for m in found] + [PurePosixPath(g[0].name) for g, _ in parts]
        )
    }
    found = [m for m in found if m.name not in left_out]
    parts = [(g, s) for g, s in parts if g[0].name not in left_out]
    if not found and not parts:
        expected = sorted(
            {
                n
                for names in [*spec.source.files.values(), *spec.source.parts.values()]
                for n in names
            }
        )
        held = ", ".join(sorted(names)[:8]) + (" …" if len(names) > 8 else "")
        raise DataFileError(
            path,
            None,
            f"no {spec.name} files in this zip (expected {', '.join(expected)}); "
            f"it holds {held or 'nothing'}",
        )
    return found, parts
