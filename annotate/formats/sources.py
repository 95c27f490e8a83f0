"""What an import path holds: the datasets (one per split) to make from a file or a folder.

A path may be a data file in the task's own layout (`val.jsonl`, `dev.tsv`), a folder of them,
a Hugging Face layout (a Parquet or Arrow file, a Hub config folder or repository snapshot, a
`save_to_disk` folder, `to_json`/`to_csv` output with its `dataset_info.json`), or the task's
distributed zip. The kind of a file is told by its first bytes, never by its name alone, so a
binary file is never read as text.
"""

from __future__ import annotations

import csv
import hashlib
import re
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from annotate.errors import DataFileError, UserError
from annotate.formats.hub.arrow_files import ArrowRows, open_arrow, open_parquet
from annotate.formats.hub.features import class_names, features_from_info_file, info_beside
from annotate.formats.hub.layout import (
    DATA_SUFFIXES,
    HubSplit,
    cached_revision,
    hub_splits,
    in_other_task_folder,
    missing_shards,
    shown_path,
    split_from_name,
)
from annotate.formats.hub.records import Rows, hub_items
from annotate.formats.hub.zips import ZipMember, zip_members
from annotate.formats.readers import (
    FileSummary,
    ParsedItem,
    json_lines,
    lone_part,
    read_items,
    read_parts,
)
from annotate.formats.sniff import KIND_NAMES, file_kind
from annotate.specs import TaskSpec, builtin_tasks
from annotate.splits import canonical_split, is_split_name

ItemReader = Callable[[FileSummary], Iterator[ParsedItem]]


@dataclass
class Source:
    """One dataset to import: the path it is said to come from (stored: absolute), its split,
    the digest of its content and its items."""

    path: Path
    split: str | None
    sha256: Callable[[], str]
    items: ItemReader
    size: int = 0
    """Bytes to read: a large text file shows a progress bar."""
    text_file: Path | None = None
    """The text file read line by line, for the progress bar's line count."""
    typed: Path | None = None
    """The path as the user gave it, which the reader's errors name: every message about the
    file names it so (None: `path`), one file under one name."""

    @property
    def said(self) -> Path:
        """The path messages name."""
        return self.typed or self.path


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _files_sha256(paths: list[Path]) -> str:
    """One file's own digest; several shards': the digest of their digests, in order."""
    if len(paths) == 1:
        return file_sha256(paths[0])
    return hashlib.sha256("".join(file_sha256(p) for p in paths).encode()).hexdigest()


def guess_split(path: Path, spec: TaskSpec) -> str | None:
    """The split a file belongs to, from the task's known file names, else from its name."""
    for split, names in spec.source.files.items():
        if path.name in names:
            return canonical_split(split)
    stem = path.stem.lower()
    for keyword, split in (("train", "train"), ("dev", "dev"), ("val", "dev"), ("test", "test")):
        if keyword in stem:
            return split
    return None


def _task_file_names(spec: TaskSpec) -> set[str]:
    source = spec.source
    return {n for names in [*source.files.values(), *source.parts.values()] for n in names}


def other_task_folders(spec: TaskSpec) -> set[str]:
    """Lower-case names of the other built-in tasks' own folders (`sts-b`, `cola`, `rte` …) that
    are not also this task's: in a benchmark root, what is below them is another task's data.
    Empty for a task of the user's own, whose folders may be named anything."""
    builtin = builtin_tasks()
    if all(t.name != spec.name for t in builtin):
        return set()
    own = {n.lower() for n in spec.folder_names()}
    return {n.lower() for t in builtin if t.name != spec.name for n in t.folder_names()} - own


def _holds_task_data(folder: Path, spec: TaskSpec, others: set[str]) -> bool:
    names = _task_file_names(spec)
    return any(
        (p.name in names or p.suffix in DATA_SUFFIXES)
        and p.is_file()
        and not in_other_task_folder(p, folder, others)
        for p in folder.rglob("*")
    )


