"""The researcher's console, driven by Pilot: the studies, one study live (updated from another
process within 2 s), the gate's confirmations and refusals, the flags and the report."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlmodel import Session
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import DataTable, Static

from annotate.protocol import flags
from annotate.protocol.status import study_status
from annotate.protocol.studies import load_study
from annotate.report.sections.catch import catch_report
from annotate.simulate import simulate
from annotate.store.models import FlagAction, GateDecision, Label
from annotate.tui.console.app import ConsoleApp, create_console_app
from annotate.tui.console.screens import base as live_screens
from annotate.tui.console.screens.base import LiveScreen
from annotate.tui.console.screens.confirm import ConfirmScreen
from annotate.tui.console.screens.flags import FlagsScreen
from annotate.tui.console.screens.gate import GateScreen
from annotate.tui.console.screens.help import ConsoleHelpScreen
from annotate.tui.console.screens.report import ReportScreen
from annotate.tui.console.screens.studies import StudiesScreen
from annotate.tui.console.screens.study import StudyScreen
from tests.engine_helpers import catch_study, rte_study
from tests.tui.console_support import NOW, StepClock, busy_study, label_as
from tests.tui.support import build_study, screen_lines, screen_text, static_text, wait_until
from tests.tui.task_data import LAYOUT_DATA

PROJECT = Path(__file__).resolve().parents[2]


async def arrive(pilot: Pilot, screen: type[Screen]) -> None:
    """`screen` is on top and has drawn its first data."""
    await wait_until(
        pilot,
        lambda: (
            isinstance(pilot.app.screen, screen)
            and (not isinstance(pilot.app.screen, LiveScreen) or pilot.app.screen.loaded)
        ),
        screen.__name__,
    )


def console(engine, study: str | None = None) -> ConsoleApp:
    return create_console_app(engine, study, clock=lambda: NOW, researcher="rhea")


def decisions(engine) -> list[GateDecision]:
    with Session(engine) as session:
        return list(session.scalars(select(GateDecision).order_by(GateDecision.id)))


# --- studies and one study ---------------------------------------------------------------------
async def test_a_trickle_projects_no_date_to_the_hour(workspace, tmp_path):
    """Months after its last label a study's pace is a trickle: the ETA read "115 d 6 h"; a
    projection beyond 30 days now says only that."""
    ctx = busy_study(workspace.engine, tmp_path)
    later = NOW + timedelta(days=400)
    app = create_console_app(workspace.engine, ctx.study.name, clock=lambda: later)
    async with app.run_test(size=(160, 40)) as pilot:
        await arrive(pilot, StudyScreen)
        text = screen_text(app)
        assert "ETA: more than 30 days at the current pace ·" in text
        assert not re.search(r"ETA: \d+ d \d+ h", text)


async def test_studies_screen_lists_every_study_and_opens_one(workspace, tmp_path):
    busy_study(workspace.engine, tmp_path)
    rte_study(workspace.engine, tmp_path / "other", name="empty one", test=4)
    app = console(workspace.engine)
    async with app.run_test(size=(120, 30)) as pilot:
        await arrive(pilot, StudiesScreen)
        text = screen_text(app)
        assert "rte [pilot]" in text and "empty one" in text  # names verbatim, not markup
        assert "superglue/rte" in text
        assert "3/8" in text and "17/24 (71%)" in text  # items complete; labels of k x sample
        assert "23 min ago" in text  # the last label, 09:06:48, at the frozen 09:30
        assert "never" not in text
        await pilot.press("enter")
        await arrive(pilot, StudyScreen)
        assert "Study rte [pilot]" in screen_text(app)
        await pilot.press("escape")
        await arrive(pilot, StudiesScreen)


async def test_study_screen_shows_progress_and_every_annotator(workspace, tmp_path):
    ctx = busy_study(workspace.engine, tmp_path)
    app = console(workspace.engine, ctx.study.name)
    async with app.run_test(size=(160, 40)) as pilot:
        await arrive(pilot, StudyScreen)
        text = screen_text(app)
        assert "3 of 8 items complete (38%) · k = 3 · state test" in text
        assert "17/24 test labels, 7 to go" in text
        assert "Labels/hour: 0.0 (last 15 min)" in text
        assert "ETA: 12 min" in text
        lines = {line.split()[0]: line for line in text.splitlines() if line.strip()}
        assert "2 labels ████████████████████████ 3" in text  # histogram: 3 items with 2 labels
        ana = next(line for line in text.splitlines() if "[b]ana[/b]" in line)
        assert "admitted" in ana and "accuracy 1.000 >=…" in ana  # cut; in full below
        assert "gate admitted: accuracy 1.000 >= threshold 0.750 (4 items)" in text
        ben = next(line for line in text.splitlines() if line.strip().startswith("ben"))
        # The report's agreement with the majority: 5 of his 6 answers equal the study's
        # aggregated answer (the raw-answer count said 4 of 5).
        assert "83%" in ben
        dev = next(line for line in text.splitlines() if line.strip().startswith("dev"))
        assert "rejected" in dev and "accuracy 0.500 < …" in dev
        eve = next(line for line in text.splitlines() if line.strip().startswith("eve"))
        assert "training" in eve and "1/4" in eve and "pending" in eve
        assert " 1 " in ana.split("%")[-1]  # ana's one flag
        assert lines


WRITER = """
import sys
from annotate.protocol.session import AnnotatorSession
from annotate.workspace import open_workspace

ws = open_workspace(sys.argv[1])
session = AnnotatorSession.open(ws.engine, sys.argv[2], sys.argv[3])
for _ in range(int(sys.argv[4])):
    item = session.next_item()
    session.submit(item, "entailment")
