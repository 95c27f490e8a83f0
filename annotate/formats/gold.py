"""Gold labels for the local scorer (`annotate score`): which task a submission file is for,
where its labelled data file sits in the original download layout, and the gold of that file.

The data file is read with the same readers as an import (`read_items`; a file the `datasets`
library wrote, as `annotate import` reads it) and the same rules for a record that parses but
is malformed (`well_formed`), so every official layout and quirk is understood and a bad file
gets the same error naming file, line and reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotate import specs
from annotate.errors import DataFileError, UserError
from annotate.formats.hub.layout import cached_revision
from annotate.formats.readers import (
    FileSummary,
    ParsedItem,
    labelled_throughout,
    read_items,
    read_parts,
)
from annotate.formats.sources import is_hub_file, refuse_other_half, sources_for
from annotate.formats.well_formed import well_formed
from annotate.specs import TaskSpec
from annotate.splits import file_split, named_split, same_split


class NoGoldError(DataFileError):
    """A data file without labels (a test file): not a gold file."""


@dataclass
class GoldFile:
    """The gold labels of one data file, in file order."""

    path: str
    spec: TaskSpec
    ids: list[str] = field(default_factory=list)
    gold: list[Any] = field(default_factory=list)
    """Label value per item ("entailment", "true", a rating, {answer idx: "0"/"1"}, [entities])."""
    tags: list[dict[str, list[str]] | None] = field(default_factory=list)
    pair_ids: list[str | None] = field(default_factory=list)
    """AX-g: the minimal pair of each item (ids 2k and 2k+1, `TaskSpec.pair_keys`); None for
    items in no pair and for other tasks."""
    paragraphs: list[str | None] = field(default_factory=list)
    """MultiRC: the paragraph idx of each question; None for other tasks."""
    split: str | None = None
    """The split the file's name says (`val.jsonl`: dev); None when it says none."""


@dataclass(frozen=True)
class SubmissionName:
    spec: TaskSpec
    split: str | None
    """The split named in the file name (`RTE_val.jsonl`), None for the plain name."""


def submission_task(path: Path) -> SubmissionName | None:
    """The task whose submission file is named like `path` (`RTE.jsonl` is SuperGLUE RTE,
    `RTE.tsv` GLUE RTE, `MNLI-m_val.tsv` MNLI matched on dev); None when no task matches."""
    name = path.name.lower()
    stem, suffix = path.stem.lower(), path.suffix.lower()
    for spec in specs.all_tasks():
        if spec.submission is None:
            continue
        official = Path(spec.submission.file.lower())
        if official.suffix != suffix:
            continue
        if name == official.name:
            return SubmissionName(spec, None)
        # jiant names a prediction file for another split `RTE_val.jsonl` (`<name>_<split>`).
        if (split := named_split(stem, official.stem)) is not None:
            return SubmissionName(spec, split)
    return None


def read_gold(path: Path, spec: TaskSpec) -> GoldFile:
    """The gold of a labelled data file of `spec`; a file without labels is an error. A file
    the `datasets` library wrote (a Hub Parquet file, `to_json` output beside its
    dataset_info.json) is read as `annotate import` reads it, integer labels by their names."""
    if not path.is_file():
        raise DataFileError(path, None, "no such file")
    summary = FileSummary()
    if is_hub_file(path, spec):
        (source,) = sources_for(path, spec)
        return _gold_of(source.items(summary), summary, path, spec, source.split)
    split = file_split(path.name, spec.source.files.items())
    # MNLI-mm.tsv against dev_matched.tsv: the same ids there are other items.
    refuse_other_half(spec, path, split, advice="score {owner}'s predictions against it")
    return _gold_of(read_items(path, spec, summary), summary, path, spec, split)


def read_gold_parts(paths: list[Path], spec: TaskSpec) -> GoldFile:
    """The gold of a split in several files (`[source] parts`), read as one (`read_parts`)."""
    summary = FileSummary()
    shown = paths[0].parent / "+".join(p.name for p in paths)
    split = file_split(paths[0].name, spec.source.parts.items())  # the split they make up
    return _gold_of(read_parts(paths, spec, summary), summary, shown, spec, split)


