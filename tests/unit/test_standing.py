"""One answer to "where does it stand?" (protocol/standing.py), whoever asks: one store that
exercises every rule (an early stop, open ties under extra-annotator, someone admitted by hand
with no labels, a manual admission with wrong catch answers, a median study), read through
`status --format json`, the report's JSON, the console's Study screen (Pilot), `study show` and
`gate`. They agree on completeness, state, phases, roster and agreement with the majority."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from annotate.protocol.session import AnnotatorSession
from annotate.report import build
from annotate.tui.console.app import create_console_app
from annotate.tui.console.fmt import share
from annotate.tui.console.screens.study import COLUMNS, StudyScreen
from tests.engine_helpers import rte_study
from tests.tui.console_support import NOW, StepClock, gold_answer, label_as
from tests.tui.support import screen_text, wait_until

WRONG = {"entailment": "not_entailment", "not_entailment": "entailment"}


def label_test(engine, study: str, name: str, wrong: set[int] = frozenset(), catch_wrong=False):
    """`name` (admitted) labels every test item they are given: the n-th wrong when n is in
    `wrong`; every catch item wrong with `catch_wrong`."""
    clock = StepClock()
    session = AnnotatorSession.open(engine, study, name, clock=clock)
    n = 0
    while (item := session.next_item()) is not None:
        answer = gold_answer(item)
        is_catch = item.item_id in session.catch_items
        if (is_catch and catch_wrong) or (not is_catch and n in wrong):
            answer = WRONG[answer]
        session.submit(item, answer, answered_at=clock())
        n += 0 if is_catch else 1
    session.release()


def train(engine, study: str, name: str, right: int | None = None) -> None:
    """`name` does the training: the first `right` answers right (default all), the rest wrong."""
    clock = StepClock()
    session = AnnotatorSession.open(engine, study, name, create_annotator=True, clock=clock)
    n = 0
    while (item := session.next_item()) is not None and item.phase == "training":
        answer = gold_answer(item) if right is None or n < right else WRONG[gold_answer(item)]
        session.submit(item, answer, answered_at=clock())
        n += 1
    session.release()


def build_store(cli, engine, tmp_path: Path) -> list[str]:
    # 1. An early stop: k = 3, two agreeing labels decide an item.
    rte_study(
        engine,
        tmp_path / "a",
        name="early",
        test=10,
        annotators_per_item=3,
        stop_when_decided=True,
        gate_threshold=0.5,
    )
    for name in ("ann", "bo", "cy"):
        label_as(engine, "early", name, test_items=10, clock=StepClock())
    # 2. Open ties under extra-annotator (k = 2, 7 of 20 items split), and someone admitted
    #    by hand who has no labels at all.
    rte_study(
        engine,
        tmp_path / "b",
        name="ties",
        test=20,
        annotators_per_item=2,
        tie_rule="extra-annotator",
        gate_threshold=0.5,
    )
    label_as(engine, "ties", "ann", test_items=20, clock=StepClock())
    train(engine, "ties", "bo")
    label_test(engine, "ties", "bo", wrong=set(range(7)))
    assert cli("annotator", "add", "hana").code == 0
    admitted = cli("gate", "ties", "--admit", "hana", "--reason", "labelled the pilot", "--force")
    assert admitted.code == 0, admitted.stderr
    # 3. A manual gate, an annotator admitted by hand, every catch answer wrong.
    rte_study(
        engine,
        tmp_path / "c",
        name="manual",
        test=30,
        annotators_per_item=1,
        gate_rule="manual",
        gate_threshold=None,
        catch_rate=0.3,
    )
    train(engine, "manual", "ivy")
    assert cli("gate", "manual", "--admit", "ivy", "--reason", "known to us").code == 0
    label_test(engine, "manual", "ivy", catch_wrong=True)
    # 4. A median gate: closed with one of three below the median.
    rte_study(
        engine,
        tmp_path / "d",
        name="median",
        test=8,
        annotators_per_item=2,
        gate_rule="median",
        gate_threshold=None,
    )
    train(engine, "median", "ann")
    train(engine, "median", "bo")
    train(engine, "median", "zed", right=2)
    closed = cli("gate", "median", "--close")
    assert closed.code == 0, closed.stderr
    label_test(engine, "median", "ann")
    label_test(engine, "median", "bo", wrong={0, 1, 2})
    return ["early", "ties", "manual", "median"]


async def console_view(engine, study: str) -> dict:
    """What the console's Study screen shows: the summary line and each annotator's row."""
    app = create_console_app(engine, study, clock=lambda: NOW, researcher="rhea")
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, StudyScreen) and app.screen.loaded,
            "StudyScreen",
        )
        text = screen_text(app)
        table = app.screen.query_one("#annotators", DataTable)
        rows = {}
        for key in table.rows:
            cells = dict(
                zip([c.label for c in COLUMNS], (str(c) for c in table.get_row(key)), strict=True)
            )
            rows[str(key.value)] = cells
    summary = next(line for line in text.splitlines() if "items complete" in line)
    return {"summary": summary, "rows": rows, "text": text}


async def test_every_front_end_agrees_on_where_the_studies_stand(
    cli, workspace, tmp_path, monkeypatch
):
    # Dawid–Skene and MACE (seconds per report) say nothing about standing: left out.
    monkeypatch.setattr(build, "model_aggregation", lambda *args: None)
    studies = build_store(cli, workspace.engine, tmp_path)
    seen, reports = {}, {}
    for study in studies:
        status = cli("status", study, "--format", "json").json()
        report = reports[study] = cli(
            "report", study, "--format", "json", "--bootstrap", "0"
        ).json()
        show = cli("study", "show", study, "--format", "json").json()
        gate = cli("gate", study, "--format", "json").json()
        screen = await console_view(workspace.engine, study)
        seen[study] = status
        if study == "early":  # finished by early stops: nothing left to wait for
            assert "ETA: complete" in screen["text"]
        # Completeness and state.
        complete, total = status["items_complete"], status["items_total"]
        assert report["sample"]["n_items_complete"] == complete == show["items_complete"]
        assert f"{complete} of {total} items complete" in screen["summary"]
        state = status["state"]
        assert report["state"] == show["state"] == state
        assert f"state {state}" in screen["summary"]
        # The roster, with each one's phase and gate verdict.
        roster = {a["name"]: (a["phase"], a["gate"]) for a in status["annotators"]}
        assert {r["name"]: (r["phase"], r["gate"]) for r in report["gate"]["roster"]} == roster
        assert {r["name"]: (r["phase"], r["gate"]) for r in gate["trainees"]} == roster
        assert {n: (r["Phase"].strip(), r["Gate"].strip()) for n, r in screen["rows"].items()} == (
            roster
        )
        # The datasheet counts the same roster.
        attrition = report["datasheet"]["attrition"]
        verdicts = [gate for _, gate in roster.values()]
        assert attrition["admitted"] == verdicts.count("admitted")
        assert attrition["rejected"] == verdicts.count("rejected")
        assert attrition["completed_training"] <= attrition["started_training"]
        # Agreement with the majority: the report's, in the console's Agree column.
        agree = {a["name"]: a["agrees_with_majority"] for a in report["annotators"]}
        for name, row in screen["rows"].items():
            assert row["Agree"].strip() == share(agree.get(name)), (study, name)

    # What each rule makes of these studies.
    early = seen["early"]
    assert early["state"] == "complete" and early["items_decided_early"] == 10
    assert early["labels_total"] == 20  # 2 agreeing labels decide each item of k = 3
    ties = seen["ties"]
    assert (ties["state"], ties["items_open_ties"], ties["items_complete"]) == ("test", 7, 13)
    assert any("7 of 20 items are tied" in w for w in ties["warnings"])
    hana = next(a for a in ties["annotators"] if a["name"] == "hana")
    assert (hana["phase"], hana["gate"], hana["test_done"]) == ("test", "admitted", 0)
    attrition = reports["ties"]["datasheet"]["attrition"]  # hana admitted, never trained
    assert (attrition["started_training"], attrition["completed_training"]) == (2, 2)
    assert attrition["admitted"] == 3 and attrition["abandoned_names"] == ["hana"]
    median = {a["name"]: a["phase"] for a in seen["median"]["annotators"]}
    # Every item complete: nothing is left for the admitted, who are done.
    assert median == {"ann": "done", "bo": "done", "zed": "rejected"}
    assert seen["median"]["state"] == "complete"
    # The manual admission's wrong catch answers are drift, against the documented default.
    catch = reports["manual"]["catch"]
    [ivy] = catch["annotators"]
    assert ivy["drifting"] and ivy["threshold"] == 0.7
    assert catch["warnings"][0].startswith("ivy: recent catch accuracy fell below 0.70 (default)")
    screen = await console_view(workspace.engine, "manual")
    assert "ivy: recent catch accuracy fell below 0.70 (default)" in screen["text"]
    show = cli("study", "show", "manual", "--format", "json").json()["protocol"]
    assert (show["catch_min_accuracy"], show["catch_min_accuracy_from"]) == (0.7, "default")
    median_show = cli("study", "show", "median", "--format", "json").json()["protocol"]
    assert median_show["catch_min_accuracy_from"] == "cohort median at close"
