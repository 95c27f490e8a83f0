"""Studies and annotators: create a study with its seeded samples, look things up."""

from __future__ import annotations

import random
import unicodedata
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, insert, select
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from annotate import specs
from annotate.errors import UserError
from annotate.splits import same_split
from annotate.store.engine import read_session, refresh_statistics, write_session
from annotate.store.models import Annotator, Dataset, Item, Study, StudyItem
from annotate.wording import count_of, shell_word

TRAINING = "training"
TEST = "test"


@dataclass(frozen=True)
class StudyContext:
    """A study with its task spec and effective protocol, loaded once."""

    study: Study
    spec: specs.TaskSpec
    protocol: specs.ProtocolSpec
    fixed: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """Facts fixed when the study was made (its items per phase), worked out once per loaded
    study and shared by all its sessions: the page serves every request from one context."""

    @property
    def id(self) -> int:
        assert self.study.id is not None
        return self.study.id

    @property
    def k(self) -> int:
        return self.protocol.annotators_per_item


@dataclass(frozen=True)
class CreatedStudy(StudyContext):
    """A study just created, with what its creator should hear: a sample smaller than asked."""

    warnings: tuple[str, ...] = ()
    """A training or test sample that fell short of the number asked for, and why, in words
    (`study create` prints each as a warning)."""
    notes: tuple[str, ...] = ()
    """What the study will not give, though nothing is wrong: test items without gold labels
    (`study create` prints each as a note)."""


def _shortfalls(
    protocol: specs.ProtocolSpec,
    train: Dataset | None,
    test: Dataset,
    n_training: int,
    n_test: int,
    test_asked: bool,
) -> tuple[str, ...]:
    """The samples smaller than asked: a dataset with fewer items, or training's dataset
    shared with the test sample, which the two never overlap in. The test sample only when
    its size was asked for (`test_asked`: --sample, --set test_sample): a preset's default
    sample of a smaller test set is the whole set, as expected, and says nothing."""
    out = []
    training, asked = protocol.training_quota(n_training), protocol.training_items
    if training < asked:
        shared = train is not None and train.id == test.id
        why = (
            f"the test sample uses dataset {test.id}, which training shares, and the two never "
            "overlap"
            if shared
            else f"dataset {None if train is None else train.id} has no more"
        )
        nobody = "; nobody will be trained or gated (a smaller --sample leaves some)"
        out.append(
            f"{count_of(training, 'training item')} instead of the {asked} asked for: {why}"
            + ("" if training else nobody)
        )
    wanted = protocol.test_sample
    if test_asked and wanted != "all" and n_test < int(wanted):
        out.append(
            f"{count_of(n_test, 'test item')} instead of the {wanted} asked for: dataset "
            f"{test.id} has no more"
        )
    return tuple(out)


def _pick_dataset(session: Session, tasks: list[str], split: str) -> Dataset | None:
    """The latest dataset of `tasks` in `split`, under any of its names (`val` is `dev`)."""
    latest = session.scalars(
        select(Dataset).where(Dataset.task.in_(tasks)).order_by(Dataset.id.desc())
    )
    return next((d for d in latest if same_split(d.split, split)), None)


def _dataset(session: Session, dataset_id: int) -> Dataset:
    dataset = session.get(Dataset, dataset_id)
    if dataset is None:
        raise UserError(f"no dataset {dataset_id}; `annotate datasets` lists them")
    return dataset


