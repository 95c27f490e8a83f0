"""An imported study (labels collected outside annotate) in everything that does not depend on
annotate's gate: the benchmark row, compare, the submission export and the console's Report
screen."""

from __future__ import annotations

import json
from pathlib import Path

from annotate.formats.importer import import_file
from annotate.formats.label_import import import_labels
from annotate.specs import load_task
from annotate.tui.console.app import create_console_app
from annotate.tui.console.screens.report import ReportScreen
from annotate.tui.console.screens.study import StudyScreen
from tests import label_fixtures as lf
from tests.tui.console_support import NOW
from tests.tui.support import all_static_text, screen_text, wait_until

RTE = "entailment=1,not_entailment=0"


def _rte_mturk(engine, tmp_path: Path) -> list[dict]:
    """An RTE dataset and a two-slot MTurk batch on it whose answers are 1/0."""
    items = [
        {
            "premise": f"Premise number {i} about the harbour.",
            "hypothesis": f"Claim {i}.",
            "label": "entailment" if i % 2 else "not_entailment",
            "idx": i,
        }
        for i in range(6)
    ]
    data = lf.write_jsonl(tmp_path / "val.jsonl", items)
    dataset = import_file(engine, load_task("superglue/rte"), data, split="dev")
    rows = [
        "HITId,AssignmentId,WorkerId,AssignmentStatus,WorkTimeInSeconds,Input.idx_0,Input.idx_1,Answer.ent_0,Answer.ent_1,Approve,Reject"
    ]
    for hit in range(3):
        for n, worker in enumerate(("AW1", "AW2", "AW3")):
            a, b = 2 * hit, 2 * hit + 1
            wrong = n == 2 and hit == 0
            rows.append(
                f"H{hit},A{hit}{n},{worker},Approved,60,{a},{b},{int(bool(a % 2) != wrong)},{b % 2}"
            )
    batch = tmp_path / "batch.csv"
    batch.write_text("\n".join(rows) + "\n")
    import_labels(engine, batch, study="rte-mturk", dataset_id=dataset.dataset_id, values=RTE)
    return items


def test_benchmark_compare_and_submission_on_an_imported_study(cli, workspace, tmp_path):
    items = _rte_mturk(workspace.engine, tmp_path)
    row = cli("report", "--benchmark", "superglue", "--bootstrap", "0", "--format", "json")
    assert row.code == 0, row.stderr
    assert "rte-mturk" in row.stdout
    model = tmp_path / "RTE.jsonl"
    model.write_text(
        "".join(json.dumps({"idx": i["idx"], "label": "entailment"}) + "\n" for i in items)
    )
    compared = cli("compare", "rte-mturk", "--model", model, "--bootstrap", "0", "--format", "json")
    assert compared.code == 0, compared.stderr
    exported = cli("export", "rte-mturk", "--format", "superglue", "--to", tmp_path / "out")
    assert exported.code == 0, exported.stderr
    lines = (tmp_path / "out" / "RTE.jsonl").read_text().splitlines()
    assert len(lines) == 6


async def test_the_console_report_screen_shows_an_imported_study(workspace, tmp_path):
    _rte_mturk(workspace.engine, tmp_path)
    app = create_console_app(workspace.engine, "rte-mturk", clock=lambda: NOW, researcher="rhea")
    async with app.run_test(size=(120, 80)) as pilot:
        await wait_until(
            pilot, lambda: isinstance(app.screen, StudyScreen) and app.screen.loaded, "study"
        )
        await pilot.press("r")
        await wait_until(
            pilot, lambda: isinstance(app.screen, ReportScreen) and app.screen.loaded, "report"
        )
        text = screen_text(app)
        assert "Human, majority of 3" in text


async def _console_text(workspace, study: str | None) -> str:
    app = create_console_app(workspace.engine, study, clock=lambda: NOW, researcher="rhea")
    async with app.run_test(size=(160, 60)) as pilot:
        if study is None:
            await wait_until(pilot, lambda: getattr(app.screen, "loaded", False), "studies")
        else:
            await wait_until(
                pilot, lambda: isinstance(app.screen, StudyScreen) and app.screen.loaded, "study"
            )
        return all_static_text(app) + "\n" + screen_text(app)


async def test_the_console_words_imported_labels_as_status_does(cli, workspace, tmp_path):
    """A study of imported labels: the console's study screen and studies list count and word
    its labels by the engine's one tally, as `annotate status` does: the label past k is "past
    k, as imported" (no extra annotator for a tie), the labels a refusal set aside are "short"
    (nothing here collects them: no "to go", no ETA withheld as stuck), and the workers are
    "imported" with gate "unknown", not trainees in training."""
    refused = lf.imported_crowd(cli, tmp_path, past_k=True)
    status = cli("status", "crowd", "--format", "json").json()
    text = await _console_text(workspace, "crowd")
    assert status["test_labels"]["words"] in " ".join(text.split())
    assert "past k, as imported" in text
    assert "extra annotator" not in text and "for ties" not in text
    assert {a["phase"] for a in status["annotators"]} == {"imported"}
    assert "unknown" in text and "waiting" not in text and "pending" not in text
    assert cli("gate", "crowd", "--reject", refused, "--reason", "answered no to all").code == 0
    status = cli("status", "crowd", "--format", "json").json()
    words = status["test_labels"]["words"]
    assert words.endswith("2 short (set aside; imported labels: none are collected here)")
    text = " ".join((await _console_text(workspace, "crowd")).split())
    assert words in text
    assert "to go" not in text and "stuck" not in text and "no item can complete" not in text
    assert "ETA: none (imported labels)" in text
    listed = " ".join((await _console_text(workspace, None)).split())
    assert "to go" not in listed and "for ties" not in listed
    assert "short" in listed
