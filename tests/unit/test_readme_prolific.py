"""The recipe "A baseline on Prolific, from files" runs as written: its ```bash blocks, in
order, in a shell against a scratch store, with Prolific workers arriving by link between them
(the engine's entry, as `annotate serve` does): 8 trainees on study A, the gate closed, the
allow-list exported, the admitted on study B with their batches of 20, then the bonus files."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from annotate.protocol import crowd
from annotate.workspace import open_workspace
from tests.crowd_helpers import gold, pid, wrong
from tests.engine_helpers import rte_rows, write_jsonl
from tests.unit.test_crowd_cli import Clock, worker

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "recipes" / "prolific.md"
BLOCKS = re.findall(r"```bash\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)


def test_the_recipe_has_its_four_steps():
    assert len(BLOCKS) == 4
    assert "annotate pay rte-prolific" in BLOCKS[3]


def run(block: str, home: Path) -> str:
    env = {
        **os.environ,
        "HOME": str(home),
        "ANNOTATE_DB": f"sqlite:///{home / 'annotate.db'}",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    done = subprocess.run(
        ["bash", "-e", "-c", block], cwd=home, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{block}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.slow
def test_the_prolific_recipe_runs_end_to_end(tmp_path: Path):
    write_jsonl(tmp_path / "data" / "RTE" / "val.jsonl", rte_rows(40))
    write_jsonl(tmp_path / "data" / "RTE" / "test.jsonl", rte_rows(100, 1000))
    run(BLOCKS[0], tmp_path)
    shown = run(BLOCKS[1], tmp_path)
    assert "https://annotate.example.org/?PROLIFIC_PID={{%PROLIFIC_PID%}}" in shown
    engine = open_workspace(f"sqlite:///{tmp_path / 'annotate.db'}").engine
    config = crowd.require_config(crowd.load_study(engine, "rte-prolific"))
    study_a, study_b = config.training_study_id, config.test_study_id
    assert study_a and study_b
    assert config.codes["training_done"] in shown
    clock = Clock()
    # Study A: eight trainees (six right throughout, two half right), one who does not consent.
    for n in range(1, 9):
        session = worker(engine, "rte-prolific", n, study_a, clock)
        assert crowd.record_consent(engine, "rte-prolific", session.annotator.name, True) is None
        k = 0
        while (item := session.next_item()) is not None:
            truth = gold(engine, item)
            session.submit(item, truth if n <= 6 or k % 2 else wrong(truth))
            k += 1
        leave = crowd.exit_for(engine, "rte-prolific", session.annotator.name, clock=clock)
        assert leave is not None and leave.code == config.codes["training_done"]
    no = worker(engine, "rte-prolific", 9, study_a, clock)
    leave = crowd.record_consent(engine, "rte-prolific", no.annotator.name, False, clock=clock)
    assert leave is not None and leave.outcome == "no_consent"
    assert "rte-prolific" in run(BLOCKS[2], tmp_path)
    admitted = (tmp_path / "admitted.csv").read_text().split()
    assert admitted == [pid(n) for n in range(1, 7)]
    # Study B: the admitted do their batch; a trainee the gate refused gets a code.
    for n in range(1, 7):
        session = worker(engine, "rte-prolific", n, study_b, clock)
        answered = 0
        while (item := session.next_item()) is not None:
            session.submit(item, "entailment")
            answered += 1
        assert answered == 20
        crowd.record_survey(engine, "rte-prolific", session.annotator.name, {"difficulty": "hard"})
        leave = crowd.exit_for(engine, "rte-prolific", session.annotator.name, clock=clock)
        assert leave is not None and leave.code == config.codes["completed"]
    refused = worker(engine, "rte-prolific", 7, study_b, clock)
    leave = crowd.exit_for(engine, "rte-prolific", refused.annotator.name, clock=clock)
    assert leave is not None and leave.code == config.codes["not_admitted"]
    out = run(BLOCKS[3], tmp_path)
    assert "median effective hourly pay: 12.00 GBP/h" in out
    # Two paid studies: `--to bonus.csv` writes one bulk-bonus file for each.
    assert not (tmp_path / "bonus.csv").exists()
    bonus_a = (tmp_path / f"bonus-{study_a}.csv").read_text().splitlines()
    bonus_b = (tmp_path / f"bonus-{study_b}.csv").read_text().splitlines()
    # Nine workers visited A; the one who did not consent spent less than the base reward pays.
    # Seven visited B; the one the gate refused left at once.
    assert [b.split(",")[0] for b in bonus_a] == [pid(n) for n in range(1, 9)]
    assert [b.split(",")[0] for b in bonus_b] == [pid(n) for n in range(1, 7)]
    assert all(re.fullmatch(r"[0-9a-f]{24},\d+\.\d\d", b) for b in bonus_a + bonus_b)
    assert pid(1) in out  # annotator show w01: the one place besides the pay file
    assert out.count(pid(1)) == 1
    assert "Effective hourly pay" in out
    assert "difficulty,hard" in (tmp_path / "survey.csv").read_text()
