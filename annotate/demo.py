"""The embedded demo: a throwaway store built from the bundled demo data (all text written for
this project), a study with the `quick` protocol, and simulated co-annotators who take every
slot of each test item but one, which is left for the person trying the tool."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the engine, importer and simulator load with the demo, not with --help
    from sqlalchemy import Engine

    from annotate.protocol.studies import StudyContext

DEMO_DATA = Path(__file__).parent / "demo_data"


@dataclass(frozen=True)
class DemoTask:
    key: str
    task: str
    train: str
    test: str
    train_task: str | None = None


DEMO_TASKS = {
    "rte": DemoTask("rte", "superglue/rte", "rte/val.jsonl", "rte/test.jsonl"),
    "mnli": DemoTask("mnli", "glue/mnli-m", "mnli/dev_matched.tsv", "mnli/test_matched.tsv"),
    "sst2": DemoTask("sst2", "glue/sst2", "sst2/dev.tsv", "sst2/test.tsv"),
    "stsb": DemoTask("stsb", "glue/stsb", "stsb/dev.tsv", "stsb/test.tsv"),
    "diagnostic": DemoTask(
        "diagnostic",
        "glue/ax",
        "mnli/dev_matched.tsv",
        "diagnostic/diagnostic-full.tsv",
        train_task="glue/mnli-m",
    ),
}

CO_ANNOTATOR_ACCURACY = 0.85


def build_demo_study(
    engine: Engine, key: str, *, co_annotators: int | None = None, seed: int = 7
) -> StudyContext:
    """Import the demo task's files, create study `demo-KEY` (quick protocol) and let simulated
    co-annotators fill all but one slot of every test item (k - 1 of them by default)."""
    from annotate import specs
    from annotate.formats.importer import import_file
    from annotate.protocol.studies import create_study
    from annotate.simulate import simulate

    demo = DEMO_TASKS[key]
    spec = specs.load_task(demo.task)
    train_spec = specs.load_task(demo.train_task) if demo.train_task else spec
    train = import_file(engine, train_spec, DEMO_DATA / demo.train, split="dev")
    test = import_file(engine, spec, DEMO_DATA / demo.test, split="test")
    ctx = create_study(
        engine,
        f"demo-{key}",
        demo.task,
        "quick",
        train_dataset_id=train.dataset_id,
        test_dataset_id=test.dataset_id,
    )
    helpers = ctx.k - 1 if co_annotators is None else co_annotators
    if helpers > 0:
        simulate(
            engine,
            ctx.study.name,
            helpers,
            CO_ANNOTATOR_ACCURACY,
            seed=seed,
            prefix="co-annotator-",
        )
    return ctx