def task_folder(folder: Path, spec: TaskSpec) -> Path:
    """The folder of `folder` that holds the task's data: `folder` itself when it is named as the
    task's own folder (`SST-2/`, `sst2/`), else its task's subfolder when it is a benchmark root
    (GLUE's and SuperGLUE's downloads and the Hub's repositories have one subfolder per task),
    else `folder`. The outermost such subfolder is taken (`glue/RTE/`, not FewGLUE's
    `fewglue/RTE/` further down); two at one depth are refused, as is a folder named as another
    task's."""
    own = [n.lower() for n in spec.folder_names()]
    if folder.name.lower() in own:
        return folder
    others = other_task_folders(spec)
    if folder.name.lower() in others:
        owners = [
            t.name
            for t in builtin_tasks()
            if folder.name.lower() in (n.lower() for n in t.folder_names())
        ]
        raise UserError(
            f"{folder}: by its name a folder of {' or '.join(owners)}, not of {spec.name}; "
            f"give the folder of {spec.name} (named {' or '.join(spec.folder_names())})"
        )
    named = [
        p
        for p in sorted(folder.rglob("*"))
        if p.is_dir()
        and p.name.lower() in own
        and not in_other_task_folder(p / "x", folder, others)
        and _holds_task_data(p, spec, others)
    ]
    outermost = [p for p in named if not any(q in p.parents for q in named)]
    if not outermost:
        return folder

    def rank(p: Path) -> tuple[int, int]:
        return len(p.relative_to(folder).parts), own.index(p.name.lower())

    best = min(rank(p) for p in outermost)
    chosen = [p for p in outermost if rank(p) == best]
    if len(chosen) > 1:
        raise UserError(
            f"{folder}: {len(chosen)} folders of {spec.name} "
            f"({', '.join(str(p.relative_to(folder)) for p in chosen)}); give the one to import"
        )
    return chosen[0]


@dataclass
class FolderFiles:
    """The task's files in a folder: one dataset per file, and one per split in parts."""

    files: list[tuple[Path, str]]
    parts: list[tuple[list[Path], str]]


def files_in_folder(folder: Path, spec: TaskSpec) -> list[tuple[Path, str]]:
    """Every file of the task's own layout found in the task's folder, with its split (see
    `task_files`; a split in parts is not among them)."""
    return task_files(folder, spec).files


def _parts_in(
    root: Path, spec: TaskSpec, split: str, names: list[str], others: set[str]
) -> list[list[Path]]:
    """Each folder's complete set of a split's parts, in their order; a set with a part
    missing is refused, naming it."""
    by_folder: dict[Path, dict[str, Path]] = {}
    for name in names:
        for path in sorted(root.rglob(name)):
            if path.is_file() and not in_other_task_folder(path, root, others):
                by_folder.setdefault(path.parent, {})[name] = path
    groups = []
    for present in by_folder.values():
        missing = [n for n in names if n not in present]
        if missing:
            first = next(iter(present.values()))
            raise UserError(
                f"{first}: one of the {len(names)} files of {spec.name}'s {split} split "
                f"({', then '.join(names)}), whose rows are numbered as one; "
                f"{', '.join(missing)} is not beside it"
            )
        groups.append([present[n] for n in names])
    return groups


def task_files(folder: Path, spec: TaskSpec) -> FolderFiles:
    """Every file of the task's own layout found in the task's folder (`task_folder`, searched
    recursively), none from below another task's folder; a split in parts (`[source] parts`)
    where no file of its own holds that split."""
    root = task_folder(folder, spec)
    others = other_task_folders(spec)
    found: list[tuple[Path, str]] = []
    skipped: set[str] = set()
    for split, names in spec.source.files.items():
        for name in names:
            for path in sorted(root.rglob(name)):
                if not path.is_file() or any(path == p for p, _ in found):
                    continue
                if in_other_task_folder(path, root, others):
                    skipped.add(path.relative_to(root).parts[0])
                    continue
                found.append((path, canonical_split(split)))
    parts = [
        (group, canonical_split(split))
        for split, names in spec.source.parts.items()
        if all(s != canonical_split(split) for _, s in found)
        for group in _parts_in(root, spec, canonical_split(split), names, others)
    ]
    below = {p.relative_to(root): p for p in [*(p for p, _ in found), *(g[0] for g, _ in parts)]}
    left_out = {below[p] for p in spec.source.variant_copies(below)}
    found = [(p, s) for p, s in found if p not in left_out]
    parts = [(g, s) for g, s in parts if g[0] not in left_out]
    if not found and not parts and skipped:
        raise UserError(
            f"{folder}: no folder of {spec.name} here (looked for one named "
            f"{' or '.join(spec.folder_names())}); files named as its files are in other "
            f"tasks' folders only ({', '.join(sorted(skipped))}): give the folder of {spec.name}"
        )
    if not found and not parts:
        wanted = sorted(_task_file_names(spec))
        raise UserError(
            f"{folder}: no {spec.name} files here (looked for {', '.join(wanted)}, Hugging Face "
            f"Parquet or Arrow files, a Hub folder named {' or '.join(spec.hub_config_names())} "
            "and a save_to_disk folder)"
        )
    return FolderFiles(found, parts)