"""


@pytest.mark.slow
async def test_labels_written_by_another_process_show_within_two_seconds(
    workspace, db_url, tmp_path
):
    """The console polls at its real interval; another process labels two items; the new
    counts are on the screen less than 2 s after that process committed."""
    ctx = busy_study(workspace.engine, tmp_path)
    app = create_console_app(workspace.engine, ctx.study.name, researcher="rhea")
    assert app.poll_seconds == 1.0
    async with app.run_test(size=(160, 40)) as pilot:
        await arrive(pilot, StudyScreen)
        assert "17/24 test labels" in screen_text(app)
        subprocess.run(
            [sys.executable, "-c", textwrap.dedent(WRITER), db_url, ctx.study.name, "chloé", "2"],
            check=True,
            cwd=PROJECT,
            timeout=60,
        )
        committed = time.monotonic()
        deadline = committed + 2.0
        while "19/24 test labels" not in screen_text(app):
            assert time.monotonic() < deadline, "the new labels did not show within 2 s"
            await pilot.pause(0.05)
        assert time.monotonic() - committed < 2.0
        chloe = next(line for line in screen_text(app).splitlines() if "chloé" in line)
        assert " 5 " in chloe  # her test count went from 3 to 5


async def test_the_study_screen_redraws_only_when_the_store_changed(workspace, tmp_path):
    ctx = busy_study(workspace.engine, tmp_path)
    app = create_console_app(workspace.engine, ctx.study.name, poll_seconds=0.05)
    async with app.run_test(size=(160, 40)) as pilot:
        await arrive(pilot, StudyScreen)
        screen = app.screen
        assert isinstance(screen, StudyScreen)
        loads = screen.loads
        for _ in range(10):  # ten change checks with nothing new
            await pilot.pause(0.05)
        assert screen.loads == loads
        label_as(workspace.engine, ctx.study.name, "chloé", test_items=1, clock=StepClock())
        await wait_until(pilot, lambda: screen.loads > loads, "a reload after the new label")
        assert "18/24 test labels" in screen_text(app)


async def test_an_older_read_that_ends_late_is_not_drawn_over_a_newer_one(
    workspace, tmp_path, monkeypatch
):
    """Two reads of the study overlap: the first (made before a new label) ends after the
    second. The screen keeps the newer counts rather than going back to the older."""
    ctx = busy_study(workspace.engine, tmp_path)
    app = create_console_app(workspace.engine, ctx.study.name, poll_seconds=0.05)
    read = StudyScreen.fetch
    release, first_done = threading.Event(), threading.Event()
    reads: list[object] = []

    def slow_first_read(self, app):
        data = read(self, app)
        reads.append(data)
        if len(reads) == 1:  # read before the new label, then held until the newer is drawn
            release.wait(30)
        return data

    fetch_and_show = StudyScreen._fetch_and_show
    started = itertools.count()

    def noted(self, app):
        first = next(started) == 0
        try:
            fetch_and_show(self, app)
        finally:
            if first:  # its drawing, if any, is done: call_from_thread waits for it
                first_done.set()

    async with app.run_test(size=(160, 40)) as pilot:
        await arrive(pilot, StudyScreen)
        screen = app.screen
        assert "17/24 test labels" in screen_text(app)
        monkeypatch.setattr(StudyScreen, "fetch", slow_first_read)
        monkeypatch.setattr(StudyScreen, "_fetch_and_show", noted)
        screen.reload()
        await wait_until(pilot, lambda: len(reads) == 1, "the first read")
        label_as(workspace.engine, ctx.study.name, "chloé", test_items=1, clock=StepClock())
        await wait_until(pilot, lambda: "18/24 test labels" in screen_text(app), "the newer")
        release.set()
        await wait_until(pilot, first_done.is_set, "the older read's end")
        await pilot.pause()
        assert "18/24 test labels" in screen_text(app)
        assert "17/24 test labels" not in screen_text(app)


def agree_cells(app) -> dict[str, str]:
    """The Agree column of the annotators table, by annotator."""
    table = app.screen.query_one("#annotators", DataTable)
    keys = [c.key.value for c in table.ordered_columns]
    rows = [
        dict(zip(keys, map(str, table.get_row_at(i)), strict=True)) for i in range(table.row_count)
    ]
    return {r["annotator"]: r["agree"] for r in rows}


async def test_a_refusal_and_an_exclusion_made_elsewhere_redraw_the_counts_status_gives(
    cli, workspace, tmp_path, monkeypatch
):
    """A refusal mid-test (`annotate gate --reject`) sets the annotator's labels aside in place
    (no new label, no revision), and an exclusion changes which items count: the open Study
    screen kept "17/24 test labels", ben's 6 test labels and the old Agree column. It now shows
    what `status` and the report say."""
    from annotate.tui.console.screens import study as study_screen

    # Under load this small study's aggregation can take longer than AGREE_BUDGET, and the
    # Agree column then waits AGREE_SECONDS by design (tested apart): here every one is quick.
    monkeypatch.setattr(study_screen, "AGREE_BUDGET", float("inf"))
    ctx = busy_study(workspace.engine, tmp_path)
    name = ctx.study.name
    app = create_console_app(workspace.engine, name, clock=lambda: NOW, poll_seconds=0.05)

    def ana_agrees() -> str:
        report = cli("report", name, "--format", "json", "--bootstrap", "0").json()
        agrees = {a["name"]: a["agrees_with_majority"] for a in report["annotators"]}
        return f"{100 * agrees['[b]ana[/b]']:.0f}%"

    def ben_done() -> int:
        return next(a for a in screen.progress.annotators if a.name == "ben").test_done

    async with app.run_test(size=(160, 40)) as pilot:
        await arrive(pilot, StudyScreen)
        screen = app.screen
        assert isinstance(screen, StudyScreen)
        assert "17/24 test labels" in screen_text(app)
        assert cli("gate", name, "--reject", "ben", "--reason", "too fast").code == 0
        words = cli("status", name, "--format", "json").json()["test_labels"]["words"]
        assert words == "11/24 test labels, 13 to go"
        # What the user sees, waited for (a refresh under way may have read the store before
        # the refusal: the one after it is what must show it).
        agree = ana_agrees()
        await wait_until(
            pilot,
            lambda: (
                words in screen_text(app)
                and ben_done() == 0
                and agree_cells(app)["[b]ana[/b]"] == agree
            ),
            "the counts, ben's labels and Agree after the refusal",
        )
        loads = screen.loads
        assert cli("flags", name, "--exclude", "1003", "--reason", "cut off").code == 0
        # The exclusion leaves these shares as they were: the check is that a refresh after it
        # (a count of loads, not a time) shows the report's Agree column, each annotator's.
        report = cli("report", name, "--format", "json", "--bootstrap", "0").json()
        agrees = {
            a["name"]: f"{100 * a['agrees_with_majority']:.0f}%" for a in report["annotators"]
        }
        await wait_until(
            pilot,
            lambda: screen.loads > loads and agrees.items() <= agree_cells(app).items(),
            "a refresh after the exclusion",
        )


async def test_an_annotator_who_shares_no_item_agrees_with_nobody(cli, workspace, tmp_path):
    """ana labelled three items no one else did: "Agree 100%" was her agreement with herself.
    Her items are left out of her share (the report's too), so it cannot be computed: "–"."""
    rows = ["item,annotator,label,premise,hypothesis"]
    rows += [f"i{n},ana,entailment,P{n}.,H{n}." for n in (1, 2, 3)]
    rows += [f"i4,{who},{label},P4.,H4." for who, label in LABELS_OF_I4]
    (tmp_path / "long.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    mapping = "premise=premise,hypothesis=hypothesis"
    made = cli(
        "import-labels",
        tmp_path / "long.csv",
        "--task",
        "superglue/rte",
        "--study",
        "s",
        "--map",
        mapping,
    )
    assert made.code == 0, made.stderr
    report = cli("report", "s", "--format", "json", "--bootstrap", "0").json()
    agrees = {a["name"]: a["agrees_with_majority"] for a in report["annotators"]}
    assert agrees == {"w01": None, "w02": 1.0, "w03": 0.0, "w04": 1.0}
    async with create_console_app(workspace.engine, "s", clock=lambda: NOW).run_test(
        size=(160, 40)
    ) as pilot:
        await arrive(pilot, StudyScreen)
        assert agree_cells(pilot.app) == {"w01": "–", "w02": "100%", "w03": "0%", "w04": "100%"}


LABELS_OF_I4 = [("bo", "entailment"), ("cy", "not_entailment"), ("di", "entailment")]


async def test_agreement_skipped_on_a_slow_study_is_shown_after_the_wait(
    workspace, tmp_path, monkeypatch
):
    """On a study whose aggregation is slow the Agree column is worked out at most every
    AGREE_SECONDS: the last labels of a lab's study came within that wait, and the column kept
    the old shares until some later label, which never came. It is now shown after the wait."""
    from annotate.report.data.loading import load_study_data
    from annotate.report.stats.annotators import agreement_with_majority
    from annotate.tui.console.screens import study as study_screen

    monkeypatch.setattr(study_screen, "AGREE_BUDGET", -1.0)  # every aggregation counts as slow
    monkeypatch.setattr(study_screen, "AGREE_SECONDS", 2.0)
    ctx = busy_study(workspace.engine, tmp_path)
    name = ctx.study.name
    app = create_console_app(workspace.engine, name, clock=lambda: NOW, poll_seconds=0.05)
    async with app.run_test(size=(160, 40)) as pilot:
        await arrive(pilot, StudyScreen)
        screen = app.screen
        assert isinstance(screen, StudyScreen)
        before = agree_cells(app)["chloé"]
        loads = screen.loads
        label_as(workspace.engine, name, "chloé", test_items=2, wrong_every=1, clock=StepClock())
        await wait_until(pilot, lambda: "19/24 test labels" in screen_text(app), "new counts")
        agrees = agreement_with_majority(load_study_data(workspace.engine, name))
        now = f"{100 * agrees['chloé']:.0f}%"
        assert now != before  # her two wrong answers change her share
        await wait_until(pilot, lambda: agree_cells(app)["chloé"] == now, "the skipped share")
        assert screen.loads > loads


async def test_the_study_screen_shows_stalled_annotators_as_time_passes(
    workspace, tmp_path, monkeypatch
):
    """The stalled rule of `annotate status` on the Study screen: nothing at 09:30; with no new
    label, the slow warnings timer (shortened here) shows it once the clock passes 30 min."""
    monkeypatch.setattr(StudyScreen, "warnings_seconds", 0.05)
    ctx = busy_study(workspace.engine, tmp_path)
    now = [NOW]
    app = create_console_app(
        workspace.engine, ctx.study.name, clock=lambda: now[0], researcher="rhea"
    )
    async with app.run_test(size=(160, 40)) as pilot:
        await arrive(pilot, StudyScreen)
        screen = app.screen
        assert isinstance(screen, StudyScreen)
        assert screen.warnings == [] and "warning:" not in screen_text(app)
        loads = screen.loads
        now[0] = NOW + timedelta(hours=1)
        await wait_until(pilot, lambda: "has stalled" in screen_text(app), "the stalled warning")
        assert screen.loads == loads  # worked out again without reading the store
        text = screen_text(app)
        assert "warning: eve has stalled: no label for 83 min while in training" in text
        assert "warning: ben has stalled: no label for 85 min while in test" in text
        assert "warning: chloé has stalled: no label for 83 min while in test" in text
        assert "[b]ana[/b] has stalled" not in text  # ana did every test item
    ctx = load_study(workspace.engine, ctx.study.name)
    status = study_status(workspace.engine, ctx, now=NOW + timedelta(hours=1))
    assert screen.warnings == status["warnings"]  # the same rules and words as `status`


async def test_the_study_screen_says_done_once_nothing_is_left_and_never_stalled(
    workspace, tmp_path, monkeypatch
):
    """A batch of 3: zoe's phase turns from test to done as her third label comes in (read by
    the live screen), and an hour on only yan, with an item of her batch left, has stalled."""
    monkeypatch.setattr(StudyScreen, "warnings_seconds", 0.05)
    engine = workspace.engine
    rte_study(
        engine,
        tmp_path,
        name="capped",
        test=10,
        annotators_per_item=2,
        gate_threshold=0.5,
        max_test_items_per_annotator=3,
    )
    clock = StepClock()
    label_as(engine, "capped", "zoe", test_items=2, clock=clock)
    label_as(engine, "capped", "yan", test_items=1, clock=clock)
    now = [NOW]
    app = create_console_app(
        engine, "capped", clock=lambda: now[0], poll_seconds=0.05, researcher="rhea"
    )
    async with app.run_test(size=(160, 40)) as pilot:
        await arrive(pilot, StudyScreen)
        table = app.screen.query_one("#annotators", DataTable)

        def phase(name: str) -> str:
            return str(table.get_cell(name, "phase"))

        assert (phase("zoe"), phase("yan")) == ("test", "test")
        label_as(engine, "capped", "zoe", test_items=1, clock=clock)
        await wait_until(pilot, lambda: phase("zoe") == "done", "zoe done")
        assert phase("yan") == "test"
        now[0] = NOW + timedelta(hours=1)
        await wait_until(pilot, lambda: "has stalled" in screen_text(app), "the stalled warning")
        text = screen_text(app)
        assert "warning: yan has stalled" in text
        assert "zoe has stalled" not in text


async def test_the_study_screen_warns_of_trainees_waiting_for_an_open_gate(workspace, tmp_path):
    ctx = median_study(workspace.engine, tmp_path)
    label_as(workspace.engine, ctx.study.name, "[red]zed[/]", clock=StepClock())
    app = console(workspace.engine, ctx.study.name)
    async with app.run_test(size=(160, 40)) as pilot:
        await arrive(pilot, StudyScreen)
        assert (  # the name as typed: the warning is never parsed as markup
            "warning: the gate is open and 5 trainees wait for it ([red]zed[/], t0, t1, t2, "
            "t3): `annotate gate 'median k5' --close`"
        ) in screen_text(app)
        assert "Catch items" not in screen_text(app)  # catch_rate 0: no catch section


async def test_the_study_screen_shows_catch_accuracy_and_the_drift_warning(workspace, tmp_path):
    """Five careful simulated annotators; sim3 answers at random after 12 test-stream answers:
    the Study screen shows every annotator's catch accuracy and sim3's drift warning."""
    catch_study(workspace.engine, tmp_path, catch_rate=0.3)
    simulate(workspace.engine, "c", 5, 0.95, seed=4, accuracies=[0.97] * 5, drift={2: (12, 0.1)})
    summary = catch_report(workspace.engine, "c")
    assert summary is not None
    app = create_console_app(workspace.engine, "c", researcher="rhea")
    async with app.run_test(size=(200, 60)) as pilot:
        await arrive(pilot, StudyScreen)

        def catch_rows() -> dict[str, str]:
            """The catch table's rows by name (the annotators table's rows say "(synthetic)")."""
            lines = [line for line in screen_text(app).splitlines() if line.startswith(" sim")]
            return {line.split()[0]: line for line in lines if "(synthetic)" not in line}

        # The catch table is drawn after the annotators table: wait for its rows.
        await wait_until(pilot, lambda: len(catch_rows()) == 5, "the catch table's rows")
        text, rows = screen_text(app), catch_rows()
        assert "200/200 test labels, complete" in text  # catch answers are not test labels
        assert "Catch items: rate 0.3, action warn · recent = last 10 catch answers" in text
        assert set(rows) == {f"sim{n}" for n in range(1, 6)}
        for a in summary.annotators:
            cells = rows[a.name].split()
            assert cells[1] == str(a.n)
            assert cells[2] == f"{a.accuracy * 100:.1f}"  # overall
            assert cells[3] == f"{a.recent_accuracy * 100:.1f}"  # the recent window
            assert cells[5] == ("DRIFT" if a.name == "sim3" else "ok")
        [drift] = summary.warnings
        assert drift.startswith("sim3: recent catch accuracy fell below 0.60 (gate threshold)")
        assert f"warning: {drift}" in text
        assert app.screen.warnings[-1] == drift


# --- the gate ---------------------------------------------------------------------------------
def median_study(engine, tmp_path, trainees: int = 4):
    """A k=5 median-gated study with `trainees` annotators who all did their training right."""
    ctx = rte_study(
        engine,
        tmp_path,
        name="median k5",
        train=4,
        test=6,
        annotators_per_item=5,
        gate_rule="median",
    )
    for n in range(trainees):
        label_as(engine, ctx.study.name, f"t{n}", clock=StepClock())
    return ctx


async def test_closing_the_gate_with_too_few_admittable_warns_and_refuses_without_force(
    workspace, tmp_path
):
    ctx = median_study(workspace.engine, tmp_path)
    app = console(workspace.engine, ctx.study.name)
    async with app.run_test(size=(120, 40)) as pilot:
        await arrive(pilot, StudyScreen)
        await pilot.press("g")
        await arrive(pilot, GateScreen)
        text = screen_text(app)
        assert "Projected median accuracy: 1.000 ·" in text  # three decimals, as `gate` says
        assert "only 4 annotators would be admitted but each item needs 5" in text
        await pilot.press("c")
        await arrive(pilot, ConfirmScreen)
        text = screen_text(app)
        assert "Will be admitted (4)" in text and "Will be rejected (0)" in text
        assert "Projected median accuracy: 1.000 " in text
        for n in range(4):
            assert f"t{n}: accuracy 1.000 >= median 1.000" in text
        assert "each item needs 5: the study cannot" in text
        await pilot.press("enter")  # confirm without force: refused, nothing written
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "Refused because of the warnings above" in screen_text(app)
        assert decisions(workspace.engine) == []
        await pilot.press("ctrl+f")  # force without a reason: asked for one (26.6)
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "Type a reason first" in screen_text(app)
        assert decisions(workspace.engine) == []
        await pilot.press(*"fifth joins monday")
        await pilot.press("ctrl+f")  # force
        await arrive(pilot, GateScreen)
        made = decisions(workspace.engine)
        assert [d.admitted for d in made] == [True] * 4
        await wait_until(pilot, lambda: "admitted" in screen_text(app), "the decisions shown")
        await wait_until(
            pilot,
            lambda: (
                "Training closed by rhea" in screen_text(app)
                and "why: fifth joins monday" in screen_text(app)
            ),
            "who forced the close, and why",
        )


async def test_a_closed_gate_says_who_closed_it_and_offers_no_close(cli, workspace, tmp_path):
    """Once training was closed and everyone had a decision, the gate screen still said
    "closing now admits 0, rejects 0" and offered `c`: it says who closed it and when, and
    `c` is neither shown nor obeyed (`gate --close` says closing changes nobody)."""
    ctx = median_study(workspace.engine, tmp_path, trainees=5)
    assert cli("gate", ctx.study.name, "--close", "--by", "rhea").code == 0
    again = cli("gate", ctx.study.name, "--close").stdout
    assert "every trainee has a gate decision already: closing changes nobody" in again
    app = console(workspace.engine, ctx.study.name)
    async with app.run_test(size=(120, 40)) as pilot:
        await arrive(pilot, StudyScreen)
        await pilot.press("g")
        await arrive(pilot, GateScreen)
        await wait_until(pilot, lambda: "Training closed by" in screen_text(app), "the close")
        text = screen_text(app)
        assert "Training closed by rhea at " in text
        assert "nothing is left to close" in text
        assert "closing now admits" not in text and "Close training" not in text
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, GateScreen)


async def test_escape_cancels_a_gate_action(workspace, tmp_path):
    ctx = median_study(workspace.engine, tmp_path)
    app = console(workspace.engine, ctx.study.name)
    async with app.run_test(size=(120, 40)) as pilot:
        await arrive(pilot, StudyScreen)
        await pilot.press("g")
        await arrive(pilot, GateScreen)
        await pilot.press("c")
        await arrive(pilot, ConfirmScreen)
        await pilot.press("escape")
        await arrive(pilot, GateScreen)
    assert decisions(workspace.engine) == []


async def reject_the_second(pilot: Pilot) -> None:
    """From the study screen: the gate screen, the second trainee, reject (the confirmation)."""
    await arrive(pilot, StudyScreen)
    await pilot.press("g")
    await arrive(pilot, GateScreen)
    await pilot.press("down", "x")
    await arrive(pilot, ConfirmScreen)


async def test_manual_reject_needs_a_reason_and_stores_it(workspace, tmp_path):
    ctx = median_study(workspace.engine, tmp_path, trainees=6)
    app = console(workspace.engine, ctx.study.name)
    async with app.run_test(size=(120, 40)) as pilot:
        await reject_the_second(pilot)  # t1
        text = screen_text(app)
        assert "Reject t1 by hand" in text and "Will be rejected (1)" in text
        await pilot.press("enter")  # no reason yet
        assert "Type a reason first" in screen_text(app)
        assert decisions(workspace.engine) == []
        await pilot.press(*"copied answers")
        await pilot.press("enter")
        await arrive(pilot, GateScreen)
    [made] = decisions(workspace.engine)
    assert (made.admitted, made.reason, made.decided_by) == (False, "copied answers", "rhea")


async def test_rejecting_someone_mid_test_says_their_labels_will_be_set_aside(workspace, tmp_path):
    ctx = rte_study(workspace.engine, tmp_path, train=2, test=4, gate_threshold=0.5)
    for name in ("ana", "ben"):
        label_as(workspace.engine, ctx.study.name, name, test_items=3)
    app = console(workspace.engine, ctx.study.name)
    async with app.run_test(size=(120, 40)) as pilot:
        await reject_the_second(pilot)  # ben
        text = screen_text(app)
        assert "Reject ben by hand" in text
        assert "ben's 3 test labels will be set aside" in text
        await pilot.press(*"too fast")
        await pilot.press("enter")
        await arrive(pilot, GateScreen)
    with Session(workspace.engine) as s:
        phases = s.exec(select(Label.phase).where(Label.phase != "training")).scalars().all()
    assert sorted(phases) == ["set-aside"] * 3 + ["test"] * 3


async def test_the_manual_rule_is_not_said_to_decide_by_a_threshold(cli, workspace, tmp_path):
    """Under the manual rule the researcher decides each trainee: the gate screen said "The
    manual rule decides each trainee by itself (accuracy >= 0.50)" and `gate` showed a pending
    trainee's threshold 0.50, from a protocol's gate_threshold the manual rule never applies."""
    ctx = rte_study(workspace.engine, tmp_path, train=2, test=4, gate_rule="manual")
    assert ctx.protocol.gate_threshold is not None  # quick's 0.5, unused by the manual rule
    label_as(workspace.engine, ctx.study.name, "ana", training=lambda i: "entailment")
    [row] = cli("gate", ctx.study.name, "--format", "json").json()["trainees"]
    assert (row["rule"], row["threshold"]) == ("manual", None)
    text = await gate_screen_words(workspace.engine, ctx.study.name)
    assert "decides each trainee by itself" not in text and ">= 0.50" not in text
    assert "The manual rule: you decide each trainee (a Admit, x Reject, with a reason)" in text


async def test_the_gate_screen_gives_a_rule_threshold_as_gate_does(cli, workspace, tmp_path):
    """The threshold rule's note said "accuracy >= 0.50" where `gate` says 0.500."""
    ctx = rte_study(workspace.engine, tmp_path, train=2, test=4, gate_rule="threshold")
    label_as(workspace.engine, ctx.study.name, "ana", training=lambda i: "entailment")
    assert ">= threshold 0.500" in cli("gate", ctx.study.name).stdout
    text = await gate_screen_words(workspace.engine, ctx.study.name)
    assert "The threshold rule decides each trainee by itself (accuracy >= 0.500)." in text


async def gate_screen_words(engine, study: str) -> str:
    """The words of the console's gate screen of `study` (opened from its study screen), in
    one line."""
    app = console(engine, study)
    async with app.run_test(size=(120, 40)) as pilot:
        await arrive(pilot, StudyScreen)
        await pilot.press("g")
        await arrive(pilot, GateScreen)
        return " ".join(screen_text(app).split())


# --- flags ------------------------------------------------------------------------------------
async def test_a_flagged_item_appears_verbatim_and_can_be_resolved(cli, workspace, tmp_path):
    ctx = busy_study(workspace.engine, tmp_path)
    premise = "Premise: The ledger near gate 1003 was repaired last spring."
    assert f"  {premise}\n" in cli("flags", ctx.study.name).stdout  # named as the screen does
    app = console(workspace.engine, ctx.study.name)
    async with app.run_test(size=(120, 40)) as pilot:
        await arrive(pilot, StudyScreen)
        await pilot.press("f")
        await arrive(pilot, FlagsScreen)
        text = screen_text(app)
        assert "[b]ana[/b]" in text  # the annotator's name as typed, not bold
        assert "Comment: the premise is cut off [/i]" in text  # verbatim, no markup error
        assert premise in text  # the task's name for the field, as `annotate flags` gives it
        assert "State: open" in text
        await pilot.press("v")
        await arrive(pilot, ConfirmScreen)
        await pilot.press(*"fixed in v2")
        await pilot.press("enter")
        await arrive(pilot, FlagsScreen)
        await wait_until(pilot, lambda: "resolved" in screen_text(app), "the resolved flag")
    [row] = flags.list_flags(workspace.engine, ctx.id)
    assert (row.state, row.by, row.reason) == ("resolved", "rhea", "fixed in v2")


async def test_excluding_a_flagged_item_from_scoring(workspace, tmp_path):
    ctx = busy_study(workspace.engine, tmp_path)
    app = console(workspace.engine, ctx.study.name)
    async with app.run_test(size=(120, 40)) as pilot:
        await arrive(pilot, StudyScreen)
        await pilot.press("f")
        await arrive(pilot, FlagsScreen)
        await pilot.press("x")
        await arrive(pilot, ConfirmScreen)
        assert "Exclude item 1003 from scoring" in screen_text(app)
        await pilot.press(*"premise cut off")
        await pilot.press("enter")
        await arrive(pilot, FlagsScreen)
        # excluded now: the console offers to include it again, not to exclude it twice
        await wait_until(
            pilot,
            lambda: (
                "Include item" in screen_text(app).splitlines()[-1]
                and "Exclude item" not in screen_text(app).splitlines()[-1]
            ),
            "the footer offering Include",
        )
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, FlagsScreen)
    assert list(flags.excluded_item_ids(workspace.engine, ctx.id)) == [
        flags.find_test_item(workspace.engine, ctx, "1003")
    ]
    with Session(workspace.engine) as session:
        [action] = session.scalars(select(FlagAction)).all()
    assert (action.action, action.by, action.reason) == ("exclude", "rhea", "premise cut off")


