"""Task and protocol specs: load the TOML files under tasks/ and protocols/ and validate them.

A task spec says what an item looks like (its fields and how they are shown), what an annotator
may answer, how the task's files are laid out on disk, how it is scored and how predictions are
written for the leaderboard. A protocol spec holds every parameter of the human-baseline
protocol. Both are pydantic models with `extra="forbid"`, so a misspelt key is an error.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from annotate.errors import SpecError, UserError, explain_validation, undecodable_at
from annotate.metric_registry import all_metrics, find_metric
from annotate.settings import env_name, setting_error, settings
from annotate.splits import same_split

Layout = Literal[
    "single",
    "pair",
    "passage_question",
    "choice",
    "spans",
    "scale",
    "multi_answer",
    "entity_choice",
]
Reader = Literal["tsv", "csv", "jsonl", "multirc", "record"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FieldSpec(Strict):
    """One input field of an item."""

    name: str
    """Our name for the field (the key in the stored item)."""
    label: str = ""
    """Heading shown above the text; empty for a field that is not shown (ids, offsets)."""
    source: list[str] = Field(default_factory=list)
    """Column names (TSV/CSV) or dotted JSON keys tried in order; default: [name]."""
    optional: bool = False
    """A missing column or key gives an empty value instead of an error."""
    shown: bool = True
    """Whether the annotator sees this field as text."""

    def sources(self) -> list[str]:
        return self.source or [self.name]


class LabelOption(Strict):
    """One answer an annotator can give, or one gold class."""

    value: str
    """The label as written in the source data (JSON booleans as "true"/"false", ints as digits)."""
    text: str
    """What the annotator sees."""
    key: str
    """The single key that gives this answer."""
    collapses_to: str | None = None
    """For an answer scale (CB's 7 points): the gold class this answer counts as."""
    aliases: list[str] = Field(default_factory=list)
    """Other names of this class in published copies of the data: the Hugging Face Hub's
    ClassLabel names (SST-2's `positive` is our `1`), matched case-insensitively."""


class ScaleSpec(Strict):
    """A numeric rating (STS-B): integer answers from min to max, each with an anchor text."""

    min: int
    max: int
    anchors: dict[str, str]
    """Description of each point, keyed by the point as text ("0" … "5")."""

    @model_validator(mode="after")
    def _anchors_cover_scale(self) -> ScaleSpec:
        expected = {str(v) for v in range(self.min, self.max + 1)}
        if set(self.anchors) != expected:
            raise ValueError(f"scale anchors must be exactly {sorted(expected)}")
        return self


class HighlightSpec(Strict):
    """A span of a field to highlight (WiC's target word, WSC's noun phrase and pronoun)."""

    field: str
    unit: Literal["char", "token"]
    start: str
    """Field holding the start offset (char) or the token index (token)."""
    end: str | None = None
    """Field holding the exclusive end offset (char units only)."""
    text: str | None = None
    """Field holding the span's text (token units: its length in tokens)."""


class SourceSpec(Strict):
    """How the task's files are laid out on disk."""

    reader: Reader
    files: dict[str, list[str]] = Field(default_factory=dict)
    """Split name -> file names found in a task folder (first match wins per name)."""
    parts: dict[str, list[str]] = Field(default_factory=dict)
    """Split name -> the files that together hold that split, in their order: one dataset, its
    rows numbered on from file to file (CoLA's public dev set, in-domain then out-of-domain,
    as GLUE's dev.tsv numbers it). Looked for where no file of `files` holds the split; one
    part alone is refused."""
    id: list[str] = Field(default_factory=list)
    """Id column or key candidates; when none is present the 0-based row number is the id."""
    id_required: bool = False
    """A file without any id column is an error (rather than numbered by row)."""
    label: list[str] = Field(default_factory=list)
    """Gold label column or key candidates; a file without one has no gold (test files)."""
    headerless_columns: list[str] = Field(default_factory=list)
    """Column names for files that come without a header row (CoLA train/dev)."""
    tag_columns: dict[str, list[str]] = Field(default_factory=dict)
    """Coarse phenomenon category -> columns/keys holding its `;`-separated fine tags."""
    encoding: str = "utf-8-sig"
    delimiter: str | None = None
    """CSV delimiter; default tab for .tsv files and comma otherwise."""
    hub_configs: list[str] = Field(default_factory=list)
    """The task's config (subfolder) in a Hugging Face Hub repository, first match wins;
    default: the task's own name (`superglue/cb` -> `cb`)."""
    split_suffix: str | None = None
    """The suffix of this task's splits where one folder holds two tasks' splits (MNLI-m's
    `matched`: the Hub's `validation_matched`, GLUE's `dev_matched.tsv`); stored without it."""
    other_split_suffixes: list[str] = Field(default_factory=list)
    """The suffixes of the other tasks' splits there (MNLI-m: `mismatched`): a file or split
    named with one is never this task's."""
    folders: list[str] = Field(default_factory=list)
    """Other names of the task's own folder in a benchmark's download or a Hub repository
    (GLUE's `MNLI/`, the Hub's combined `mnli/`), beside its hub configs, aliases and name."""
    variant_folders: list[str] = Field(default_factory=list)
    """Folders of a release that hold another version of the same files (CoLA's public
    `tokenized/` beside `raw/`, whose sentences GLUE took): a file found in one is left out
    where a file of that name is found outside them (variant_copy)."""
    mapped: list[str] = Field(default_factory=list)
    """Fields (or `id`, `label`) an import's `--map` reads from the column it names, and from
    no other: not from the Hub's own column of that name either."""

    def variant_copies(self, found: Iterable[PurePath]) -> set[PurePath]:
        """Of the files `found` (paths below the folder searched, or a zip's members), those
        to leave out: in a `variant_folders` folder, with a file of the same name found
        outside them."""
        variants = {v.lower() for v in self.variant_folders}

        def in_variant(path: PurePath) -> bool:
            return any(part.lower() in variants for part in path.parts[:-1])

        found = list(found)
        elsewhere = {p.name for p in found if not in_variant(p)}
        return {p for p in found if in_variant(p) and p.name in elsewhere}

    @model_validator(mode="after")
    def _parts_are_several_files_of_their_own(self) -> SourceSpec:
        named = {n for names in self.files.values() for n in names}
        for split, names in self.parts.items():
            if len(names) < 2:
                raise ValueError(f"parts of {split}: a split in parts has two files or more")
            if set(names) & named:
                raise ValueError(f"parts of {split}: {sorted(set(names) & named)} also in files")
        return self


class SubmissionSpec(Strict):
    """The leaderboard file for this task."""

    file: str
    """Exact file name the evaluation server expects."""
    style: Literal["glue-tsv", "superglue-jsonl", "multirc", "record"]
    encoding: dict[str, str | int | bool] = Field(default_factory=dict)
    """Label value -> what the submission file holds (type kept: COPA writes ints)."""
    float_format: str = "%.3f"
    clip: tuple[float, float] | None = None


class PairSpec(Strict):
    """How a diagnostic's items form minimal pairs (AX-g: rows with ids 2k and 2k+1, which
    share their hypothesis; the file's `pair_id` is unique per row and groups nothing)."""

    by: Literal["consecutive-ids"] = "consecutive-ids"
    same: str | None = None
    """A field both members must share (jiant's GenderParity asserts equal hypotheses)."""


@dataclass(frozen=True)
class PairKeys:
    keys: list[str | None]
    """Each item's pair (None: in no pair)."""
    broken: list[tuple[str, str]]
    """Id pairs the rule joins whose `same` field differs: left unpaired, reported by callers."""


class TaskSpec(Strict):
    """Everything the tool knows about one task."""

    name: str
    """Canonical name, from the file's place: tasks/superglue/rte.toml -> superglue/rte."""
    benchmark: str
    title: str
    aliases: list[str] = Field(default_factory=list)
    """Official spellings accepted as the task name (case-insensitive): SST-2, AX-b, MNLI-m."""
    kind: Literal["classification", "regression", "multi_answer", "entity_choice"]
    layout: Layout
    fields: list[FieldSpec]
    labels: list[LabelOption] = Field(default_factory=list)
    answer_scale: list[LabelOption] = Field(default_factory=list)
    """Answers offered instead of `labels`; each collapses to a gold class (CB)."""
    scale: ScaleSpec | None = None
    highlights: list[HighlightSpec] = Field(default_factory=list)
    explanation_field: str | None = None
    """Field that explains the gold label, shown as training feedback when present."""
    metrics: list[str]
    positive_label: str | None = None
    """The class F1 is computed for (binary tasks)."""
    label_prior: Literal["balanced", "skewed", "unknown"] = "unknown"
    """Whether the labels are roughly balanced: the hint the GLUE FAQ gave annotators."""
    guidelines: str
    source: SourceSpec
    submission: SubmissionSpec | None = None
    """The leaderboard file; a custom task without a leaderboard has none (no glue/superglue
    export then)."""
    train_on: str | None = None
    """A task whose dev items train annotators for this one (AX-b has no training data)."""
    minimal_pairs: PairSpec | None = None
    """Items that form minimal pairs: sampled together, scored for parity, resampled together."""

    @model_validator(mode="after")
    def _consistent(self) -> TaskSpec:
        found = {m: find_metric(m) for m in self.metrics}
        unknown = [m for m, entry in found.items() if entry is None]
        if unknown:
            raise ValueError(f"unknown metric(s) {unknown}; known: {sorted(all_metrics())}")
        for name, entry in found.items():
            if entry is not None and entry.task_kind != self.kind:
                raise ValueError(
                    f"metric {name!r} scores {entry.task_kind} tasks, not {self.kind} ones"
                )
        if self.kind == "classification" and len(self.labels) < 2:
            raise ValueError("a classification task needs at least two labels")
        if self.kind == "regression" and self.scale is None:
            raise ValueError("a regression task needs a [scale]")
        values = [o.value for o in self.labels]
        if len(set(values)) != len(values):
            raise ValueError("label values must be unique")
        answers = self.answer_options()
        keys = [o.key for o in answers]
        if len(set(keys)) != len(keys):
            raise ValueError(f"answer keys must be unique, got {keys}")
        reserved = {"?", "q", "f", "u"}
        clash = sorted(set(keys) & reserved)
        if clash:
            raise ValueError(
                f"answer keys {clash} are reserved for the annotator screen (? help, q quit, "
                "f flag, u revise): choose other keys"
            )
        for option in self.answer_scale:
            if option.collapses_to not in values:
                raise ValueError(
                    f"answer {option.value!r} collapses to {option.collapses_to!r}, not a label"
                )
        names = {f.name for f in self.fields}
        for h in self.highlights:
            for ref in (h.field, h.start, h.end, h.text):
                if ref is not None and ref not in names:
                    raise ValueError(f"highlight refers to unknown field {ref!r}")
        if self.explanation_field and self.explanation_field not in names:
            raise ValueError(f"explanation_field {self.explanation_field!r} is not a field")
        if self.positive_label is not None and self.positive_label not in values:
            raise ValueError(f"positive_label {self.positive_label!r} is not a label value")
        for name, entry in found.items():
            if entry is not None and entry.family == "minimal_pairs" and self.minimal_pairs is None:
                raise ValueError(f"{name} needs [minimal_pairs]: how items form pairs")
        pairs = self.minimal_pairs
        if pairs is not None and pairs.same is not None and pairs.same not in names:
            raise ValueError(f"minimal_pairs.same {pairs.same!r} is not a field")
        return self

    # --- questions the rest of the code asks -------------------------------------------------
    def answer_options(self) -> list[LabelOption]:
        """What the annotator chooses from (the 7-point scale for CB, else the labels)."""
        if self.answer_scale:
            return list(self.answer_scale)
        if self.scale is not None:
            return [
                LabelOption(value=str(v), text=self.scale.anchors[str(v)], key=str(v))
                for v in range(self.scale.min, self.scale.max + 1)
            ]
        return list(self.labels)

    def label_values(self) -> list[str]:
        return [o.value for o in self.labels]

    def label_text(self, value: str) -> str:
        for option in [*self.labels, *self.answer_scale]:
            if option.value == value:
                return option.text
        return value

    def collapse(self, answer: str) -> str:
        """The gold class an answer counts as (identity unless the task has an answer scale)."""
        for option in self.answer_scale:
            if option.value == answer:
                return option.collapses_to or answer
        return answer

    def leaderboard(self) -> SubmissionSpec:
        """The leaderboard file's spec; a clear error for a task without `[submission]`."""
        if self.submission is None:
            raise UserError(
                f"task {self.name!r} has no [submission] section: it has no leaderboard file, "
                "so there is no glue/superglue file to write (export --format labels or soft)"
            )
        return self.submission

    def split_files(self, split: str) -> list[str]:
        """The file names of `split` in the task's download layout (`val` and `dev` alike)."""
        return [n for s, names in self.source.files.items() if same_split(s, split) for n in names]

    def hub_config_names(self) -> list[str]:
        """Subfolder names of the task's config in a Hugging Face Hub snapshot."""
        return self.source.hub_configs or [self.name.split("/")[-1]]

    def folder_names(self) -> list[str]:
        """The names the task's own folder has in a benchmark root, the folder of one subfolder
        per task that GLUE's and SuperGLUE's downloads and the Hub's repositories are
        (`SST-2/`, `sst2/`, `RTE/`, `mnli_matched/`), in the order they are preferred; compare
        them without regard to case."""
        names = [*self.hub_config_names(), *self.source.folders, *self.aliases]
        names.append(self.name.split("/")[-1])
        if self.submission is not None:
            names.append(Path(self.submission.file).stem)
        first: dict[str, str] = {}
        for name in names:
            first.setdefault(name.lower(), name)
        return list(first.values())

    def label_for_name(self, name: str) -> str | None:
        """The label value a class name means: the value itself or one of its aliases, in any
        case (a Hub ClassLabel name such as `False`, `positive`, `choice1`); None if none."""
        wanted = name.strip().lower()
        for option in self.labels:
            if wanted == option.value.lower() or wanted in (a.lower() for a in option.aliases):
                return option.value
        return None

    @property
    def short_name(self) -> str:
        return self.aliases[0] if self.aliases else self.name.split("/")[-1]

    def pair_keys(self, ids: Sequence[str], fields: Sequence[Mapping[str, Any]]) -> PairKeys:
        """The minimal pair of each item (ids and fields in any order, as sampled or read).
        Consecutive ids: ids 2k and 2k+1 form pair k, as jiant's GenderParity pairs rows; a
        non-integer id, a lone member, or a pair whose `same` field differs is in no pair."""
        keys: list[str | None] = [None] * len(ids)
        if self.minimal_pairs is None:
            return PairKeys(keys, [])
        members: dict[int, list[int]] = {}
        for position, item_id in enumerate(ids):
            try:
                number = int(str(item_id))
            except ValueError:
                continue
            members.setdefault(number // 2, []).append(position)
        same = self.minimal_pairs.same
        broken: list[tuple[str, str]] = []
        for pair, positions in members.items():
            if len(positions) != 2:
                continue
            a, b = positions
            if same is not None and fields[a].get(same) != fields[b].get(same):
                broken.append((str(ids[a]), str(ids[b])))
                continue
            keys[a] = keys[b] = str(pair)
        return PairKeys(keys, broken)


class ProtocolSpec(Strict):
    """Every parameter of the two-phase human-baseline protocol (presets: protocols/*.toml)."""

    name: str
    description: str
    source: str = ""
    """Where the values come from (paper, section)."""
    training_items: int = Field(30, ge=0)
    """Dev items shown in the training phase, at most (fewer when the split is smaller)."""
    training_feedback: bool = True
    """After each training answer show right/wrong and the gold label."""
    show_explanation: bool = True
    """Show the task's explanation field with the feedback, where the task has one."""
    gate_rule: Literal["median", "threshold", "manual"] = "median"
    """median: batch decision when training is closed; threshold: at once; manual: by hand."""
    gate_min_items: int = Field(5, ge=0)
    """Training items an annotator must have done before any gate decision."""
    gate_threshold: float | None = Field(None, ge=0.0, le=1.0)
    """Training accuracy needed under the threshold rule."""
    test_sample: int | Literal["all"] = 100
    """Test items drawn at random (seeded); "all" or a split smaller than this takes the split."""
    seed: int = 2019
    """Seed of the test sample and of the training order."""
    annotators_per_item: int = Field(5, ge=1)
    """Distinct annotators who label each test item (k)."""
    tie_rule: Literal["random", "abstain", "dev-majority-class", "extra-annotator"] = "random"
    """How a split vote is settled; the papers state none."""
    regression_aggregation: Literal["mean", "median"] = "mean"
    """How the ratings of one item become one score (STS-B)."""
    label_prior_hint: bool = True
    """Tell annotators whether the task's labels are balanced or skewed (GLUE FAQ)."""
    stop_when_decided: bool = False
    """Stop assigning a test item once no further labels up to k can change its majority
    (annotate/completion.py); classification tasks only. The majority is the one the item's
    own annotators would reach at full k (no remaining label can overturn it), not necessarily
    that of a full-k run by other annotators."""
    lease_minutes: float = Field(30.0, gt=0)
    """How long an item on an abandoned screen stays reserved before it returns to the pool."""
    max_test_items_per_annotator: int | None = Field(None, ge=1)
    """A batch per worker: test items one annotator labels at most, then their completion code
    (crowd studies paid per session); None: as many as the study has for them."""
    max_training_items_per_annotator: int | None = Field(None, ge=1)
    """Training items one annotator does at most: the first ones of the training order (the
    rest of the drawn training items still serve catch items and refresher rounds); None: all
    of them. The gate judges each annotator on their quota."""
    catch_rate: float = Field(0.0, ge=0.0, le=0.5)
    """Share of an annotator's test stream that is catch items: dev items with gold, shown
    like test items, never scored (0: none; e.g. 0.05)."""
    catch_action: Literal["warn", "pause"] = "warn"
    """When recent catch accuracy falls below `catch_min_accuracy`: warn (report and console),
    or pause (back to a short refresher of training items with feedback)."""
    catch_min_accuracy: float | None = Field(None, ge=0.0, le=1.0)
    """Recent catch accuracy below which an annotator is drifting, for everyone in the study
    however they were admitted. None: the gate threshold (threshold rule), else the cohort
    median recorded when the median gate closed, else 0.70 (protocol/catch.py)."""
    assumptions: list[str] = Field(default_factory=list)
    """Values the papers do not state, chosen here; printed in reports. `{setting}` (e.g.
    `{training_items}`) stands for the study's value; an assumption that starts with
    `{setting=value}` (e.g. `{tie_rule=random}`) is stated only by a study with that value
    (`stated`), so a preset can word each rule and a study states its own."""
    task_overrides: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per-task changes, e.g. SuperGLUE took WSC's whole test set."""

    @model_validator(mode="after")
    def _threshold_needs_value(self) -> ProtocolSpec:
        if self.gate_rule == "threshold" and self.gate_threshold is None:
            raise ValueError("gate_rule 'threshold' needs gate_threshold")
        if isinstance(self.test_sample, int) and self.test_sample < 1:
            raise ValueError("test_sample must be a positive number or 'all'")
        for a in self.assumptions:
            if (m := _CONDITION.match(a)) and m.group(1) not in type(self).model_fields:
                raise ValueError(f"assumption {a!r}: {m.group(1)!r} is no protocol setting")
        return self

    def stated(self, **drawn: int) -> ProtocolSpec:
        """This protocol with its assumptions in its own numbers: `{name}` of a setting in an
        assumption becomes its value, or the study's count given in `drawn` (the training and
        test items it drew, which a small split or `test_sample = "all"` decide). An assumption
        headed `{setting=value}` is kept (without its head) only when the setting has that value:
        a study that overrides a rule must not state the preset's."""
        values = {**self.model_dump(), **drawn}
        held = (_if_holds(a, values) for a in self.assumptions)
        kept = [_fill(a, values) for a in held if a is not None]
        return self.model_copy(update={"assumptions": kept})

    def training_quota(self, training_items: int) -> int:
        """Training items each annotator does, of the `training_items` the study drew."""
        cap = self.max_training_items_per_annotator
        return training_items if cap is None else min(training_items, cap)

    def effective(
        self, task: str | None = None, overrides: dict[str, Any] | None = None
    ) -> ProtocolSpec:
        """This protocol with a task's overrides and then the study's own settings applied."""
        data = self.model_dump()
        if task is not None:
            data.update(self.task_overrides.get(task, {}))
        data.update(overrides or {})
        return validate_protocol(data, origin=f"protocol {self.name!r} with overrides")


_SETTING = re.compile(r"\{(\w+)\}")
_CONDITION = re.compile(r"\{(\w+)=([^{}]*)\}\s*")


def _shown(v: Any) -> str:
    """A setting's value as an assumption writes it: 30.0 as 30, true as in TOML."""
    if isinstance(v, bool):
        return str(v).lower()
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def _if_holds(text: str, values: Mapping[str, Any]) -> str | None:
    """The assumption without its `{setting=value}` head, or None when the setting differs."""
    m = _CONDITION.match(text)
    if m is None:
        return text
    return text[m.end() :] if _shown(values.get(m.group(1))) == m.group(2).strip() else None


def _fill(text: str, values: Mapping[str, Any]) -> str:
    """`{name}` replaced by the value (30.0 written 30); a name of no setting is left as it is."""

    def value(m: re.Match[str]) -> str:
        return _shown(values[m.group(1)]) if m.group(1) in values else m.group(0)

    return _SETTING.sub(value, text)


# --- finding and loading spec files ----------------------------------------------------------


def builtin_dir(kind: str) -> Path:
    """The folder of built-in `tasks` or `protocols`: inside the package when installed from a
    wheel, else at the top of the source tree (an editable install or a checkout)."""
    packaged = Path(__file__).parent / "builtin" / kind
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / kind


def search_dirs(kind: str) -> list[Path]:
    """Built-in folder first, then any folders in ANNOTATE_TASKS_PATH / ANNOTATE_PROTOCOLS_PATH."""
    return [builtin_dir(kind), *settings().search_path(kind)]


def _missing_folders(kind: Literal["tasks", "protocols"]) -> str:
    """A note naming the folders of the search path that are not there: a mistyped folder in
    tasks_path or ANNOTATE_TASKS_PATH was searched as an empty one, and the error named only
    the task."""
    missing = [str(p) for p in settings().search_path(kind) if not p.is_dir()]
    if not missing:
        return ""
    setting = f"{kind}_path"
    return f" (no folder {', '.join(missing)}: check {setting} or {env_name(setting)})"


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:  # TOML is UTF-8: an editor saved it as Latin-1 or such
        line, byte = undecodable_at(data, exc)
        raise SpecError(
            f"{path}:{line}: not UTF-8 text (byte {byte} of the line); save the file as UTF-8"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise SpecError(f"{path}: cannot read: {exc.strerror}") from None


def load_task_file(path: Path, name: str | None = None) -> TaskSpec:
    data = _read_toml(path)
    data.setdefault("name", name or path.stem)
    try:
        spec = TaskSpec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(f"{path}: invalid task spec: {explain_validation(exc)}") from None
    # A key no keystroke gives (`ab`, `enter`, a space, which the page calls "Space") left its
    # answer to the mouse. Checked on the file only: a study stored with such a key still opens.
    written = [*spec.labels, *spec.answer_scale]
    untypable = [
        o.key for o in written if len(o.key) != 1 or not o.key.isprintable() or o.key.isspace()
    ]
    if untypable:
        raise SpecError(
            f"{path}: invalid task spec: answer keys {untypable} are not one letter, digit or "
            "sign each: a key is the one character an annotator types for that answer (not a "
            "space, nor a key's name such as enter)"
        )
    return spec


def validate_protocol(data: dict[str, Any], origin: str) -> ProtocolSpec:
    try:
        return ProtocolSpec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(f"{origin}: invalid protocol: {explain_validation(exc)}") from None


def load_protocol_file(path: Path) -> ProtocolSpec:
    data = _read_toml(path)
    data.setdefault("name", path.stem)
    return validate_protocol(data, origin=str(path))


@cache
def _task_files() -> dict[str, Path]:
    """Each task's file by name: the built-in folder first, then each folder of the search
    path in turn; the first file of a name is the one used (as PATH finds a command)."""
    found: dict[str, Path] = {}
    for root in search_dirs("tasks"):
        for path in sorted(root.rglob("*.toml")):
            found.setdefault(path.relative_to(root).with_suffix("").as_posix(), path)
    return found


def _is_builtin(path: Path) -> bool:
    return path.is_relative_to(builtin_dir("tasks"))


def all_tasks() -> list[TaskSpec]:
    return [_load_task_cached(name) for name in sorted(_task_files())]


def builtin_tasks() -> list[TaskSpec]:
    """The tasks that come with annotate: the benchmarks' own (a file in a task folder is
    never one of their tasks, and a broken one stops no benchmark's report)."""
    files = _task_files()
    return [_load_task_cached(name) for name in sorted(files) if _is_builtin(files[name])]


@cache
def _load_task_cached(name: str) -> TaskSpec:
    return load_task_file(_task_files()[name], name=name)


def resolve_task_name(name: str) -> str:
    """Canonical name for `name`: the name itself, or an official spelling like SST-2 or
    superglue/AX-b (case-insensitive). An alias shared by two benchmarks must be qualified.
    The built-in tasks are searched first, as their folder is: a file in a task folder named
    like one of them (sst2.toml, SST-2.toml) does not take its place, nor make it ambiguous."""
    files = _task_files()
    wanted = name.strip().lower()
    builtin = [n for n in files if _is_builtin(files[n])]
    for names in (builtin, [n for n in files if not _is_builtin(files[n])]):
        if wanted in names:
            return wanted
        matches = []
        for canonical in names:
            spec = _load_task_cached(canonical)
            spellings = {canonical, canonical.split("/")[-1], *(a.lower() for a in spec.aliases)}
            spellings |= {f"{spec.benchmark}/{a.lower()}" for a in spec.aliases}
            if wanted in {s.lower() for s in spellings}:
                matches.append(canonical)
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise UserError(f"task {name!r} is ambiguous: say one of {', '.join(sorted(matches))}")
    raise UserError(
        f"unknown task {name!r}{_nearest_task(wanted, files)}; `annotate tasks` lists them"
        f"{_missing_folders('tasks')}"
    )


def _nearest_task(wanted: str, files: Mapping[str, Path]) -> str:
    """A typo's likely task (`superglue/rtee`: superglue/rte), by every spelling of each."""
    import difflib

    spelled: dict[str, str] = {}
    for canonical in sorted(files):
        try:
            spec = _load_task_cached(canonical)
        except UserError:  # a broken file in a task folder suggests nothing
            continue
        for alias in [canonical, canonical.split("/")[-1], *spec.aliases]:
            spelled.setdefault(alias.lower(), canonical)
            spelled.setdefault(f"{spec.benchmark}/{alias.lower()}", canonical)
    close = difflib.get_close_matches(wanted, list(spelled), n=1, cutoff=0.8)
    return f" (did you mean {spelled[close[0]]}?)" if close else ""


def study_task(name: str, stored: Mapping[str, Any] | None, origin: str) -> TaskSpec:
    """A study's task spec: the copy stored with the study (schema 6), so a custom task given
    by path needs no file afterwards; by name for a study stored without one."""
    if stored is None:
        return load_task(name)
    try:
        return TaskSpec.model_validate(dict(stored))
    except ValidationError as exc:
        # A copy written by an older annotate whose spec format has since changed: the task's
        # current file, when it still resolves by name, is the best reading of it.
        try:
            return load_task(name)
        except UserError:
            raise SpecError(
                f"{origin}: invalid stored task spec: {explain_validation(exc)}"
            ) from None


def load_task(name: str) -> TaskSpec:
    """A task by name or alias, or from a path to a .toml file (a custom task)."""
    if name.endswith(".toml"):
        path = Path(name)
        if not path.is_file():
            raise UserError(f"{name}: no such task file")
        return load_task_file(path, name=path.stem)
    return _load_task_cached(resolve_task_name(name))


@cache
def _protocol_files() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for root in search_dirs("protocols"):  # the first file of a name is used (_task_files)
        for path in sorted(root.glob("*.toml")):
            found.setdefault(path.stem, path)
    return found


def all_protocols() -> list[ProtocolSpec]:
    return [load_protocol(name) for name in sorted(_protocol_files())]


def load_protocol(name: str) -> ProtocolSpec:
    """A protocol preset by name, or from a path to a .toml file."""
    if name.endswith(".toml"):
        path = Path(name)
        if not path.is_file():
            raise UserError(f"{name}: no such protocol file")
        return load_protocol_file(path)
    files = _protocol_files()
    if name not in files:
        raise UserError(
            f"unknown protocol {name!r}; known: {', '.join(sorted(files))}"
            f"{_missing_folders('protocols')}"
        )
    return load_protocol_file(files[name])


def default_protocol() -> str:
    """The protocol `study create` and `plan` use without --protocol: ANNOTATE_DEFAULT_PROTOCOL
    or the project file's default_protocol. A preset or file that is not there is named with
    the variable or the file's line that set it (the name alone sent users hunting)."""
    name = settings().default_protocol
    try:
        load_protocol(name)
    except SpecError:
        raise  # the protocol's own file is named by its error
    except UserError as exc:
        raise setting_error("default_protocol", str(exc)) from None
    return name


def parse_setting(assignment: str) -> tuple[str, Any]:
    """`KEY=VALUE` from the command line; VALUE is read as TOML (numbers, true, "all") when it
    can be, else kept as text."""
    key, sep, raw = assignment.partition("=")
    if not sep or not key.strip():
        raise UserError(f"--set expects KEY=VALUE, got {assignment!r}")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return key.strip(), value


def clear_caches() -> None:
    """Forget loaded specs (tests that change ANNOTATE_*_PATH)."""
    _task_files.cache_clear()
    _protocol_files.cache_clear()
    _load_task_cached.cache_clear()