def dataset_by_reference(engine: Engine, reference: str, tasks: list[str]) -> int:
    """The id of the dataset meant by `reference`: a dataset id, a split (`val`, `dev`,
    `test`, `train`) or the imported file's name (`val.jsonl`, `dev_matched.tsv`, or without
    its suffix), among the datasets of `tasks`; the latest import when several match."""
    if reference.strip().isdigit():
        return int(reference)
    wanted = reference.strip().lower()
    with Session(engine) as session:
        candidates = list(
            session.scalars(
                select(Dataset).where(Dataset.task.in_(tasks)).order_by(Dataset.id.desc())
            )
        )
    for dataset in candidates:
        name = Path(dataset.path).name.lower()
        if same_split(wanted, dataset.split) or wanted in (name, name.rsplit(".", 1)[0]):
            assert dataset.id is not None
            return dataset.id
    known = (
        ", ".join(f"{d.id} ({Path(d.path).name}, {d.split})" for d in candidates) or "none imported"
    )
    raise UserError(
        f"no dataset of {' or '.join(tasks)} is {reference!r} (a dataset id, a split such as "
        f"val or test, or an imported file's name); these are: {known}"
    )


def _sample_test_items(
    session: Session, spec: specs.TaskSpec, dataset_id: int, wanted: int | str, rng: random.Random
) -> list[int]:
    """The seeded test sample. A task with minimal pairs (AX-g) is sampled in whole pairs:
    pairs are drawn until the sample holds at least `wanted` items (so one more when `wanted`
    is odd), then the items are shuffled so the two halves of a pair are not shown in a row."""
    in_file = select(Item.id).where(Item.dataset_id == dataset_id).order_by(Item.position)
    if spec.minimal_pairs is None:
        ids = list(session.scalars(in_file))
        return rng.sample(ids, len(ids) if wanted == "all" else min(int(wanted), len(ids)))
    rows = session.execute(in_file.add_columns(Item.source_id, Item.fields)).all()
    ids = [row[0] for row in rows]
    size = len(ids) if wanted == "all" else min(int(wanted), len(ids))
    keys = spec.pair_keys([row[1] for row in rows], [row[2] or {} for row in rows]).keys
    groups: dict[object, list[int]] = {}
    for n, (item_id, key) in enumerate(zip(ids, keys, strict=True)):
        groups.setdefault(key if key is not None else ("single", n), []).append(item_id)
    chosen: list[int] = []
    for group in rng.sample(list(groups.values()), len(groups)):
        if len(chosen) >= size:
            break
        chosen += group
    rng.shuffle(chosen)
    return chosen


def _check_gold(session: Session, spec: specs.TaskSpec, dataset: Dataset) -> None:
    """A classification dataset's gold labels are the task's labels: a task file whose labels
    changed since its data was imported would mark every right training answer wrong."""
    if spec.kind != "classification":
        return
    allowed = set(spec.label_values())
    rows = session.execute(
        select(Item.source_id, Item.gold).where(
            Item.dataset_id == dataset.id,
            Item.gold.is_not(None),  # type: ignore[union-attr]
        )
    )
    for source_id, gold in rows:
        if gold is not None and str(gold) not in allowed:
            raise UserError(
                f"dataset {dataset.id} ({Path(dataset.path).name}) has gold {gold!r} on item "
                f"{source_id!r}, which is not a label of {spec.name} ({', '.join(sorted(allowed))})"
                ": the task's labels changed since the import? Import the data again with "
                "this task, or create the study with the task the data was imported with"
            )


def study_name(name: str) -> str:
    """A study's name as it is stored: without spaces around it, and in one Unicode form
    (NFC), so that "café" typed with a combining accent, or "rte lab " with a trailing
    space, names the study "café" or "rte lab" and not a second one that looks the same."""
    return unicodedata.normalize("NFC", name.strip())