async def test_a_study_without_flags_says_so(workspace, tmp_path):
    ctx = median_study(workspace.engine, tmp_path, trainees=1)
    app = console(workspace.engine, ctx.study.name)
    async with app.run_test(size=(100, 30)) as pilot:
        await arrive(pilot, StudyScreen)
        await pilot.press("f")
        await arrive(pilot, FlagsScreen)
        assert "No flagged items in this study." in screen_text(app)
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, FlagsScreen)


# --- report and help --------------------------------------------------------------------------
async def test_report_screen_draws_the_report_with_charts(workspace, tmp_path):
    ctx = busy_study(workspace.engine, tmp_path)
    app = console(workspace.engine, ctx.study.name)
    async with app.run_test(size=(120, 80)) as pilot:
        await arrive(pilot, StudyScreen)
        await pilot.press("r")
        await arrive(pilot, ReportScreen)
        text = screen_text(app)
        assert "Human, majority of 3" in text or "UNFINISHED" in text
        assert "Majority of k" in text
        assert "Each annotator's accuracy with its 95% Wilson interval" in text
        assert "Confusion matrix (rows: gold, columns: majority answer)" in text
        assert "Flags: 1 raised (1 open, 0 resolved, 0 on excluded items)" in text
        label_as(workspace.engine, ctx.study.name, "chloé", test_items=1, clock=StepClock())
        app.check_for_changes()
        await wait_until(
            pilot, lambda: "press u to update" in screen_text(app), "the new-labels note"
        )
        await pilot.press("u")
        await wait_until(
            pilot, lambda: "press u to update" not in screen_text(app), "the rebuilt report"
        )