def _gold_of(
    items: Iterator[ParsedItem],
    summary: FileSummary,
    path: Path,
    spec: TaskSpec,
    split: str | None,
) -> GoldFile:
    gold = GoldFile(path=str(path), spec=spec, split=split)
    fields: list[dict[str, Any]] = []
    for item in labelled_throughout(well_formed(items, spec, path), path):
        gold.ids.append(item.source_id)
        gold.gold.append(item.gold)
        gold.tags.append(item.tags)
        gold.paragraphs.append(
            str(item.fields.get("paragraph")) if spec.kind == "multi_answer" else None
        )
        if spec.minimal_pairs is not None:
            fields.append(item.fields)
    if not gold.ids:
        raise DataFileError(path, None, "the file has no items")
    if not summary.has_gold:
        # A test split's file has none by design; a validation file without any is one whose
        # labels were left out (a Hub Parquet file written without its `label` column).
        why = (
            "a test file?"
            if split is None or same_split(split, "test")
            else f"a {split} file with no label on any row: its label column left out?"
        )
        raise NoGoldError(path, None, f"no gold labels in this {spec.name} file ({why})")
    pairs = spec.pair_keys(gold.ids, fields)
    if pairs.broken:
        a, b = pairs.broken[0]
        same = spec.minimal_pairs.same if spec.minimal_pairs else ""
        raise DataFileError(
            path,
            None,
            f"ids {a} and {b} should form a minimal pair but their {same} differs "
            f"({len(pairs.broken)} such pairs): is this the {spec.short_name} file?",
        )
    gold.pair_ids = pairs.keys
    return gold


def _candidates(root: Path, spec: TaskSpec, names: list[str]) -> list[Path]:
    """Files named `names` in the task's own folder of the download layout (`RTE/`, `STS-B/`,
    `MNLI/`, `AX-b/` …, any case; `root` itself or a folder in it; searched down, as CoLA's
    `cola_public/raw/`), then directly in `root` (a folder that holds one task's files)."""
    wanted = {n.lower() for n in spec.folder_names()}
    folders = [root] if root.name.lower() in wanted else []
    folders += sorted(p for p in root.iterdir() if p.is_dir() and p.name.lower() in wanted)
    found = [path for name in names for folder in folders for path in sorted(folder.rglob(name))]
    found += [root / name for name in names]
    return [p for p in dict.fromkeys(found) if p.is_file()]


def find_gold(root: Path, spec: TaskSpec, split: str | None = None) -> GoldFile | None:
    """The first labelled file of `spec` under folder `root`: the split named by the prediction
    file, else the test split (labelled for the diagnostics) and then dev. None when there is
    none; a file that exists but is broken is an error."""
    splits = [split] if split else ["test", "dev"]
    names = [n for s in splits for n in spec.split_files(s)]
    for path in _candidates(root, spec, names):
        try:
            return read_gold(path, spec)
        except NoGoldError:
            continue  # an unlabelled test file: look for the next candidate
    for s in splits:  # a split in several files: each folder holding all of them
        for parts in (p for name, p in spec.source.parts.items() if same_split(name, s)):
            firsts = _candidates(root, spec, parts[:1])
            for first in firsts:
                paths = [first.parent / n for n in parts]
                if all(p.is_file() for p in paths):
                    try:
                        return read_gold_parts(paths, spec)
                    except NoGoldError:
                        continue
    return None


def gold_for(gold: Path, name: SubmissionName) -> GoldFile:
    """The gold for a submission file: `gold` itself when it is a file, else found in it (the
    original download layout, or the Hub's)."""
    if gold.is_file():
        return read_gold(gold, name.spec)
    if not gold.is_dir():
        raise UserError(f"{gold}: no such file or folder")
    found = find_gold(gold, name.spec, name.split) or _hub_gold(gold, name.spec, name.split)
    if found is None:
        source = name.spec.source
        wanted = sorted(
            {n for names in [*source.files.values(), *source.parts.values()] for n in names}
        )
        raise UserError(
            f"{gold}: no labelled {name.spec.name} file found (looked for {', '.join(wanted)} "
            f"in {', '.join(f + '/' for f in name.spec.folder_names())} and the folder itself, "
            "and for the task's splits as the Hugging Face Hub ships them)"
        )
    return found


def _hub_gold(root: Path, spec: TaskSpec, split: str | None) -> GoldFile | None:
    """The gold of a folder as the Hub ships a task (a snapshot of its repository, the HF
    cache's folder of it, a `save_to_disk` folder), read as `annotate import` reads it: the
    split named by the prediction file, else test (labelled for the diagnostics), then dev.
    None when the folder holds no such labelled split."""
    # The HF cache's folder with several revisions and no refs/main is the Hub's layout, but
    # which revision to read is the user's to say: refused as import refuses it, naming them.
    root = cached_revision(root)
    try:
        sources = sources_for(root, spec)
    except (UserError, DataFileError):
        return None  # not a layout an import reads: the caller says what it looked for
    for wanted in [split] if split else ["test", "dev"]:
        for source in sources:
            if source.split is None or not same_split(source.split, wanted):
                continue
            summary = FileSummary()
            try:
                return _gold_of(source.items(summary), summary, source.path, spec, source.split)
            except NoGoldError:
                if split:  # the split the prediction file names: no other is its gold
                    raise UserError(
                        f"{source.path}: the {split} split's file has no gold labels"
                        + (
                            " (the Hub's test labels are -1, kept by the leaderboard): "
                            "predictions on it cannot be scored locally"
                            if same_split(split, "test")
                            else " (its label column left out?)"
                        )
                    ) from None
                continue  # the Hub's test split: its labels are -1
    return None
