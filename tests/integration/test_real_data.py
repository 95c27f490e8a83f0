"""The real GLUE/SuperGLUE files in ../shared/data import with the right counts (skipped on a
fresh clone, where they are absent)."""

from __future__ import annotations

import pytest
from sqlmodel import Session, select

from annotate import specs
from annotate.formats.importer import import_file
from annotate.scoring.intervals import SCORE_METHOD
from annotate.store.models import Item
from tests.conftest import shared_file

CASES = [
    ("glue/cola", "glue/CoLA/cola_public/raw/in_domain_train.tsv", 8551, {}),
    # CoLA's two raw dev files import together: tests/unit/test_import_cola_parts.py.
    ("glue/sst2", "glue/SST-2/dev.tsv", 872, {}),
    ("glue/sst2", "glue/SST-2/test.tsv", 1821, {}),
    ("glue/mrpc", "glue/MRPC/dev.tsv", 6, {}),
    ("glue/mrpc", "glue/MRPC/msr_paraphrase_train.txt", 4076, {}),
    ("glue/mrpc", "glue/MRPC/msr_paraphrase_test.txt", 1725, {}),
    ("glue/stsb", "glue/STS-B/dev.tsv", 1500, {}),
    ("glue/stsb", "glue/STS-B/test.tsv", 1379, {}),
    ("glue/stsb", "glue/STS-B/train.tsv", 5749, {}),
    ("glue/wnli", "glue/WNLI/dev.tsv", 71, {}),
    ("glue/ax", "glue/diagnostic/diagnostic-full.tsv", 1104, {}),
    ("superglue/axb", "superglue/AX-b/AX-b.jsonl", 1104, {}),
    ("superglue/axg", "superglue/AX-g/AX-g.jsonl", 356, {}),
    ("superglue/boolq", "superglue/BoolQ/test.jsonl", 3245, {}),
    ("superglue/cb", "superglue/CB/val.jsonl", 56, {}),
    ("superglue/cb", "superglue/CB/test.jsonl", 250, {}),
    ("superglue/copa", "superglue/COPA/val.jsonl", 100, {}),
    ("superglue/copa", "superglue/COPA/test.jsonl", 500, {}),
    ("superglue/multirc", "superglue/MultiRC/val.jsonl", 953, {"paragraphs": 83, "answers": 4848}),
    (
        "superglue/multirc",
        "superglue/MultiRC/test.jsonl",
        1820,
        {"paragraphs": 166, "answers": 9693},
    ),
    ("superglue/record", "superglue/FewGLUE/ReCoRD/train.jsonl", 32, {"passages": 32}),
    ("superglue/rte", "superglue/RTE/train.jsonl", 2490, {}),
    ("superglue/rte", "superglue/RTE/val.jsonl", 277, {}),
    ("superglue/rte", "superglue/RTE/test.jsonl", 3000, {}),
    ("superglue/wic", "superglue/WiC/test.jsonl", 1400, {}),
    ("superglue/wic", "superglue/FewGLUE/WiC/train.jsonl", 32, {}),
    # Every WSC record passes the import's index check, though 149 of the 1,608 span texts
    # of train, val and test differ from the words at their index (case, punctuation, more).
    ("superglue/wsc", "superglue/WSC/train.jsonl", 554, {}),
    ("superglue/wsc", "superglue/WSC/val.jsonl", 104, {}),
    ("superglue/wsc", "superglue/WSC/test.jsonl", 146, {}),
    ("superglue/wsc", "superglue/FewGLUE/WSC/train.jsonl", 32, {}),
    (
        "superglue/boolq",
        "superglue/_variants/opencompass_stringified_labels/BoolQ/val.jsonl",
        3270,
        {},
    ),
    ("superglue/wic", "superglue/_variants/opencompass_stringified_labels/WiC/val.jsonl", 638, {}),
]


@pytest.mark.parametrize(("task", "relative", "count", "detail"), CASES, ids=[c[1] for c in CASES])
def test_real_file_imports_with_the_right_count(workspace, task, relative, count, detail):
    path = shared_file(relative)
    result = import_file(workspace.engine, specs.load_task(task), path)
    assert result.n_items == count
    for key, value in detail.items():
        assert result.detail[key] == value


def test_real_diagnostic_keeps_tags_per_coarse_category(workspace):
    path = shared_file("glue/diagnostic/diagnostic-full.tsv")
    result = import_file(workspace.engine, specs.load_task("glue/ax"), path)
    with Session(workspace.engine) as s:
        items = s.exec(select(Item).where(Item.dataset_id == result.dataset_id)).all()
    coarse = {c: sum(bool(i.tags[c]) for i in items) for c in items[0].tags}
    assert coarse == {
        "Lexical Semantics": 368,
        "Predicate-Argument Structure": 424,
        "Logic": 364,
        "Knowledge": 284,
    }
    assert all("" not in tags for i in items for tags in i.tags.values())
    assert sorted({i.gold for i in items}) == ["contradiction", "entailment", "neutral"]


def test_real_axg_report_quotes_the_score_interval_over_pairs(cli, workspace, tmp_path):
    """AX-g is sampled and scored in minimal pairs, so its accuracy is not one binomial
    proportion over items (scoring.intervals.wilson_applies is False): the report quotes the
    score-type interval at the effective number of pairs and no Wilson bounds over items, in
    no table, figure or JSON key."""
    from annotate.protocol.studies import create_study
    from annotate.simulate import simulate

    rte = import_file(
        workspace.engine,
        specs.load_task("superglue/rte"),
        shared_file("superglue/FewGLUE/RTE/train.jsonl"),
        split="dev",
    )
    axg = import_file(
        workspace.engine, specs.load_task("superglue/axg"), shared_file("superglue/AX-g/AX-g.jsonl")
    )
    create_study(
        workspace.engine,
        "axg",
        "superglue/axg",
        "quick",
        train_dataset_id=rte.dataset_id,
        test_dataset_id=axg.dataset_id,
        overrides={"training_items": 6, "gate_min_items": 6, "test_sample": 60},
    )
    simulate(workspace.engine, "axg", 6, 0.9, seed=3)
    report = cli("report", "axg", "--format", "json", "--bootstrap", "300").json()
    accuracy = report["scores"]["accuracy"]
    assert accuracy["value"] is not None and accuracy["ci_low"] is not None
    assert "wilson_low" not in accuracy and "wilson_high" not in accuracy
    assert all("wilson_low" not in a for a in report["annotators"])
    # The score-type interval over the 30 pairs (the unit of resampling), never zero-wide
    # (issue 39: simulated at 0.9, the majority gets every pair right and the paired
    # bootstrap collapsed to [100.0, 100.0]).
    head = report["headline_interval"]
    assert head["method"].startswith(SCORE_METHOD) and "of 30 resampling units" in head["method"]
    assert head["high"] > head["low"]
    for estimate in [*report["scores"].values(), report["task_score"]]:
        assert estimate["ci_high"] > estimate["ci_low"]
    assert "minimal pairs resampled together" in report["bootstrap"]["method"]
    for fmt in ("table", "markdown", "html"):
        out = cli("report", "axg", "--format", fmt, "--bootstrap", "300").stdout
        assert "95% CI (bootstrap)" in out, fmt
        assert "95% CI (Wilson)" not in out and "[100.0, 100.0]" not in out, fmt
        if fmt == "html":  # the annotator figure draws no interval
            assert "accuracy, no interval" in out