async def test_help_lists_the_keys(workspace, tmp_path):
    busy_study(workspace.engine, tmp_path)
    app = console(workspace.engine)
    async with app.run_test(size=(100, 40)) as pilot:
        await arrive(pilot, StudiesScreen)
        await pilot.press("question_mark")
        await arrive(pilot, ConsoleHelpScreen)
        text = screen_text(app)
        assert "close training (median rule)" in text and "ctrl+f" in text
        await pilot.press("escape")
        await arrive(pilot, StudiesScreen)


def test_a_missing_study_fails_before_the_screen(cli, workspace):
    result = cli("console", "nope")
    assert result.code == 1
    assert "no study named 'nope'" in result.stderr


async def test_an_empty_store_says_how_to_make_a_study(workspace):
    app = console(workspace.engine)
    async with app.run_test(size=(100, 20)) as pilot:
        await arrive(pilot, StudiesScreen)
        assert "No studies yet: `annotate study create` makes one." in screen_text(app)
        await pilot.press("enter")  # nothing to open: stays
        assert isinstance(app.screen, StudiesScreen)


# --- issue 26.1/26.2: the Study table at 80 columns ------------------------------------------
async def test_the_study_table_shows_its_counts_at_80_columns_and_the_reason_on_selection(
    workspace, tmp_path
):
    from annotate.protocol import gate
    from annotate.protocol.session import AnnotatorSession
    from tests.tui.console_support import gold_answer

    ctx = rte_study(workspace.engine, tmp_path, name="narrow", train=3, test=4)
    clock = StepClock(step=timedelta(seconds=2))
    session = AnnotatorSession.open(
        workspace.engine, "narrow", "ana", create_annotator=True, clock=clock
    )
    while (item := session.next_item()) is not None:
        if item.phase != "training":
            clock.step = timedelta(seconds=7)  # test answers take longer
        session.submit(item, gold_answer(item), answered_at=clock())
    reason = "admitted by hand: she trained with us at the lab in May"  # 54 characters
    gate.decide_manually(workspace.engine, ctx, "ana", True, reason=reason, force=True)
    app = console(workspace.engine, "narrow")
    async with app.run_test(size=(80, 24)) as pilot:
        await arrive(pilot, StudyScreen)
        await wait_until(pilot, lambda: "ana" in screen_text(app), "the annotator row")
        lines = screen_text(app).splitlines()
        header = next(line for line in lines if "Annotator" in line)
        for column in ("Test", "Test s", "Agree", "Flags", "Last activity"):
            assert column in header, column
        row = next(line for line in lines if line.strip().startswith("ana"))
        assert "7.0" in row  # the test answers' median, as the report counts it
        text = " ".join(screen_text(app).split())
        assert f"ana · gate admitted: {reason}" in text  # in full, for the selected row
        assert "median seconds per answer: training 2.0, test 7.0" in text


