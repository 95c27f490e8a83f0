"""Issue 11, engine and command line: gate plans with reasons and warnings, flags and item
exclusions, status warnings, the honest headline, the derived state, and simulate never acting
for real people."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlmodel import Session

from annotate.protocol import flags, gate
from annotate.protocol.answers import describe
from annotate.protocol.session import AnnotatorSession, Phase
from annotate.protocol.status import study_status
from annotate.protocol.studies import load_study
from annotate.store.models import GateDecision, Item, utcnow
from tests.engine_helpers import rte_study
from tests.unit.test_report import add_study

E, N = "entailment", "not_entailment"


def gold_of(engine, item_id: int):
    with Session(engine) as s:
        return s.get(Item, item_id).gold  # type: ignore[union-attr]


def train(engine, study: str, name: str, *, right: int, answers: int | None = None) -> None:
    """`name` answers training items: the first `right` correctly, the rest wrongly; stops
    after `answers` items (default: all of them)."""
    s = AnnotatorSession.open(engine, study, name, create_annotator=True)
    done = 0
    while s.phase() is Phase.TRAINING and (answers is None or done < answers):
        item = s.next_item()
        assert item is not None
        gold = gold_of(engine, item.item_id)
        s.submit(item, gold if done < right else (N if gold == E else E))
        done += 1


def median_study(engine, tmp_path: Path, name: str = "pilot"):
    return rte_study(
        engine,
        tmp_path,
        name=name,
        train=3,
        test=6,
        protocol="superglue-2019",
        annotators_per_item=5,
        gate_min_items=3,
    )


def decisions(engine) -> int:
    with Session(engine) as s:
        return int(s.scalar(select(func.count(GateDecision.id))) or 0)


# --- the gate ---------------------------------------------------------------------------------


def test_closing_a_k5_gate_with_four_admittable_warns_and_refuses_without_force(
    cli, workspace, tmp_path
):
    engine = workspace.engine
    median_study(engine, tmp_path)
    for name in ("ana", "ben", "cy", "dee"):
        train(engine, "pilot", name, right=3)
    train(engine, "pilot", "eve", right=2, answers=2)  # mid-training, under the minimum

    plan = gate.preview_close(engine, load_study(engine, "pilot"))
    assert [o.name for o in plan.admit] == ["ana", "ben", "cy", "dee"]
    assert [(o.name, o.reason) for o in plan.reject] == [("eve", "2 of 3 required training items")]
    assert plan.admitted_after == 4 and plan.k == 5

    refused = cli("gate", "pilot", "--close")
    assert refused.code == 1
    assert "only 4 annotators would be admitted but each item needs 5" in refused.stderr
    assert "eve is still mid-training (2 of 3 items)" in refused.stderr
    assert "eve has 2 of the minimum 3 training items" in refused.stderr
    assert "--force" in refused.stderr
    assert "admit  ana: accuracy 1.000 >= median 1.000 (3 items)" in refused.stdout
    assert "reject eve: 2 of 3 required training items" in refused.stdout
    assert decisions(engine) == 0  # nothing decided

    unexplained = cli("gate", "pilot", "--close", "--force")  # 26.6: forcing needs a reason
    assert unexplained.code == 1 and "needs a reason (--reason" in unexplained.stderr
    assert decisions(engine) == 0
    forced = cli(
        "gate", "pilot", "--close", "--force", "--by", "rhea", "--reason", "eve starts monday"
    )
    assert forced.code == 0, forced.stderr
    assert decisions(engine) == 5
    closure = cli("gate", "pilot", "--format", "json").json()["closure"]
    assert closure["closed_by"] == "rhea" and closure["forced"] is True
    assert closure["reason"] == "eve starts monday" and len(closure["warnings"]) == 3
    told = " ".join(cli("gate", "pilot").stdout.split())
    assert "Training closed by rhea at" in told and "why: eve starts monday" in told
    in_report = cli("report", "pilot", "--format", "json").json()["gate"]["closure"]
    assert in_report == closure
    markdown = " ".join(cli("report", "pilot", "--format", "markdown").stdout.split())
    assert "Training closed by rhea" in markdown and "why: eve starts monday" in markdown
    shown = cli("gate", "pilot", "--format", "json").json()["trainees"]
    reasons = {t["name"]: t["reason"] for t in shown}
    assert reasons["eve"] == "2 of 3 required training items"
    assert reasons["ana"] == "accuracy 1.000 >= median 1.000 (3 items)"
    assert "2 of 3 required training items" in cli("gate", "pilot").stdout

    report = cli("report", "pilot", "--format", "json").json()
    stored = {d["annotator"]: d["reason"] for d in report["gate"]["decisions"]}
    assert stored["eve"] == "2 of 3 required training items"
    assert "2 of 3 required training items" in cli("report", "pilot", "--format", "markdown").stdout

    status = cli("status", "pilot", "--format", "json").json()
    assert any(w.startswith("stuck: only 4 annotators admitted") for w in status["warnings"])
    again = cli("gate", "pilot", "--close")  # nobody left to decide: a no-op, not a refusal
    assert again.code == 0 and "closing changes nobody" in again.stdout


def test_accuracy_below_the_median_is_the_stated_reason(workspace, tmp_path):
    engine = workspace.engine
    median_study(engine, tmp_path)
    for name, right in (("ana", 3), ("ben", 3), ("cy", 1), ("dee", 3), ("eve", 3), ("fay", 3)):
        train(engine, "pilot", name, right=right)
    ctx = load_study(engine, "pilot")
    plan = gate.preview_close(engine, ctx)
    assert plan.warnings == []  # five admitted, nobody mid-training
    made = {d.name: d for d in gate.close_training(engine, ctx)}
    assert not made["cy"].admitted
    assert made["cy"].reason == "accuracy 0.333 < median 1.000 (3 items)"


def test_manual_decisions_need_a_reason_and_store_it(cli, workspace, tmp_path):
    engine = workspace.engine
    median_study(engine, tmp_path)
    train(engine, "pilot", "ana", right=3)
    train(engine, "pilot", "bo", right=1, answers=1)
    missing = cli("gate", "pilot", "--admit", "ana")
    assert missing.code == 1 and "needs a reason" in missing.stderr
    ok = cli("gate", "pilot", "--admit", "ana", "--reason", "trained with us in person")
    assert ok.code == 0, ok.stderr
    assert "ana: admitted by manual: trained with us in person" in ok.stdout
    early = cli("gate", "pilot", "--admit", "bo", "--reason", "knows the task")
    assert early.code == 1 and "bo is still mid-training (1 of 3 items)" in early.stderr
    assert decisions(engine) == 1
    report = cli("report", "pilot", "--format", "json").json()
    assert report["gate"]["decisions"][0]["reason"] == "trained with us in person"


def test_someone_admitted_by_hand_without_training_has_no_accuracy(cli, workspace, tmp_path):
    """Admitted by hand, no training item answered: the gate showed "Accuracy 0.000"."""
    from annotate.tui.console.screens.gate import trainee_cells, trainee_detail

    median_study(workspace.engine, tmp_path)
    train(workspace.engine, "pilot", "bo", right=2)
    assert cli("annotator", "add", "ana").code == 0
    admitted = cli("gate", "pilot", "--admit", "ana", "--reason", "trained last year", "--force")
    assert admitted.code == 0, admitted.stderr
    rows = {r["name"]: r for r in cli("gate", "pilot", "--format", "json").json()["trainees"]}
    assert rows["ana"]["training_accuracy"] is None and rows["ana"]["training_done"] == 0
    assert rows["bo"]["training_accuracy"] == 0.6667
    lines = cli("gate", "pilot").stdout.splitlines()
    table = {n: line for line in lines for n in ("ana", "bo") if line.startswith(f"│ {n} ")}
    assert "none answered" in table["ana"] and "0.000" not in table["ana"], table
    assert "0.667" in table["bo"]
    assert str(trainee_cells(rows["ana"], None)[2]) == "–"
    assert "accuracy –" in str(trainee_detail(rows["ana"], None))


def test_an_open_gate_with_a_waiting_trainee_is_a_status_warning(workspace, tmp_path):
    engine = workspace.engine
    median_study(engine, tmp_path)
    train(engine, "pilot", "ana", right=3)
    status = study_status(engine, load_study(engine, "pilot"))
    assert any("the gate is open and 1 trainee waits for it (ana)" in w for w in status["warnings"])
    assert status["last_activity"] is not None
    assert status["annotators"][0]["last_activity"] == status["last_activity"]


def test_a_trainee_without_a_label_for_half_an_hour_has_stalled(workspace, tmp_path):
    engine = workspace.engine
    median_study(engine, tmp_path)
    train(engine, "pilot", "ana", right=1, answers=1)
    ctx = load_study(engine, "pilot")
    assert not any("stalled" in w for w in study_status(engine, ctx)["warnings"])
    later = utcnow() + timedelta(minutes=45)
    warnings = study_status(engine, ctx, now=later)["warnings"]
    assert any(w.startswith("ana has stalled: no label for 4") for w in warnings)


# --- flags --------------------------------------------------------------------------------------


def flagged_study(engine, tmp_path: Path) -> str:
    """Two annotators (k = 2, threshold gate), every test item answered right except the one
    they flag, which both answer wrong: its source id is returned."""
    rte_study(engine, tmp_path, name="flagged", train=2, test=4, annotators_per_item=2)
    broken = None
    for name in ("ana", "ben"):
        train(engine, "flagged", name, right=2)
        s = AnnotatorSession.open(engine, "flagged", name)
        while (item := s.next_item()) is not None:
            gold = gold_of(engine, item.item_id)
            if item.source_id == broken or (broken is None and name == "ana"):
                broken = item.source_id
                s.submit(
                    item,
                    N if gold == E else E,
                    flag=name == "ana",
                    comment="the premise is cut off" if name == "ana" else None,
                )
            else:
                s.submit(item, gold)
    assert broken is not None
    return broken


def test_a_flagged_item_is_in_status_and_report_and_excluding_it_changes_the_score(
    cli, workspace, tmp_path
):
    engine = workspace.engine
    broken = flagged_study(engine, tmp_path)
    status = cli("status", "flagged", "--format", "json").json()
    assert status["flags"]["total"] == 1 and status["flags"]["open"] == 1
    (row,) = status["flagged_items"]
    assert row["source_id"] == broken and row["comment"] == "the premise is cut off"
    assert row["annotator"] == "ana" and row["state"] == "open"

    before = cli("report", "flagged", "--format", "json").json()
    assert before["task_score"]["value"] == pytest.approx(0.75)
    (flag,) = before["flags"]["flagged"]
    assert flag["comment"] == "the premise is cut off" and "Premise: The " in flag["text"]
    assert "the premise is cut off" in cli("report", "flagged").stdout

    done = cli("flags", "flagged", "--exclude", broken, "--reason", "broken item", "--by", "rz")
    assert done.code == 0, done.stderr
    after = cli("report", "flagged", "--format", "json").json()
    assert after["task_score"]["value"] == pytest.approx(1.0)
    assert after["n_items"] == 3
    section = after["flags"]
    assert section["task_score_with_excluded"] == pytest.approx(0.75)
    assert section["task_score_without_excluded"] == pytest.approx(1.0)
    assert section["excluded_items"][0]["reason"] == "broken item"
    assert section["excluded_items"][0]["by"] == "rz"
    assert "task score 100.0 without them, 75.0 with them (+25.0 points)" in section["note"]
    md = cli("report", "flagged", "--format", "markdown").stdout
    assert "## Items excluded from scoring and agreement" in md
    assert "task score 100.0 without them, 75.0 with them (+25.0 points)" in md
    assert any("excluded from scoring and agreement" in n for n in after["notes"])
    status = cli("status", "flagged", "--format", "json").json()
    assert status["flags"]["excluded"] == 1 and status["flags"]["excluded_items"] == 1

    out = tmp_path / "out"
    exported = cli("export", "flagged", "--to", str(out), "--format", "superglue")
    assert exported.code == 0, exported.stderr
    (written,) = [p for p in out.rglob("*.jsonl")]
    assert len(written.read_text().splitlines()) == 4  # a submission answers every test item

    undo = cli("flags", "flagged", "--include", broken, "--reason", "fixed upstream")
    assert undo.code == 0, undo.stderr
    again = cli("report", "flagged", "--format", "json").json()
    assert again["task_score"]["value"] == pytest.approx(0.75)
    history = cli("flags", "flagged", "--format", "json").json()["history"]
    assert [h["action"] for h in history] == ["exclude", "include"]


def test_resolving_a_flag_records_who_and_why(cli, workspace, tmp_path):
    engine = workspace.engine
    flagged_study(engine, tmp_path)
    (row,) = flags.list_flags(engine, load_study(engine, "flagged").id)
    assert cli("flags", "flagged", "--resolve", str(row.label_id)).code == 1  # no reason
    done = cli(
        "flags", "flagged", "--resolve", str(row.label_id), "--reason", "ok as is", "--by", "rz"
    )
    assert done.code == 0, done.stderr
    (row,) = flags.list_flags(engine, load_study(engine, "flagged").id)
    assert (row.state, row.by, row.reason) == ("resolved", "rz", "ok as is")
    listed = cli("flags", "flagged").stdout
    assert "resolved by rz at " in listed and ": ok as is" in listed
    assert "comment: the premise is cut off" in listed and "Premise: The " in listed
    # what the annotator answered, in the task's words and as stored
    spec = load_study(engine, "flagged").spec
    assert row.value is not None
    assert f"answered: {describe(spec, row.value)}" in listed
    (listed_row,) = cli("flags", "flagged", "--format", "json").json()["flags"]
    assert listed_row["value"] == row.value
    assert cli("flags", "flagged", "--resolve", "9999", "--reason", "x").code == 1


def test_listing_flags_reads_only_the_flagged_labels(workspace, tmp_path):
    """`status`, the report and the console list flags on every call: the partial index of
    flagged labels (schema 8) serves the list, so a big study's unflagged labels are not read."""
    engine = workspace.engine
    flagged_study(engine, tmp_path)
    study_id = load_study(engine, "flagged").id
    query = flags.flagged_labels(study_id).compile(engine, compile_kwargs={"literal_binds": True})
    with engine.connect() as conn:
        plan = " | ".join(r[3] for r in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {query}"))
        assert "SEARCH label USING INDEX ix_label_flagged" in plan, plan
    assert len(flags.list_flags(engine, study_id)) == 1  # and it finds the flag


# --- the headline and the state ---------------------------------------------------------------


def test_an_unfinished_study_says_so_and_names_no_k_it_lacks(cli, workspace):
    items = [{"source_id": str(i), "gold": E} for i in range(20)]
    add_study(
        workspace.engine, "three", "glue/mnli-m", items, {str(i): [E, E, N] for i in range(20)}
    )
    summary = cli("report", "three", "--format", "json").json()["summary"]
    assert summary.startswith("UNFINISHED: 3 of 5 labels on 20 of 20 items; Human, majority of 3")
    assert "majority of 5" not in summary


def test_an_all_correct_study_has_an_interval_below_100_and_says_annotators_are_fixed(
    cli, workspace
):
    items = [{"source_id": str(i), "gold": E} for i in range(20)]
    add_study(workspace.engine, "right", "glue/mnli-m", items, {str(i): [E] * 5 for i in range(20)})
    r = cli("report", "right", "--format", "json").json()
    assert r["task_score"]["value"] == 1.0
    assert r["headline_interval"]["low"] < 1.0 and r["headline_interval"]["high"] == 1.0
    assert "100.0 [100.0" not in r["summary"] and "UNFINISHED" not in r["summary"]
    assert "these annotators held fixed" in cli("report", "right").stdout


def test_a_threshold_study_with_every_item_complete_is_complete(cli, workspace, tmp_path):
    engine = workspace.engine
    rte_study(engine, tmp_path, name="thr", train=2, test=3, annotators_per_item=2)
    assert cli("status", "thr", "--format", "json").json()["state"] == "training"
    train(engine, "thr", "ana", right=2)
    assert cli("status", "thr", "--format", "json").json()["state"] == "test"
    for name in ("ana", "ben"):
        train(engine, "thr", name, right=2)
        s = AnnotatorSession.open(engine, "thr", name)
        while (item := s.next_item()) is not None:
            s.submit(item, gold_of(engine, item.item_id))
    assert cli("status", "thr", "--format", "json").json()["state"] == "complete"
    assert cli("report", "thr", "--format", "json").json()["state"] == "complete"
    studies = cli("study", "list", "--format", "json").json()
    assert [s["state"] for s in studies] == ["complete"]


# --- simulate -----------------------------------------------------------------------------------


def test_simulate_closes_a_median_gate_only_when_asked_and_never_over_a_real_trainee(
    cli, workspace, tmp_path
):
    engine = workspace.engine
    median_study(engine, tmp_path)
    args = ("simulate", "pilot", "--annotators", "5", "--accuracy", "0.9", "--seed", "1")
    plain = cli(*args)
    assert plain.code == 0, plain.stderr
    assert "pass --close-gate to close it" in plain.stdout and decisions(engine) == 0

    train(engine, "pilot", "rosa", right=3)  # a real person, waiting for the gate
    held = cli(*args, "--close-gate", "--prefix", "more")
    assert held.code == 0, held.stderr
    assert "real trainee rosa is undecided" in held.stdout
    assert decisions(engine) == 0

    assert cli("gate", "pilot", "--reject", "rosa", "--reason", "left", "--force").code == 0
    closed = cli(*args, "--close-gate", "--prefix", "last")
    assert closed.code == 0, closed.stderr
    assert "(median gate closed)" in closed.stdout
    with Session(engine) as s:
        rows = s.scalars(select(GateDecision)).all()
    assert len(rows) == 1 + 15  # rosa by hand, then every simulated trainee
    report = cli("report", "pilot", "--format", "json").json()
    assert report["annotators"] and all(a["synthetic"] for a in report["annotators"])
    assert "(synthetic)" in cli("report", "pilot").stdout


def test_simulate_says_the_one_next_step_that_moves_the_study_on(cli, workspace, tmp_path):
    """26.3: with the gate open the hint is `gate --close`; with enough admitted annotators,
    to run them again; otherwise to add as many as are missing."""
    engine = workspace.engine
    median_study(engine, tmp_path)
    args = ("simulate", "pilot", "--accuracy", "0.9", "--seed", "1")
    waiting = " ".join(cli(*args, "--annotators", "5").stdout.split())
    assert "5 trainees wait at the gate: close it (`annotate gate pilot --close`)" in waiting
    assert "Add more" not in waiting and "--prefix more" not in waiting

    rte_study(engine, tmp_path, name="few", train=2, test=4, annotators_per_item=3)
    short = " ".join(
        cli("simulate", "few", "--accuracy", "1.0", "--annotators", "1").stdout.split()
    )
    assert "Add 2 more (`annotate simulate few --annotators 2 --accuracy 1.0 --prefix more`)" in (
        short
    )


def test_the_gate_reason_states_the_median_as_the_gate_table_shows_it(cli, workspace, tmp_path):
    """A median of 0.8333 read "median 0.83" in the reasons beside "0.833" in the table."""
    engine = workspace.engine
    median_study(engine, tmp_path)
    for name, right in (("ana", 3), ("ben", 3), ("cy", 2), ("dee", 2)):
        train(engine, "pilot", name, right=right)
    closed = cli("gate", "pilot", "--close", "--force", "--reason", "pilot")
    assert closed.code == 0, closed.stderr
    shown = " ".join(cli("gate", "pilot", "--format", "table").stdout.split())
    assert "│ 0.833 │" in shown
    assert "cy: rejected, accuracy 0.667 < median 0.833 (3 items)" in shown
    assert "ana: admitted, accuracy 1.000 >= median 0.833 (3 items)" in shown