# --- the task's own text files ---------------------------------------------------------------


def text_source(path: Path, spec: TaskSpec, split: str | None) -> Source:
    lone_part(path, spec)
    return Source(
        shown_path(path),
        split or guess_split(path, spec),
        lambda: file_sha256(path),
        lambda summary: read_items(path, spec, summary),
        size=path.stat().st_size,
        text_file=path,
        typed=path,
    )


def parts_source(paths: list[Path], spec: TaskSpec, split: str) -> Source:
    """One dataset from a split's parts (`read_parts`); stored as from `first+second…`."""
    joined = "+".join(p.name for p in paths)
    return Source(
        shown_path(paths[0].parent) / joined,
        split,
        lambda: _files_sha256(paths),
        lambda summary: read_parts(paths, spec, summary),
        size=sum(p.stat().st_size for p in paths),
        typed=paths[0].parent / joined,
    )


# --- Hugging Face rows -----------------------------------------------------------------------


def _label_names(
    found: dict[str, list[str]], given: list[str] | None, where: Path
) -> dict[str, list[str]]:
    """The file's ClassLabel names, or --label-names when the file has none; both must agree."""
    if given is None:
        return found
    label = found.get("label")
    if label is not None and label != given:
        raise DataFileError(
            where,
            None,
            f"the file names its classes {', '.join(label)}; --label-names says "
            f"{', '.join(given)} (leave the flag out to use the file's own names)",
        )
    return {**found, "label": given}


def _rows_of(files: list[ArrowRows], starts: list[tuple[int, Path]]) -> Rows:
    """The shards' rows numbered on from shard to shard; `starts` gets each shard's first
    number as its rows begin, for `_shard_place`."""
    number = 0
    for file in files:
        starts.append((number + 1, file.path))
        for row in file.rows():
            number += 1
            yield number, row


def _shard_place(starts: list[tuple[int, Path]], number: int) -> tuple[Path, int]:
    """The shard and its own row (from 1) of row `number` of the shards read as one."""
    first, path = next((s for s in reversed(starts) if s[0] <= number), starts[0])
    return shown_path(path), number - first + 1


def _arrow_source(
    split: HubSplit, spec: TaskSpec, given: list[str] | None, shown: Path | None = None
) -> Source:
    if problem := missing_shards(split.files):
        raise DataFileError(shown or shown_path(split.files[0]), None, problem)
    files = [open_parquet(p) if file_kind(p) == "parquet" else open_arrow(p) for p in split.files]
    info = features_from_info_file(split.info, spec.hub_config_names()) if split.info else None
    found = class_names(files[0].features) or class_names(info)
    names = _label_names(found, given, split.files[0])
    where = shown or shown_path(split.files[0])

    def items(summary: FileSummary) -> Iterator[ParsedItem]:
        if len(files) == 1:
            yield from hub_items(_rows_of(files, []), where, spec, summary, names)
            return
        # Several shards are read as one, their rows numbered on; what is said of a row names
        # its own shard and its row there (a shard's 5th row is not the first shard's).
        starts: list[tuple[int, Path]] = []

        def place(number: int) -> tuple[Path, int]:
            return _shard_place(starts, number)

        try:
            for item in hub_items(_rows_of(files, starts), where, spec, summary, names, place):
                item.file, item.line = place(item.line)
                yield item
        except DataFileError as exc:
            if exc.line is None or exc.path != str(where) or not starts:
                raise
            path, row = place(exc.line)
            raise DataFileError(path, row, exc.reason) from None
        summary.detail = {**summary.detail, "shards": len(files)}

    return Source(
        where,
        split.split,
        lambda: _files_sha256(split.files),
        items,
        size=sum(p.stat().st_size for p in split.files),
    )


def _csv_rows(path: Path) -> Rows:
    try:
        with path.open(encoding="utf-8-sig", newline="") as f:
            reader = csv.DictReader(f)
            for row in reader:
                yield reader.line_num, dict(row)
    except UnicodeDecodeError as exc:
        raise DataFileError(path, None, f"not valid UTF-8 text ({exc.reason})") from None
    except csv.Error as exc:
        raise DataFileError(path, None, f"CSV syntax error: {exc}") from None