def cell_starts(line: str) -> list[int]:
    """Where each cell of a table line starts: cells are at least two spaces apart (the
    columns' padding), words within one cell one space apart."""
    return [m.end() for m in re.finditer(r"(?:^ *| {2,})(?=\S)", line)]


def drawn_as_filled(monkeypatch, screen: type[LiveScreen]) -> None:
    """A frame is drawn the moment `screen` has filled its tables, before Textual measured the
    new cells on its next idle: what the outside tester's terminal did (traced: a frame between
    the last add_row and the table's width update)."""
    show = screen.show

    def show_and_draw(self, data):  # type: ignore[no-untyped-def]
        show(self, data)
        screen_lines(self.app)

    monkeypatch.setattr(screen, "show", show_and_draw)


def assert_lined_up(app, header_start: str, is_row: Callable[[str], bool]) -> None:
    """Each label of the table's header starts where its column's cells start, on every row."""
    lines = screen_text(app).splitlines()
    header = next(line for line in lines if line.strip().startswith(header_start))
    rows = [line for line in lines if is_row(line)]
    assert rows, lines
    labels = cell_starts(header)
    for row in rows:
        cells = cell_starts(row)
        visible = min(len(labels), len(cells))
        assert cells[:visible] == labels[:visible], (header, row)


def synthetic_row(line: str) -> bool:
    return "(synthetic)" in line and "·" not in line  # not the selected annotator's detail line


@pytest.mark.parametrize("task", ["superglue/multirc", "superglue/record"])
async def test_the_study_table_header_lines_up_with_its_rows_when_opened_from_the_list(
    workspace, tmp_path, monkeypatch, task
):
    """26.1 as the tester went: a 3-class study opened from the list, back, then MultiRC or
    ReCoRD, at 80 columns. A frame drawn while each table is filled must not leave the header
    at the widths of the labels alone ("Acc." sat over "6/6" until the window was resized)."""
    monkeypatch.setattr(live_screens, "CLOCK_SECONDS", 3600.0)  # its redraw would hide it
    drawn_as_filled(monkeypatch, StudyScreen)
    for name, layout in (("three-class", "superglue/cb"), ("reading", task)):
        dev, test = LAYOUT_DATA[layout]
        settings = {"training_items": len(dev), "gate_min_items": 1, "annotators_per_item": 2}
        build_study(
            workspace.engine, tmp_path, layout, test=test, dev=dev, overrides=settings, name=name
        )
        simulate(workspace.engine, name, 2, 0.9)
    app = console(workspace.engine)
    async with app.run_test(size=(80, 40)) as pilot:  # 80 columns; rows enough for both
        for name in ("three-class", "reading"):
            await arrive(pilot, StudiesScreen)
            studies = app.screen.query_one("#studies", DataTable)
            studies.move_cursor(row=studies.get_row_index(name))
            await pilot.press("enter")
            await arrive(pilot, StudyScreen)
            table = app.screen.query_one("#annotators", DataTable)
            await wait_until(pilot, lambda t=table: t.row_count == 2, "both annotators' rows")
            header = next(ln for ln in screen_lines(app) if ln.strip().startswith("Annotator"))
            labels = [header[x:].split("  ")[0] for x in cell_starts(header)]
            assert labels[:4] == ["Annotator", "Phase", "Training", "Acc."]
            assert len(labels) >= 8  # the counts, at 80 columns
            assert_lined_up(app, "Annotator", synthetic_row)
            await pilot.press("escape")


async def test_the_study_table_header_follows_a_column_that_widens_on_refresh(
    workspace, tmp_path, monkeypatch
):
    """26.1: a refresh whose cells are wider than before (a trainee admitted by hand: "pending"
    becomes "admitted", "–" a reason) moves the header with the cells, the rows being as many."""
    from annotate.protocol import gate
    from annotate.protocol.session import AnnotatorSession

    monkeypatch.setattr(live_screens, "CLOCK_SECONDS", 3600.0)
    drawn_as_filled(monkeypatch, StudyScreen)
    ctx = rte_study(workspace.engine, tmp_path, name="tr", train=2, test=3)
    session = AnnotatorSession.open(workspace.engine, "tr", "ana", create_annotator=True)
    item = session.next_item()
    assert item is not None and item.phase == "training"
    session.submit(item, "entailment")
    session.release()
    app = console(workspace.engine, "tr")
    async with app.run_test(size=(120, 30)) as pilot:
        await arrive(pilot, StudyScreen)
        reason = "admitted by hand: she trained with us"
        await assert_header_follows_a_refresh(
            pilot,
            ("Annotator", lambda line: line.strip().startswith("ana ")),
            ("pending", "admitted by hand:…"),
            lambda: gate.decide_manually(
                workspace.engine, ctx, "ana", True, reason=reason, force=True
            ),
        )