def create_study(
    engine: Engine,
    name: str,
    task: str,
    protocol: str,
    *,
    train_dataset_id: int | None = None,
    test_dataset_id: int | None = None,
    overrides: dict[str, Any] | None = None,
    crowd: Any = None,
) -> CreatedStudy:
    """Create a study: draw the training items and the test sample with the protocol's seed.
    `crowd`: a crowd_config.CrowdConfig for a study whose workers arrive by platform link.

    Training items come from a labelled dataset of the task (or of the task it trains on, as
    AX-b trains on RTE); when training and test come from the same dataset they never overlap.
    """
    spec = specs.load_task(task)
    preset = specs.load_protocol(protocol)
    effective = preset.effective(spec.name, overrides)
    name = study_name(name)
    if not name:
        raise UserError("a study needs a name")
    if effective.stop_when_decided and spec.kind != "classification":
        raise UserError(
            f"stop_when_decided needs a classification task; {spec.name} is {spec.kind}"
        )
    with write_session(engine) as session:
        if session.scalars(select(Study).where(Study.name == name)).first() is not None:
            raise UserError(f"a study named {name!r} exists already")
        train_tasks = [spec.name] + ([spec.train_on] if spec.train_on else [])
        if test_dataset_id is None:
            test = _pick_dataset(session, [spec.name], "test")
            if test is None:
                raise UserError(f"no test dataset of {spec.name}; import one or pass --test ID")
        else:
            test = _dataset(session, test_dataset_id)
        if test.task != spec.name:
            raise UserError(f"dataset {test.id} is {test.task}, not {spec.name}")
        train: Dataset | None
        if train_dataset_id is None:
            train = _pick_dataset(session, train_tasks, "dev") or _pick_dataset(
                session, train_tasks, "train"
            )
        else:
            train = _dataset(session, train_dataset_id)
        if effective.training_items > 0:
            if train is None:
                raise UserError(
                    f"no labelled dev/train dataset of {' or '.join(train_tasks)} for training; "
                    "import one or pass --train ID"
                )
            if train.task not in train_tasks:
                raise UserError(
                    f"dataset {train.id} is {train.task}; training needs {' or '.join(train_tasks)}"
                )
            if not train.detail.get("labelled"):
                labelled = [
                    d.id
                    for d in session.scalars(
                        select(Dataset)
                        .where(Dataset.task.in_(train_tasks))
                        .order_by(Dataset.id.desc())
                    )
                    if d.detail.get("labelled") and not same_split(d.split, "test")
                ]
                raise UserError(
                    f"dataset {train.id} ({train.task} {train.split}) has no gold labels, so it "
                    "cannot give feedback"
                    + (
                        f"; labelled datasets to train on: {', '.join(map(str, labelled))} "
                        f"(--train {labelled[0]}; `annotate datasets` lists them all)"
                        if labelled
                        else ""
                    )
                )
        for dataset in (test, train if effective.training_items > 0 else None):
            if dataset is not None and dataset.task == spec.name:
                _check_gold(session, spec, dataset)
        rng = random.Random(effective.seed)
        test_sample = _sample_test_items(session, spec, test.id or 0, effective.test_sample, rng)
        training: list[int] = []
        if effective.training_items > 0 and train is not None:
            pool = list(
                session.scalars(
                    select(Item.id).where(Item.dataset_id == train.id).order_by(Item.position)
                )
            )
            chosen = set(test_sample)
            pool = [i for i in pool if i not in chosen]
            training = rng.sample(pool, min(effective.training_items, len(pool)))
        # the assumptions in the study's own numbers (a preset's prose names its defaults)
        stated = effective.stated(training_items=len(training), test_sample=len(test_sample))
        study = Study(
            name=name,
            task=spec.name,
            protocol=stated.model_dump(),
            task_spec=spec.model_dump(mode="json"),
            train_dataset_id=train.id if train else None,
            test_dataset_id=test.id or 0,
            state=TRAINING if training else TEST,
            crowd=None if crowd is None else crowd.model_dump(mode="json"),
        )
        session.add(study)
        session.flush()
        rows = [
            {
                "study_id": study.id,
                "item_id": item_id,
                "phase": TRAINING,
                "position": pos,
                "n_labels": 0,
                "remaining": 0,  # every row names every column: one executemany
            }
            for pos, item_id in enumerate(training)
        ] + [
            {
                "study_id": study.id,
                "item_id": item_id,
                "phase": TEST,
                "position": pos,
                "n_labels": 0,
                "remaining": effective.annotators_per_item,
            }
            for pos, item_id in enumerate(test_sample)
        ]
        session.connection().execute(insert(StudyItem.__table__), rows)
        session.expunge(study)
    refresh_statistics(engine, StudyItem.__tablename__)  # type: ignore[arg-type]
    asked = "test_sample" in (overrides or {})
    warnings = _shortfalls(effective, train, test, len(training), len(test_sample), asked)
    return CreatedStudy(study, spec, stated, warnings=warnings, notes=_unscored(test))