def _records_source(path: Path, spec: TaskSpec, split: str | None, given: list[str] | None):
    """`Dataset.to_json()` (JSON lines) or `to_csv()` output, names from dataset_info.json."""
    names = _label_names(class_names(info_beside(path, spec.hub_config_names())), given, path)
    is_csv = path.suffix.lower() in (".csv", ".tsv")

    def items(summary: FileSummary) -> Iterator[ParsedItem]:
        rows = _csv_rows(path) if is_csv else json_lines(path, "utf-8-sig")
        yield from hub_items(rows, shown_path(path), spec, summary, names)

    return Source(
        shown_path(path),
        split or split_from_name(path) or guess_split(path, spec),
        lambda: file_sha256(path),
        items,
        size=path.stat().st_size,
        text_file=path,
    )


def _is_hub_text(path: Path, spec: TaskSpec, given: list[str] | None) -> bool:
    """A JSON lines or CSV file to read as the library writes them: with class names known, or
    in a format the task's own files never have (a GLUE task's `to_json` output)."""
    suffix = path.suffix.lower()
    if suffix not in (".json", ".jsonl", ".csv"):
        return False
    if given is not None or info_beside(path) is not None:
        return True
    own = spec.source.reader
    return own == "tsv" or (own != "csv" and suffix == ".csv")


def is_hub_file(path: Path, spec: TaskSpec) -> bool:
    """Whether `path` is a file read as the `datasets` library writes them (Parquet, Arrow, or
    `to_json`/`to_csv` output with its class names beside it), not as the task's own file."""
    return file_kind(path) in ("parquet", "arrow") or _is_hub_text(path, spec, None)


# --- one entry point -------------------------------------------------------------------------


def _zip_source(member: ZipMember, spec: TaskSpec) -> Source:
    def items(summary: FileSummary) -> Iterator[ParsedItem]:
        for unpacked in member.unpacked():
            try:
                yield from read_items(unpacked, spec, summary)
            except DataFileError as exc:
                raise DataFileError(member.shown, exc.line, exc.reason) from None

    return Source(member.shown, canonical_split(member.split), member.sha256, items)


def _zip_parts_source(members: list[ZipMember], spec: TaskSpec, split: str) -> Source:
    """A split in parts inside a zip: the members unpacked together and read as `read_parts`
    reads files, errors naming the member."""

    def items(summary: FileSummary) -> Iterator[ParsedItem]:
        with ExitStack() as stack:
            unpacked = [stack.enter_context(contextmanager(m.unpacked)()) for m in members]
            shown = {u: m.shown for u, m in zip(unpacked, members, strict=True)}
            try:
                yield from read_parts(unpacked, spec, summary)
            except DataFileError as exc:
                where = shown.get(Path(exc.path), Path(exc.path))
                raise DataFileError(where, exc.line, exc.reason) from None

    def sha256() -> str:
        return hashlib.sha256("".join(m.sha256() for m in members).encode()).hexdigest()

    first = members[0].shown
    shown = first.parent / "+".join(PurePosixPath(m.name).name for m in members)
    return Source(shown, canonical_split(split), sha256, items)


def _other_half(spec: TaskSpec, *names: str | None) -> str | None:
    """The suffix of another task's half (`mismatched`, for MNLI-m) that one of `names` (a
    file's name, a split) has as a word, else None."""
    others = set(spec.source.other_split_suffixes)
    for name in names:
        words = set(re.split(r"[^a-z0-9]+", (name or "").lower()))
        found = sorted(words & others)
        if found:
            return found[0]
    return None


def _own_split(spec: TaskSpec, split: str | None) -> str | None:
    """`split` without the task's own half suffix (MNLI-m's `dev_matched` is `dev`)."""
    suffix = spec.source.split_suffix
    if split is None or suffix is None:
        return split
    return canonical_split(split).removesuffix(f"_{suffix}")


def _half_owner(suffix: str) -> str:
    return next(
        (t.name for t in builtin_tasks() if t.source.split_suffix == suffix),
        f"the task whose splits end in _{suffix}",
    )