async def assert_header_follows_a_refresh(pilot, lined_up, shown, change) -> None:  # type: ignore[no-untyped-def]
    """The table's header over its cells before and after `change` and the refresh it brings
    (`lined_up`: the header's first label and which line is the row; `shown`: the text before
    and after)."""
    app, (header, is_row), (before, after) = pilot.app, lined_up, shown
    screen = app.screen
    assert before in screen_text(app)
    assert_lined_up(app, header, is_row)
    loads = screen.loads
    change()
    await wait_until(pilot, lambda: screen.loads > loads, "the refresh after the change")
    assert after in screen_text(app)
    assert_lined_up(app, header, is_row)


async def test_the_studies_header_follows_a_count_that_grows_from_9_to_10(
    workspace, tmp_path, monkeypatch
):
    """26.1 on the Studies screen: "9/100 (9%)" becoming "10/100 (10%)" widens Labels; its
    header and the next one stay over their cells (the clock's redraw, which would hide it,
    held off)."""
    monkeypatch.setattr(live_screens, "CLOCK_SECONDS", 3600.0)
    drawn_as_filled(monkeypatch, StudiesScreen)
    rte_study(workspace.engine, tmp_path, name="s", train=1, test=20)
    label_as(workspace.engine, "s", "ana", test_items=9)
    app = console(workspace.engine)
    async with app.run_test(size=(100, 20)) as pilot:
        await arrive(pilot, StudiesScreen)
        await assert_header_follows_a_refresh(
            pilot,
            ("Study ", lambda line: line.strip().startswith("s ")),
            ("9/100 (9%)", "10/100 (10%)"),
            lambda: label_as(workspace.engine, "s", "ben", test_items=1),
        )


async def test_a_training_flag_offers_no_exclusion_and_items_are_named_as_the_table_does(
    workspace, tmp_path
):
    """26.5: exclusion acts on test items; the console offers it only there, and the engine's
    refusal names the item by the id the table shows."""
    from annotate.errors import UserError
    from annotate.protocol.session import AnnotatorSession
    from tests.tui.console_support import gold_answer

    ctx = rte_study(workspace.engine, tmp_path, name="tr", train=2, test=3)
    session = AnnotatorSession.open(workspace.engine, "tr", "ana", create_annotator=True)
    item = session.next_item()
    assert item is not None and item.phase == "training"
    session.submit(item, gold_answer(item), flag=True, comment="typo in the premise")
    [row] = flags.list_flags(workspace.engine, ctx.id)
    with pytest.raises(UserError, match=f"item {row.source_id} is not a test item"):
        flags.exclude_item(workspace.engine, ctx, row.item_id, by="rhea", reason="typo")
    app = console(workspace.engine, "tr")
    async with app.run_test(size=(100, 30)) as pilot:
        await arrive(pilot, StudyScreen)
        await pilot.press("f")
        await arrive(pilot, FlagsScreen)
        await wait_until(pilot, lambda: "typo in the premise" in screen_text(app), "the flag")
        footer = screen_text(app).splitlines()[-1]
        assert "Resolve" in footer
        assert "Exclude item" not in footer and "Include item" not in footer
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, FlagsScreen)  # nothing offered, nothing pushed


async def test_the_study_name_reaches_the_terminal_title_sanitised(workspace, tmp_path):
    """29.6: Textual writes the sub-title to the terminal's title; a name with ESC must not
    drive the terminal."""
    rte_study(workspace.engine, tmp_path, name="t\x1b]0;pwned\x07x", train=1, test=2)
    app = console(workspace.engine, "t\x1b]0;pwned\x07x")
    async with app.run_test(size=(100, 30)) as pilot:
        await arrive(pilot, StudyScreen)
        assert "\x1b" not in app.sub_title and "\x07" not in app.sub_title
        assert "␛" in app.sub_title


async def test_a_crowd_study_shows_its_exits_per_platform_study_and_code(workspace, tmp_path):
    from annotate.protocol import crowd
    from tests.crowd_helpers import CODES, STUDY_A, crowd_study
    from tests.crowd_helpers import arrive as arrive_by_link
    from tests.crowd_helpers import train as train_by_link

    crowd_study(workspace.engine, tmp_path, gate_threshold=1.0)
    for n in (1, 2):  # both answer their training wrongly: screened out
        worker = arrive_by_link(workspace.engine, "pilot", n, STUDY_A)
        train_by_link(workspace.engine, worker, right=False)
        assert crowd.exit_for(workspace.engine, "pilot", worker.annotator.name) is not None
    app = console(workspace.engine, "pilot")
    async with app.run_test(size=(160, 40)) as pilot:
        await arrive(pilot, StudyScreen)
        text = " ".join(screen_text(app).split())
        assert f"study {STUDY_A} (all link): screened_out ({CODES['screened_out']}) 2" in text


# --- issue 39.7: times that tick, labels in words, tables that fit 80 columns, the answer ------
def table_fits(table: DataTable) -> bool:
    """Every column on screen: nothing behind a sideways scroll."""
    return table.virtual_size.width <= table.scrollable_content_region.width


def stored_test_labels(engine, study: str) -> tuple[int, list[int]]:
    """The study's test labels, and their number per item, counted in the store."""
    ctx = load_study(engine, study)
    with engine.connect() as conn:
        counts = list(
            conn.execute(
                select(func.count())
                .where(Label.study_id == ctx.id, Label.phase == "test")
                .group_by(Label.item_id)
            ).scalars()
        )
    return sum(counts), counts


async def test_the_studies_list_times_tick_without_reading_the_store(
    workspace, tmp_path, monkeypatch
):
    """39.7: "23 min ago" on the Studies list moved only when a label came in; it ticks as
    the Study screen's does, from what was read."""
    monkeypatch.setattr(live_screens, "CLOCK_SECONDS", 0.05, raising=False)
    busy_study(workspace.engine, tmp_path)
    now = [NOW]
    app = create_console_app(workspace.engine, clock=lambda: now[0], researcher="rhea")
    async with app.run_test(size=(80, 24)) as pilot:
        await arrive(pilot, StudiesScreen)
        screen = app.screen
        assert isinstance(screen, StudiesScreen)

        def row() -> str:
            return next(ln for ln in screen_lines(app) if ln.startswith(" rte [pilot]  "))

        assert "23 min ago" in row()
        loads = screen.loads
        now[0] = NOW + timedelta(minutes=10)
        await wait_until(pilot, lambda: "33 min ago" in row(), "the list's clock to tick")
        assert "last label 33 min ago" in " ".join(screen_text(app).split())  # and the line
        assert screen.loads == loads  # no store read


