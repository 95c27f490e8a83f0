"""Which files of a Hugging Face layout hold which split.

- Hub data files: `{split}-NNNNN-of-NNNNN.parquet` (shards of one split, in name order, with
  an optional `-<hash>` tail), the Hub's converted `{config}/{split}/NNNN.parquet`, and older
  `{dataset}-{split}.parquet`; the library's cache names Arrow files the same ways.
- A snapshot of a Hub repository (`huggingface-cli download … --repo-type dataset`) has one
  subfolder per config (`rte/`, `cb/`, `mnli_matched/`), found anywhere below the folder given
  (the cache's `snapshots/<revision>/` included).
- A `save_to_disk` folder: `dataset_dict.json` naming the splits, and per split a folder with
  `state.json` (its Arrow files, in order), `dataset_info.json` (the features) and the files.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from annotate.errors import DataFileError, UserError
from annotate.formats.hub.features import INFO_FILE
from annotate.specs import TaskSpec
from annotate.splits import canonical_split, is_split_name

DATA_SUFFIXES = (".parquet", ".arrow")
_SHARD = re.compile(
    r"^(?P<split>[A-Za-z0-9_.]+?)-(?P<index>\d{5})-of-(?P<total>\d{5})(?:-[0-9a-f]+)?$"
)
_NUMBERED = re.compile(r"^\d+$")


def shown_path(path: Path) -> Path:
    """Where the store (and a Hugging Face file's messages) say data came from: the path made
    absolute with its symbolic links kept (a text file's messages name it as typed). In the
    Hugging Face cache a snapshot's `cb/validation-….parquet` is a link to `blobs/<sha256>`, a
    name that says neither the config nor the split."""
    return Path(os.path.abspath(path))


@dataclass
class HubSplit:
    """One split's data files (shards in order), with the dataset_info.json naming classes."""

    split: str | None
    files: list[Path] = field(default_factory=list)
    info: Path | None = None


def split_from_name(path: Path) -> str | None:
    """The split a Hub data file holds, from its name (or its folder's, for `0000.parquet` and a
    save_to_disk `data-00000-of-00001.arrow`); None when the name does not say."""
    stem = path.name.rsplit(".", 1)[0]
    shard = _SHARD.match(stem)
    candidates = []
    if shard and shard.group("split") != "data":
        candidates.append(shard.group("split"))
    if shard and shard.group("split") == "data":  # save_to_disk's, in a folder of any name
        candidates += [_recorded_split(path.parent), path.parent.name]
    elif _NUMBERED.match(stem):
        candidates.append(path.parent.name)
    candidates += [stem, stem.rsplit("-", 1)[-1]]
    for name in candidates:
        if name is not None and is_split_name(name):
            return canonical_split(name)
    return None


def missing_shards(files: list[Path]) -> str | None:
    """Why `files`, one split's data files, are not the whole split: their names number them
    `NNNNN-of-MMMMM`, and some of the M are not among them (a download stopped half-way, or one
    shard given alone). Imported, the dataset would hold part of the split as if it were all
    of it, and a study would sample from that part. None when the names do not number them."""
    matches = [_SHARD.match(path.name.rsplit(".", 1)[0]) for path in files]
    if not matches or any(match is None for match in matches):
        return None
    held = {int(m.group("index")) for m in matches if m is not None}
    total = max(int(m.group("total")) for m in matches if m is not None)
    absent = [i for i in range(total) if i not in held]
    if not absent:
        return None
    first = matches[0]
    assert first is not None
    name = files[0].name.replace(f"-{first.group('index')}-of-", f"-{absent[0]:05d}-of-", 1)
    more = f" and {len(absent) - 1} more" if len(absent) > 1 else ""
    return (
        f"{len(held)} of the {total} shards of its split ({name}{more} missing): alone, they "
        "hold part of the split; give the folder that holds them all"
    )


def _recorded_split(folder: Path) -> str | None:
    """The split a `save_to_disk` folder's state.json records (`_split`: the dataset's split
    when it came from `load_dataset`, null for one built otherwise); None when it says none."""
    try:
        split = json.loads((folder / "state.json").read_text(encoding="utf-8")).get("_split")
    except (OSError, ValueError, AttributeError):
        return None
    return split if isinstance(split, str) else None


def _info_for(path: Path) -> Path | None:
    info = path.parent / INFO_FILE
    return info if info.is_file() else None


def _group(files: list[Path], where: Path) -> list[HubSplit]:
    splits: dict[str | None, HubSplit] = {}
    for path in sorted(files):
        split = split_from_name(path)
        if split is None:
            raise DataFileError(
                path,
                None,
                "cannot tell which split this file holds from its name "
                "(expected {split}-00000-of-00001.parquet); import it alone with --split NAME",
            )
        entry = splits.setdefault(split, HubSplit(split, info=_info_for(path)))
        entry.files.append(path)
    for entry in splits.values():
        folders = sorted({str(p.parent.relative_to(where)) for p in entry.files})
        if len(folders) > 1:
            raise UserError(
                f"{where}: split {entry.split} is in several folders ({', '.join(folders)}); "
                "give the folder of one dataset config"
            )
    return list(splits.values())


def save_to_disk_splits(folder: Path) -> list[HubSplit]:
    """The splits of a `save_to_disk` folder (a DatasetDict, or a single Dataset's folder)."""
    manifest = folder / "dataset_dict.json"
    if manifest.is_file():
        try:
            names = json.loads(manifest.read_text(encoding="utf-8"))["splits"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise DataFileError(manifest, None, f'expected {{"splits": [...]}} ({exc})') from None
        return [_saved_split(folder / str(name), str(name)) for name in names]
    return [_saved_split(folder, None)]


def _saved_split(folder: Path, name: str | None) -> HubSplit:
    """One split's folder: `name` is the split dataset_dict.json gives it; a single Dataset's
    folder is named by whoever saved it, so its split is the one state.json records, else the
    folder's name."""
    state = folder / "state.json"
    try:
        files = [
            f["filename"] for f in json.loads(state.read_text(encoding="utf-8"))["_data_files"]
        ]
    except FileNotFoundError:
        raise DataFileError(state, None, "missing: a save_to_disk split folder has one") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataFileError(state, None, f'expected {{"_data_files": [...]}} ({exc})') from None
    paths = [folder / f for f in files]
    for path in paths:
        if not path.is_file():
            raise DataFileError(path, None, f"missing: {state.name} lists it")
    candidates = [name] if name is not None else [_recorded_split(folder), folder.name]
    split = next((canonical_split(n) for n in candidates if n and is_split_name(n)), None)
    return HubSplit(split, paths, _info_for(folder / "state.json"))


def is_save_to_disk(folder: Path) -> bool:
    return (folder / "dataset_dict.json").is_file() or (
        (folder / "state.json").is_file() and (folder / INFO_FILE).is_file()
    )


def config_folder(folder: Path, spec: TaskSpec) -> Path | None:
    """The task's config folder in a Hub snapshot: `folder` itself or the first folder below it
    named like one of the task's configs (`cb`, `mnli_matched`) that holds data files."""
    wanted = [c.lower() for c in spec.hub_config_names()]
    if folder.name.lower() in wanted:
        return folder
    below = [p for p in sorted(folder.rglob("*")) if p.is_dir() and p.name.lower() in wanted]
    below.sort(key=lambda p: (wanted.index(p.name.lower()), len(p.parts)))
    for candidate in below:
        if any(f.suffix in DATA_SUFFIXES for f in candidate.rglob("*")):
            return candidate
    return None


def in_other_task_folder(path: Path, root: Path, others: set[str]) -> bool:
    """Whether `path` lies in a folder below `root` named as another task's own folder (one of
    `others`, lower case): in a benchmark root, another task's data."""
    return any(part.lower() in others for part in path.relative_to(root).parts[:-1])


def cached_revision(folder: Path) -> Path:
    """The snapshot to read in a repository's folder of the Hugging Face cache
    (`datasets--aps--super_glue/`, holding `refs/`, `snapshots/<revision>/` and `blobs/`): the
    revision `refs/main` names, as `load_dataset` reads it; the only one, without refs/main.
    Any other folder is itself. Several revisions and no refs/main: refused, naming them (the
    first in hash order is no newer than the others)."""
    snapshots = folder / "snapshots"
    if not snapshots.is_dir() or not (folder / "refs").is_dir():
        return folder
    try:
        main = (folder / "refs" / "main").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        main = ""
    if main and (snapshots / main).is_dir():
        return snapshots / main
    revisions = sorted(p.name for p in snapshots.iterdir() if p.is_dir())
    if len(revisions) == 1:
        return snapshots / revisions[0]
    if not revisions:
        return folder
    raise UserError(
        f"{folder}: {len(revisions)} revisions in snapshots/ ({', '.join(revisions)}) and no "
        "refs/main naming the one to read: give the snapshot folder of the revision to import"
    )


def hub_splits(
    folder: Path, spec: TaskSpec, others: set[str] | frozenset[str] = frozenset()
) -> list[HubSplit] | None:
    """The splits of a Hugging Face layout under `folder`, None when there is none; nothing
    below a folder named as another task's (`others`, lower case) is taken."""
    if is_save_to_disk(folder):
        return save_to_disk_splits(folder)
    config = config_folder(folder, spec)
    root = config or folder
    if config is None:
        saved = sorted(
            p.parent
            for p in folder.rglob("dataset_dict.json")
            if not in_other_task_folder(p, folder, set(others))
        )
        if saved:
            return save_to_disk_splits(saved[0])
    data = [p for p in root.rglob("*") if p.suffix in DATA_SUFFIXES and p.is_file()]
    files = [p for p in data if not in_other_task_folder(p, root, set(others))]
    if not files and data:
        raise UserError(
            f"{folder}: a Hub snapshot without a {spec.name} config (looked for a folder named "
            f"{' or '.join(spec.folder_names())}); its data files are in other tasks' folders "
            f"({', '.join(sorted({p.relative_to(root).parts[0] for p in data}))})"
        )
    if not files:
        return None
    if config is None:
        configs = sorted(
            {p.parent.relative_to(folder).parts[0] for p in files if p.parent != folder}
        )
        if len(configs) > 1:
            raise UserError(
                f"{folder}: a Hub snapshot without a {spec.name} config (looked for a folder "
                f"named {' or '.join(spec.hub_config_names())}); it has {', '.join(configs)}"
            )
    return _group(files, root)
