"""The report's JSON contract: `annotate report --schema` prints its JSON Schema without a
store, the reports of a demo study and of a crowd study validate against it (the suite checks
every other JSON report it makes: tests/report_schema_check.py), and a report read back with
the models writes the same bytes (the models are faithful to the JSON)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
from pathlib import Path

import numpy as np
import pytest
from jsonschema import Draft7Validator
from typer.testing import CliRunner

from annotate.cli import app
from annotate.cli.output import print_json
from annotate.protocol import crowd
from annotate.report.model.base import ReportModel, SparseModel
from annotate.report.model.schema import Estimate, ReportJson, StudyReport, report_schema
from tests.crowd_helpers import arrive, crowd_study, label_test, train
from tests.report_schema_check import check_report

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _written(data: dict, indent: int | None = None) -> str:
    """What `report --format json` prints for `data`."""
    with contextlib.redirect_stdout(io.StringIO()) as out:
        print_json(data, indent=indent)
    return out.getvalue()


def _reads_back(text: str) -> StudyReport:
    """The report `text` holds, read with the models: writing it again gives `text`."""
    report = ReportJson.model_validate_json(text).root
    assert isinstance(report, StudyReport)
    assert _written(report.to_json()) == text
    return report


def test_report_schema_is_printed_without_a_store(tmp_path: Path):
    store = tmp_path / "none.db"
    result = CliRunner().invoke(app, ["--db", f"sqlite:///{store}", "report", "--schema"])
    assert result.exit_code == 0, result.output
    schema = json.loads(result.stdout)
    Draft7Validator.check_schema(schema)
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert schema["$id"] == "report-schema.json"
    assert schema["title"] == "annotate report --format json"
    assert schema == report_schema()
    study = schema["definitions"]["StudyReport"]
    assert {"study", "summary", "task_score", "agreement", "datasheet"} <= set(study["properties"])
    # left out when it does not apply: not required; written in every report: required
    assert "datasheet" not in study["required"] and "task_score" in study["required"]
    row = schema["definitions"]["AnnotatorRow"]
    assert "wilson_low" in row["properties"] and "wilson_low" not in row["required"]
    assert "kind" not in schema["definitions"]["Coefficient"]["properties"]  # never written
    assert not store.exists()


def test_the_demo_report_validates_and_reads_back_byte_for_byte(cli, tmp_path: Path):
    folder = tmp_path / "demo"
    assert cli("demo", "--simulate", "--dir", folder).code == 0
    db = f"sqlite:///{folder / 'demo.db'}"
    result = cli("--db", db, "report", "demo-rte", "--format", "json")
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    check_report(data)
    report = _reads_back(result.stdout)
    assert report.study == "demo-rte" and report.datasheet is not None
    assert report.agreement.fleiss_kappa.kind == "fleiss"  # read back from the keys written
    indented = cli("--db", db, "report", "demo-rte", "--format", "json", "--indent", "2")
    assert _written(report.to_json(), indent=2) == indented.stdout
    # what the suite's check reports when a key is missing or of the wrong type
    del data["ties"]
    with pytest.raises(AssertionError, match="at \\(top\\): 'ties' is a required property"):
        check_report(data)
    data = json.loads(result.stdout)
    data["agreement"]["fleiss_kappa"]["n_items"] = "20"
    with pytest.raises(AssertionError, match="agreement/fleiss_kappa/n_items: '20' is not of"):
        check_report(data)


def test_a_crowd_report_validates_and_reads_back_byte_for_byte(workspace, cli, tmp_path: Path):
    engine = workspace.engine
    crowd_study(engine, tmp_path, annotators_per_item=3, max_test_items_per_annotator=10)
    workers = [arrive(engine, "pilot", n) for n in range(1, 6)]
    for n, session in enumerate(workers):
        train(engine, session, right=n != 4)  # the fifth is screened out
    for session in workers[:4]:
        label_test(session)
    for session in workers:
        crowd.exit_for(engine, "pilot", session.annotator.name)
    result = cli("report", "pilot", "--format", "json")
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    check_report(data)
    assert data["datasheet"]["crowd"]["workers"] == 5
    assert data["datasheet"]["crowd"]["outcomes"]["screened_out"] == 1
    _reads_back(result.stdout)


def test_the_docs_page_is_generated_from_the_schema():
    spec = importlib.util.spec_from_file_location(
        "report_schema_hook", DOCS / "hooks" / "report_schema.py"
    )
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    text = hook.markdown()
    assert text.index("### StudyReport") < text.index("### BenchmarkReport")
    assert "| `wilson_low` | number or null |  |" in text  # left out when None
    assert json.dumps(report_schema(), indent=2, ensure_ascii=False) in text
    assert hook.MARKER in (DOCS / "report-schema.md").read_text(encoding="utf-8")


def test_numbers_are_written_as_built():
    # a whole number stays an integer, numpy numbers are plain, NaN is null, None is left out
    e = Estimate.model_construct(
        value=np.float64("nan"), ci_low=np.int64(3), ci_high=3.0, wilson_low=1
    )
    assert (
        json.dumps(e.to_json()) == '{"value": null, "ci_low": 3, "ci_high": 3.0, "wilson_low": 1}'
    )
    again = Estimate.model_validate_json('{"value": 0.5, "ci_low": 0, "ci_high": 1.0}')
    assert json.dumps(again.to_json()) == '{"value": 0.5, "ci_low": 0, "ci_high": 1.0}'


def test_a_model_that_leaves_keys_out_derives_from_the_sparse_base():
    with pytest.raises(TypeError, match="Loose leaves keys out of its JSON: derive from Sparse"):

        class Loose(ReportModel):
            omit_if_none = ("note",)
            note: str | None = None

    class Sparse(SparseModel):
        omit_if_none = ("note",)
        n: int
        note: str | None = None

    assert Sparse.model_construct(n=1).to_json() == {"n": 1}
    assert Sparse.model_construct(n=1, note="x").to_json() == {"n": 1, "note": "x"}