async def test_the_studies_list_fits_80_columns_and_says_labels_in_words(workspace, tmp_path):
    """39.7: at 80x24 "Last activity" was cut; a study whose ties took extra annotators read
    "84/80" and one stopped early "65/100 (100%)". Every column is on screen, and the labels
    are said in words, in the row and in full on the selected study's line."""
    busy_study(workspace.engine, tmp_path, name="rte pilot march 2026")
    rte_study(workspace.engine, tmp_path / "xd", name="ties", test=20, annotators_per_item=2,
              tie_rule="extra-annotator")  # fmt: skip
    simulate(workspace.engine, "ties", annotators=4, accuracy=0.7, seed=5)
    rte_study(workspace.engine, tmp_path / "es", name="early", test=20, stop_when_decided=True)
    simulate(workspace.engine, "early", annotators=5, accuracy=1.0, seed=3)
    ties, per_item = stored_test_labels(workspace.engine, "ties")
    extra = sum(max(0, n - 2) for n in per_item)
    early, _ = stored_test_labels(workspace.engine, "early")
    planned = load_study(workspace.engine, "early").k * 20
    assert extra and early < planned  # the premises
    app = console(workspace.engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await arrive(pilot, StudiesScreen)
        table = app.screen.query_one("#studies", DataTable)
        assert table_fits(table)
        lines = screen_lines(app)
        header = next(ln for ln in lines if ln.startswith(" Study "))
        shown = [str(c.label) for c in table.ordered_columns]
        assert all(label in header for label in shown) and len(shown) >= 5
        assert shown[-1] in ("Last activity", "Last label")  # the last column, whole
        pilot_row = next(ln for ln in lines if ln.startswith(" rte pilot march 2026 "))
        assert pilot_row.rstrip().endswith("23 min ago")
        ties_row = next(ln for ln in lines if ln.startswith(" ties "))
        assert f"{ties} (40 + {extra} for ties)" in ties_row and "%" not in ties_row
        early_row = next(ln for ln in lines if ln.startswith(" early "))
        assert f"{early}/{planned}, stopped early" in early_row and "%" not in early_row
        table.move_cursor(row=table.get_row_index("ties"))
        await pilot.pause()
        text = " ".join(screen_text(app).split())
        assert f"ties · superglue/rte · complete · {ties} test labels (40 planned + {extra} " in (
            text
        )
        table.move_cursor(row=table.get_row_index("early"))
        await pilot.pause()
        text = " ".join(screen_text(app).split())
        assert f"{early}/{planned} test labels, every item decided (stopped early)" in text, text
        await pilot.press("enter")
        await arrive(pilot, StudyScreen)
        summary = " ".join(static_text(app.screen.query_one("#study-summary", Static)).split())
        assert f"{early}/{planned} test labels, every item decided (stopped early)" in summary


@pytest.mark.parametrize("who", ["people", "synthetic"])
async def test_the_study_table_fits_80_columns_with_the_gate_in_the_detail_line(
    workspace, tmp_path, who
):
    """39.7: at 80 columns the Study table's Gate and Reason were off screen behind a
    sideways scroll. Every column shown fits; what goes (the gate, which the phase implies,
    its reason) is in the selected annotator's line, in full."""
    if who == "people":
        ctx = busy_study(workspace.engine, tmp_path)
        first = "[b]ana[/b]"
    else:
        ctx = rte_study(workspace.engine, tmp_path, name="sim", test=6, annotators_per_item=2)
        simulate(workspace.engine, "sim", annotators=3, accuracy=0.9, seed=2)
        first = "sim1"
    app = console(workspace.engine, ctx.study.name)
    async with app.run_test(size=(80, 24)) as pilot:
        await arrive(pilot, StudyScreen)
        table = app.screen.query_one("#annotators", DataTable)
        await wait_until(pilot, lambda: table.row_count > 1, "the annotators' rows")
        assert table_fits(table)
        labels = [str(c.label) for c in table.ordered_columns]
        header = next(ln for ln in screen_lines(app) if ln.startswith(" Annotator "))
        assert all(label in header for label in labels)
        for column in ("Annotator", "Phase", "Training", "Acc.", "Test", "Agree", "Flags"):
            assert column in labels
        assert labels[-1] in ("Last activity", "Last label", "Gate", "Reason")
        progress = app.screen.progress
        assert progress is not None
        a = next(a for a in progress.annotators if a.name.startswith(first))
        text = " ".join(screen_text(app).split())
        assert f"· gate {a.gate}: {a.gate_reason}" in text
        await pilot.resize_terminal(160, 40)  # a wider window: the columns come back
        await wait_until(
            pilot, lambda: "Reason" in [str(c.label) for c in table.ordered_columns], "Reason"
        )
        assert table_fits(table) and "Gate" in [str(c.label) for c in table.ordered_columns]


async def test_a_flag_shows_what_the_annotator_answered(workspace, tmp_path):
    """39.7: the researcher judges a flag beside the answer it came with (here a wrong one)."""
    from annotate.protocol.answers import describe

    ctx = rte_study(workspace.engine, tmp_path, name="fl", train=2, test=3, gate_threshold=0.0)
    label_as(workspace.engine, "fl", "ana", test_items=2, wrong_every=2,
             flag={1: "I am not sure about this one"})  # fmt: skip
    [row] = flags.list_flags(workspace.engine, ctx.id)
    with Session(workspace.engine) as session:
        stored = session.get(Label, row.label_id)
        assert stored is not None
    answer = describe(ctx.spec, stored.value)
    gold = "entailment" if int(row.source_id) % 2 == 0 else "not_entailment"  # console_support
    assert stored.value != gold  # the premise: the flagged answer is the wrong one
    app = console(workspace.engine, "fl")
    async with app.run_test(size=(80, 24)) as pilot:
        await arrive(pilot, StudyScreen)
        await pilot.press("f")
        await arrive(pilot, FlagsScreen)
        await wait_until(pilot, lambda: "I am not sure" in screen_text(app), "the flag")
        text = " ".join(screen_text(app).split())
        assert f"Answered: {answer} Comment: I am not sure about this one" in text
        assert answer in ("Entailment: the sentence follows", "Not entailment: it does not follow")


# --- issue 39.7: long names are cut in the tables, whole in the detail line ---------------------
LONG_STUDY = "[b]rte[/b] pilot of the spring round, second cohort, Zürich."
LONG_PERSON = "[i]Maximiliana Theodora von Wolkenstein-Rosenberg, Innsbruck"


def row_of(app, start: str) -> str:
    return next(ln for ln in screen_lines(app) if ln.startswith(f" {start}"))


async def test_a_long_study_name_is_cut_in_the_list_and_whole_in_its_line(workspace, tmp_path):
    """39.7: a 60-character study name kept the Studies table wider than 80 columns once the
    task had gone (a sideways scroll). The cell ends in "…", the row keeps its last column,
    and the selected study's line has the name whole, brackets and all (never markup)."""
    assert len(LONG_STUDY) == 60
    busy_study(workspace.engine, tmp_path, name=LONG_STUDY)
    app = console(workspace.engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await arrive(pilot, StudiesScreen)
        table = app.screen.query_one("#studies", DataTable)
        assert table_fits(table)
        row = row_of(app, "[b]rte[/b] pilot")
        assert "…" in row and LONG_STUDY not in row
        assert row.rstrip().endswith("23 min ago")  # the last column, whole
        detail = static_text(app.screen.query_one("#study-detail", Static))
        assert detail.startswith(f"{LONG_STUDY} · superglue/rte · test · ")
        assert LONG_STUDY in " ".join(screen_text(app).split())  # on screen, wrapped
        await pilot.resize_terminal(160, 40)  # room enough: the name whole in its row
        await wait_until(pilot, lambda: LONG_STUDY in row_of(app, "[b]rte"), "the whole name")
        assert table_fits(table)


async def test_a_long_annotator_name_is_cut_in_the_study_table_and_whole_in_its_line(
    workspace, tmp_path
):
    """39.7: a 60-character annotator name kept the Study table wider than 80 columns with
    the gate, its reason and the seconds gone. The cell ends in "…"; the selected annotator's
    line has the name whole (never markup)."""
    assert len(LONG_PERSON) == 60
    ctx = busy_study(workspace.engine, tmp_path)
    label_as(workspace.engine, ctx.study.name, LONG_PERSON, test_items=2, clock=StepClock())
    app = console(workspace.engine, ctx.study.name)
    async with app.run_test(size=(80, 24)) as pilot:
        await arrive(pilot, StudyScreen)
        table = app.screen.query_one("#annotators", DataTable)
        await wait_until(pilot, lambda: table.row_count == 6, "the annotators' rows")
        assert table_fits(table)
        labels = [str(c.label) for c in table.ordered_columns]
        for column in ("Annotator", "Phase", "Training", "Acc.", "Test", "Agree", "Flags"):
            assert column in labels
        row = row_of(app, "[i]Maximiliana")
        assert "…" in row and LONG_PERSON not in row
        table.move_cursor(row=table.get_row_index(LONG_PERSON))
        await pilot.pause()
        detail = static_text(app.screen.query_one("#annotator-detail", Static))
        assert detail.startswith(f"{LONG_PERSON} · gate admitted: ")
        assert LONG_PERSON in " ".join(screen_text(app).split())


def test_a_cut_name_counts_the_cells_drawn_after_it_was_made_safe():
    """The cut is made on the terminal-safe text, in terminal cells: a wide character counts
    two, a control character counts as the visible escape that replaces it, markup is text."""
    from annotate.terminal_text import SafeText
    from annotate.tui.console.table import cut

    for raw in ("[b]名前は長い名前です[/b] and more", "ana\x1b[31m red \x07 and more text"):
        cell = SafeText(raw)
        short = cut(cell, 12)
        assert short.cell_len <= 12 and short.plain.endswith("…")
        assert cell.plain.startswith(short.plain[:-1])  # a prefix of the safe text
        assert "\x1b" not in short.plain and "\x07" not in short.plain
    assert cut(SafeText("ana"), 12).plain == "ana"  # short names stay as they are


def header_of(app, table: DataTable) -> str:
    """The table's header line as drawn: it starts with the first column's label."""
    first = str(table.ordered_columns[0].label)
    return next(ln for ln in screen_lines(app) if ln.startswith(f" {first} "))


async def test_a_long_annotator_name_is_cut_in_the_flags_table_and_whole_in_its_panel(
    workspace, tmp_path
):
    """39.7: a 60-character annotator name pushed the Flags table wider than 80 columns (the
    comment behind a sideways scroll). Every header is whole, the name and comment end in "…",
    and the selected flag's panel has both whole (never markup), also after a refresh."""
    ctx = busy_study(workspace.engine, tmp_path)
    comment = "the hypothesis says Tuesday but the premise never names a day at all"
    label_as(workspace.engine, ctx.study.name, LONG_PERSON, test_items=2,
             flag={1: comment}, clock=StepClock())  # fmt: skip
    app = console(workspace.engine, ctx.study.name)
    async with app.run_test(size=(80, 24)) as pilot:
        await arrive(pilot, StudyScreen)
        await pilot.press("f")
        await arrive(pilot, FlagsScreen)
        screen = app.screen
        assert isinstance(screen, FlagsScreen)
        table = screen.query_one("#flags-table", DataTable)
        await wait_until(pilot, lambda: table.row_count == 2, "both flags")
        assert table_fits(table)
        labels = [str(c.label) for c in table.ordered_columns]
        assert labels == ["State", "Item", "Phase", "Annotator", "Comment"]
        header = header_of(app, table)
        assert all(f" {label} " in f"{header} " for label in labels)  # each whole
        [flag] = [f for f in screen.rows if f.annotator == LONG_PERSON]
        [row] = [ln for ln in screen_lines(app) if ln.startswith(" open ") and "[i]Max" in ln]
        assert row.count("…") == 2 and LONG_PERSON not in row and comment not in row
        table.move_cursor(row=table.get_row_index(str(flag.label_id)))
        await pilot.pause()
        panel = static_text(screen.query_one("#flag-text", Static))
        assert panel.startswith(f"{LONG_PERSON} flagged test item {flag.source_id} at ")
        assert f"Comment: {comment}" in panel
        loads = screen.loads
        screen.reload()  # the screen redraws on every change: the flag stays selected
        await wait_until(pilot, lambda: screen.loads > loads, "a refresh")
        assert screen.chosen() == flag
        assert static_text(screen.query_one("#flag-text", Static)) == panel


async def test_a_long_trainee_name_is_cut_in_the_gate_table_and_whole_in_its_line(
    workspace, tmp_path
):
    """39.7: at 80 columns the Gate table's Reason and "If closed now" were off screen, and a
    60-character trainee name made it wider still. Every header is whole, the name and the
    reason end in "…", and the selected trainee's line has the name, the decision and the
    reason whole (never markup), also after a refresh."""
    from annotate.protocol import gate

    ctx = median_study(workspace.engine, tmp_path, trainees=2)
    label_as(workspace.engine, ctx.study.name, LONG_PERSON, clock=StepClock())
    app = console(workspace.engine, ctx.study.name)
    async with app.run_test(size=(80, 24)) as pilot:
        await arrive(pilot, StudyScreen)
        await pilot.press("g")
        await arrive(pilot, GateScreen)
        screen = app.screen
        assert isinstance(screen, GateScreen)
        table = screen.query_one("#trainees", DataTable)
        await wait_until(pilot, lambda: table.row_count == 3, "the trainees")
        assert table_fits(table)
        labels = [str(c.label) for c in table.ordered_columns]
        assert len(labels) == 6 and labels[0] == "Trainee" and labels[4] == "Reason"
        header = header_of(app, table)
        assert all(f" {label} " in f"{header} " for label in labels)  # each whole
        [row] = [ln for ln in screen_lines(app) if ln.startswith(" [i]Maxi") and "4/4" in ln]
        assert "…" in row and LONG_PERSON not in row
        assert row.rstrip().endswith("admit")  # the last column, on screen
        table.move_cursor(row=table.get_row_index(LONG_PERSON))
        await pilot.pause()
        line = static_text(screen.query_one("#trainee-detail", Static))
        assert line.startswith(f"{LONG_PERSON} · pending · 4 of 4 training items, ")
        assert line.endswith(" · if closed now: admit")
        assert LONG_PERSON in " ".join(screen_text(app).split())
        # decided by hand, with a long reason: cut in the table, whole in the line
        reason = "[red]copied the answers of another annotator, seen in the logs on Monday"
        gate.decide_manually(workspace.engine, ctx, LONG_PERSON, False, reason=reason,
                             force=True, decided_by="rhea")  # fmt: skip
        loads = screen.loads
        screen.reload()
        await wait_until(pilot, lambda: screen.loads > loads, "a refresh")
        assert screen.chosen() == LONG_PERSON  # the row stays selected
        assert table_fits(table)
        [row] = [ln for ln in screen_lines(app) if ln.startswith(" [i]Maxi") and "4/4" in ln]
        assert row.count("…") == 2 and reason not in row
        line = static_text(screen.query_one("#trainee-detail", Static))
        assert line.startswith(f"{LONG_PERSON} · rejected: {reason} · 4 of 4 training items")


def test_a_column_cut_first_gives_way_before_the_names():
    """A comment (or a gate reason) is cut down to its least before a name is cut at all; then
    the names, in column order. Without `cut_first` the name would go first."""
    from annotate.terminal_text import SafeText
    from annotate.tui.console.table import Column, layout

    name, comment = "n" * 30, "c" * 40
    rows = [("r", [SafeText(name), SafeText(comment)])]
    both = 30 + 40 + 4  # two columns, one cell of padding each side
    first = (Column("who", "Who", squeeze=12), Column("note", "Note", squeeze=24, cut_first=True))
    assert layout(first, rows, both - 10).caps == {1: 30}  # the name whole
    assert layout(first, rows, both - 20).caps == {1: 24, 0: 26}  # the comment at its least
    plain = (first[0], Column("note", "Note", squeeze=24))
    assert layout(plain, rows, both - 10).caps == {0: 20}


async def test_a_redrawn_column_is_as_wide_as_its_widest_cell():
    """The clock's in-place redraw ("12 s ago" -> "2 h ago" -> "5 s ago"): the column widens to
    its widest cell and narrows back once no cell needs the room, as DataTable's own rule."""
    from textual.app import App

    from annotate.terminal_text import SafeText
    from annotate.tui.console.table import Column, Table

    class One(App[None]):
        def compose(self):  # type: ignore[no-untyped-def]
            yield Table()

    columns = (Column("name", "Who"), Column("last", "Last"))
    async with One().run_test(size=(100, 20)) as pilot:
        table = pilot.app.query_one(Table)
        table.fill(columns, [(f"a{i}", [SafeText(f"a{i}"), SafeText("5 s ago")]) for i in range(9)])
        await pilot.pause()

        def width() -> int:
            return next(c for k, c in table.columns.items() if k.value == "last").content_width

        assert width() == len("5 s ago")
        wide = table.virtual_size.width
        table.update_cell("a3", "last", SafeText("14 min ago"), update_width=True)
        await pilot.pause()
        assert width() == len("14 min ago")
        # The table's scrollable size follows (a cut-off column would otherwise stay cut).
        assert table.virtual_size.width == wide + len("14 min ago") - len("5 s ago")
        for i in range(9):
            table.update_cell(f"a{i}", "last", SafeText(f"{i} s ago"), update_width=True)
        await pilot.pause()
        assert width() == len("0 s ago")
