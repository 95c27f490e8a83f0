"""Thirty Prolific workers at once on the engine (issue 22's acceptance, without the browser:
the HTTP version drives `annotate serve` with the same rules). Each arrives by link with their
own PROLIFIC_PID, consents, trains and meets a threshold gate (some fail and get the screen-out
code); the admitted stop at max_test_items_per_annotator = 20 and get the completion code.
Then: every item has exactly k labels, no platform id in the report, status or label export,
and `annotate pay` pays time on task x rate, recomputed here from the stored visit times."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from sqlmodel import Session, select

from annotate.protocol import crowd
from annotate.store.models import Annotator, StudyItem, Visit
from tests.crowd_helpers import CODES, STUDY_A, crowd_study, gold, pid, prolific_query, wrong

WORKERS = 30
FAILING = range(25, 31)
"""Workers 25-30 answer training wrongly: screened out."""


@pytest.mark.slow
def test_thirty_prolific_workers(workspace, cli, tmp_path: Path):
    engine = workspace.engine
    crowd_study(
        engine,
        tmp_path,
        test=80,
        annotators_per_item=5,
        max_test_items_per_annotator=20,
        crowd_settings={"consent": "You may stop at any time."},
    )
    ctx = crowd.load_study(engine, "pilot")
    exits: dict[int, crowd.Exit] = {}
    answered: dict[int, int] = {}
    errors: list[BaseException] = []

    def one(n: int) -> None:
        try:
            entry = crowd.parse_link(ctx, prolific_query(n))
            arrival = crowd.enter_by_link(engine, "pilot", entry)
            assert crowd.record_consent(engine, "pilot", arrival.annotator, True) is None
            session = crowd.open_session(engine, "pilot", arrival)
            count = 0
            while (item := session.next_item()) is not None:
                if item.phase == "training":
                    truth = gold(engine, item)
                    session.submit(item, wrong(truth) if n in FAILING else truth)
                else:
                    session.submit(item, "entailment")
                    count += 1
            answered[n] = count
            leave = crowd.exit_for(engine, "pilot", arrival.annotator)
            assert leave is not None
            exits[n] = leave
        except BaseException as exc:  # reported below, with the worker's number
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(1, WORKERS + 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for n in FAILING:
        assert (exits[n].outcome, exits[n].code) == ("screened_out", CODES["screened_out"])
    admitted = [n for n in range(1, WORKERS + 1) if n not in FAILING]
    assert all(answered[n] <= 20 for n in admitted) and sum(answered.values()) == 80 * 5
    for n in admitted:
        expected = "completed" if answered[n] else "study_full"
        assert exits[n].outcome == expected
        assert exits[n].redirect_url.endswith(f"cc={CODES[expected]}")
    with Session(engine) as s:
        rows = s.exec(select(StudyItem).where(StudyItem.phase == "test")).all()
        assert len(rows) == 80 and {row.n_labels for row in rows} == {5}
        assert len(s.exec(select(Annotator)).all()) == WORKERS
    # No platform id anywhere but the pay file and `annotator show`.
    out = tmp_path / "out"
    assert cli("export", "pilot", "--to", out, "--format", "labels").code == 0
    shown = cli("status", "pilot", "--format", "json").stdout + cli("status", "pilot").stdout
    shown += cli("report", "pilot", "--format", "json").stdout
    shown += "".join(p.read_text() for p in out.iterdir())
    assert not any(pid(n) in shown for n in range(1, WORKERS + 1))
    # Pay: time on task x rate, from the stored visits (one visit each, so no overlaps).
    bonus = tmp_path / "bonus.csv"
    rate = 100000.0  # the visits last fractions of a second: a rate that makes them cents
    assert (
        cli("pay", "pilot", "--hourly-rate", rate, "--format", "prolific", "--to", bonus).code == 0
    )
    paid = dict(line.split(",") for line in bonus.read_text().splitlines())
    with Session(engine) as s:
        for visit, platform_id in s.exec(
            select(Visit, Annotator.platform_id).join(Annotator, Annotator.id == Visit.annotator_id)
        ):
            seconds = ((visit.departed_at or visit.last_seen_at) - visit.arrived_at).total_seconds()
            amount = round(seconds / 3600 * rate, 2)
            assert float(paid.get(platform_id, "0")) == amount
    assert STUDY_A in cli("study", "crowd", "pilot").stdout