def _own_hub_splits(folder: Path, spec: TaskSpec, hub: list[HubSplit]) -> list[HubSplit]:
    """The task's own splits of a folder holding two tasks' (the Hub's `mnli`: MNLI-m takes
    `validation_matched` and `test_matched` as dev and test, MNLI-mm the `_mismatched` ones;
    both take `train`); a folder of the other task's only is refused."""
    own = [
        HubSplit(_own_split(spec, h.split), h.files, h.info)
        for h in hub
        if _other_half(spec, h.split) is None
    ]
    if hub and not own:
        suffix = _other_half(spec, hub[0].split) or ""
        raise UserError(
            f"{folder}: holds only splits of {_half_owner(suffix)} "
            f"({', '.join(str(h.split) for h in hub)}), none of {spec.name}; import them as "
            f"{_half_owner(suffix)}"
        )
    return own


def _own_half_file(source: Source, spec: TaskSpec, path: Path) -> Source:
    """A single file's source with its split without the task's half suffix; a file named as
    the other half's (`dev_mismatched.tsv`, `validation_mismatched-….parquet` for MNLI-m), or
    in a Hub config folder named so (`mnli_mismatched/validation-….parquet`, or its
    `validation/0000.parquet`), is refused: its items would be stored as this task's."""
    refuse_other_half(spec, path, source.split, shown=source.path, advice="import it as {owner}")
    source.split = _own_split(spec, source.split)
    return source


def refuse_other_half(
    spec: TaskSpec,
    path: Path,
    split: str | None = None,
    *,
    shown: Path | str | None = None,
    advice: str,
) -> None:
    """The one rule for a single file of a task in halves (MNLI-m, MNLI-mm): a file named as
    the other half's (`dev_mismatched.tsv` for MNLI-m), or in a folder named so, is a UserError
    naming the task it belongs to, whether it is imported or read as gold (`annotate score`);
    `advice` ends the sentence, `{owner}` standing for that task."""
    folders = [path.parent.name]
    if is_split_name(path.parent.name):
        folders.append(path.parent.parent.name)
    suffix = _other_half(spec, path.name, split, *folders)
    if suffix is not None:
        owner = _half_owner(suffix)
        raise UserError(
            f"{shown or path}: a file of {owner} by its name or its folder's ({suffix}), not of "
            f"{spec.name}; {advice.format(owner=owner)}"
        )


def sources_for(
    path: Path, spec: TaskSpec, split: str | None = None, label_names: list[str] | None = None
) -> list[Source]:
    """The datasets to make from `path` (a file or a folder), each with its split."""
    found = _sources(path, spec, split, label_names)
    if path.is_file():
        return [_own_half_file(source, spec, path) for source in found]
    return found


def _sources(
    path: Path, spec: TaskSpec, split: str | None, label_names: list[str] | None
) -> list[Source]:
    split = canonical_split(split) if split else None
    if path.is_dir():
        # A repository's folder in the Hugging Face cache: its main revision's snapshot.
        path = task_folder(cached_revision(path), spec)
        hub = hub_splits(path, spec, other_task_folders(spec))
        if hub is not None:
            hub = _own_hub_splits(path, spec, hub)
            if split and len(hub) > 1:
                raise UserError(
                    f"{path}: holds {len(hub)} splits; --split applies to a folder of one split"
                )
            return [
                _arrow_source(HubSplit(split or h.split, h.files, h.info), spec, label_names)
                for h in hub
            ]
        if split:
            raise UserError("--split applies to a single file, not a folder")
        found = task_files(path, spec)
        return [text_source(p, spec, s) for p, s in found.files] + [
            parts_source(paths, spec, s) for paths, s in found.parts
        ]
    if not path.is_file():
        raise UserError(f"{path}: no such file or folder")
    kind = file_kind(path)
    if kind in ("parquet", "arrow"):
        info = path.parent / "dataset_info.json"
        hub = HubSplit(split or split_from_name(path), [path], info if info.is_file() else None)
        return [_arrow_source(hub, spec, label_names)]
    if kind == "zip":
        if split:
            raise UserError(f"{path}: --split applies to one data file, not a zip of splits")
        members, parts = zip_members(path, spec)
        return [_zip_source(m, spec) for m in members] + [
            _zip_parts_source(group, spec, s) for group, s in parts
        ]
    if kind == "binary":
        raise DataFileError(
            path,
            None,
            f"{KIND_NAMES[kind]}, not a data file this tool reads (expected the task's text "
            f"files such as {', '.join(spec.split_files('dev') or ['its data files'])}, a "
            "Parquet or Arrow file, or the task's zip)",
        )
    if _is_hub_text(path, spec, label_names):
        return [_records_source(path, spec, split, label_names)]
    return [text_source(path, spec, split)]
