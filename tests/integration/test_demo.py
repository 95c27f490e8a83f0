"""The README's main job: `annotate demo --simulate` on the bundled demo data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotate.demo import DEMO_TASKS, build_demo_study
from annotate.protocol.session import AnnotatorSession, Phase
from annotate.protocol.status import study_status


def test_demo_simulate_prints_and_writes_the_report(cli, tmp_path: Path):
    result = cli("demo", "--simulate", "--dir", tmp_path / "demo")
    assert result.code == 0, result.stderr
    assert "Human, majority of 5 (n=20)" in " ".join(result.stdout.split())
    report = json.loads((tmp_path / "demo" / "demo-rte-report.json").read_text())
    assert report["n_items"] == 20 and report["n_annotators"] == 5
    assert (tmp_path / "demo" / "demo-rte-report.md").read_text().startswith("#")
    # run again in the same folder: it carries on instead of failing
    assert cli("demo", "--simulate", "--dir", tmp_path / "demo").code == 0


@pytest.mark.parametrize("key", list(DEMO_TASKS))
def test_every_demo_task_leaves_exactly_one_slot_per_item_for_the_user(workspace, key: str):
    ctx = build_demo_study(workspace.engine, key)
    status = study_status(workspace.engine, ctx)
    assert status["labels_per_item"] == {str(ctx.k - 1): status["items_total"]}
    you = AnnotatorSession.open(workspace.engine, ctx.study.name, "you", create_annotator=True)
    assert you.phase() is Phase.TRAINING and you.next_item() is not None
