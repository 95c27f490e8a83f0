"""Report acceptance on real files: per-tag R3 of a model on the real GLUE diagnostic equals
sklearn's MCC on exactly the items carrying each tag (skipped when ../shared is absent)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from sklearn.metrics import matthews_corrcoef

from annotate import specs
from annotate.formats.importer import import_file
from annotate.formats.readers import FileSummary, read_items
from annotate.protocol.studies import create_study
from annotate.simulate import simulate
from tests.conftest import shared_file

pytestmark = pytest.mark.slow
CLASSES = ["entailment", "neutral", "contradiction"]


def test_per_tag_r3_on_the_real_diagnostic_equals_sklearn(cli, workspace, tmp_path: Path):
    path = shared_file("glue/diagnostic/diagnostic-full.tsv")
    spec = specs.load_task("glue/ax")
    dataset = import_file(workspace.engine, spec, path)
    create_study(
        workspace.engine,
        "ax-real",
        "glue/ax",
        "quick",
        test_dataset_id=dataset.dataset_id,
        overrides={"test_sample": "all", "training_items": 0, "annotators_per_item": 1},
    )
    simulate(workspace.engine, "ax-real", 1, 0.8, seed=3)
    # a model's predictions in the official AX.tsv layout: gold 60% of the time, else random
    items = list(read_items(path, spec, FileSummary()))
    rng = random.Random(5)
    predictions = {
        it.source_id: it.gold if rng.random() < 0.6 else rng.choice(CLASSES) for it in items
    }
    (tmp_path / "bert").mkdir()
    model = tmp_path / "bert" / "AX.tsv"  # the model is named after its folder
    model.write_text("index\tprediction\n" + "".join(f"{i}\t{p}\n" for i, p in predictions.items()))
    result = cli("report", "ax-real", "--format", "json", "--bootstrap", "0", "--model", model)
    assert result.code == 0, result.stderr
    diagnostics = json.loads(result.stdout)["diagnostics"]
    checked = 0
    for coarse, by_tag in diagnostics["fine"].items():
        for tag, entry in by_tag.items():
            carrying = [it for it in items if tag in it.tags[coarse]]
            expected = matthews_corrcoef(
                [it.gold for it in carrying], [predictions[it.source_id] for it in carrying]
            )
            assert entry["n"] == len(carrying)
            model_entry = entry["models"]["bert"]
            if model_entry.get("undefined"):  # one class: sklearn's convention is 0
                assert model_entry["value"] is None and expected == 0, tag
            else:
                assert model_entry["value"] == pytest.approx(expected, abs=1e-12), tag
            checked += 1
    assert checked == 33
    logic = [it for it in items if it.tags["Logic"]]
    assert diagnostics["coarse"]["Logic"]["n"] == len(logic) == 364
    assert diagnostics["coarse"]["Logic"]["models"]["bert"]["value"] == pytest.approx(
        matthews_corrcoef([it.gold for it in logic], [predictions[it.source_id] for it in logic])
    )