def _unscored(test: Dataset) -> tuple[str, ...]:
    """A test set without gold (SuperGLUE's own test files): said at once, not first in the
    report, once people have labelled it."""
    if test.detail.get("labelled"):
        return ()
    return (
        f"the test items (dataset {test.id}, {test.split}) have no gold labels: the report will "
        "give agreement, not scores (to score, test on a labelled split, e.g. --test val)",
    )


_loaded: weakref.WeakKeyDictionary[Engine, dict[str, tuple[tuple, StudyContext]]] = (
    weakref.WeakKeyDictionary()
)
"""Studies loaded by this process, per engine and name, with the row they were loaded from."""


def _fingerprint(study: Study) -> tuple:
    """Everything a StudyContext is made of: when any of it changes (a closed training phase,
    new crowd settings, another study under the same name), the study is loaded afresh."""
    return (
        study.id,
        study.task,
        study.state,
        study.protocol,
        study.task_spec,
        study.crowd,
        study.train_dataset_id,
        study.test_dataset_id,
    )


def load_study(engine: Engine, name: str) -> StudyContext:
    """The study with its validated task spec and protocol. The row is read every time (one
    indexed select); the validation, the crowd settings and what StudyContext.fixed keeps are
    worked out once per process while the row stays the same."""
    with read_session(engine) as session:
        study = session.scalars(select(Study).where(Study.name == name)).first()
        if study is None and study_name(name) != name:  # typed another way than stored
            study = session.scalars(select(Study).where(Study.name == study_name(name))).first()
        if study is None:
            known = ", ".join(session.scalars(select(Study.name).order_by(Study.id))) or "none yet"
            raise UserError(f"no study named {name!r} (studies: {known})")
        session.expunge(study)
    seen = _loaded.setdefault(engine, {})
    fingerprint = _fingerprint(study)
    cached = seen.get(name)
    if cached is not None and cached[0] == fingerprint:
        return cached[1]
    spec = specs.study_task(study.task, study.task_spec, origin=f"study {name!r}")
    protocol = specs.validate_protocol(study.protocol, origin=f"study {name!r}")
    ctx = StudyContext(study, spec, protocol)
    seen[name] = (fingerprint, ctx)
    return ctx


class AnnotatorExists(UserError):
    """An annotator of that name is registered already."""


def add_annotator(
    engine: Engine, name: str, token_hash: str | None = None, *, synthetic: bool = False
) -> Annotator:
    """`synthetic`: made by `annotate simulate` (which writes as no one else)."""
    name = name.strip()
    if not name:
        raise UserError("an annotator needs a name")
    try:
        with write_session(engine) as session:
            annotator = Annotator(name=name, token_hash=token_hash, synthetic=synthetic)
            session.add(annotator)
            session.flush()
            session.expunge(annotator)
            return annotator
    except IntegrityError:
        raise AnnotatorExists(f"an annotator named {name!r} exists already") from None


def get_annotator(engine: Engine, name: str, *, create: bool = False) -> Annotator:
    with read_session(engine) as session:
        annotator = session.scalars(select(Annotator).where(Annotator.name == name)).first()
        if annotator is not None:
            session.expunge(annotator)
            return annotator
    if not create:
        raise UserError(
            f"no annotator named {name!r}; add one with `annotate annotator add {shell_word(name)}`"
        )
    try:
        return add_annotator(engine, name)
    except AnnotatorExists:  # another process added the same name a moment ago
        return get_annotator(engine, name)
