"""The console's progress engine, without a screen: the numbers of a study, the incremental
tracker against a fresh read, and the change stamp."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from annotate.protocol import catch, flags
from annotate.protocol.progress import (
    ProgressTracker,
    change_stamp,
    studies_overview,
    study_progress,
)
from annotate.protocol.session import AnnotatorSession
from annotate.protocol.status import progress_warnings, study_status
from annotate.protocol.studies import TEST, load_study
from annotate.report.sections.catch import catch_report
from annotate.simulate import simulate
from annotate.store.models import Annotator, Label
from annotate.tui.console.screens.study import eta_text, summary_text
from tests.engine_helpers import rte_study
from tests.tui.console_support import NOW, START, StepClock, busy_study, label_as


def without_time(progress):
    return replace(progress, computed_at=None)


def test_progress_of_a_study_mid_way(workspace, tmp_path):
    ctx = busy_study(workspace.engine, tmp_path)
    p = study_progress(workspace.engine, ctx, now=NOW)
    assert (p.k, p.n_sample, p.items_complete, p.labels_total) == (3, 8, 3, 17)
    assert p.histogram == {0: 0, 1: 2, 2: 3, 3: 3}
    assert p.labels_needed == 7 and p.state == "test" and not p.complete
    # Nothing in the last 15 minutes: the ETA comes from the whole study's rate.
    assert p.rate_recent == 0.0
    assert p.rate_overall is not None and 30 < p.rate_overall < 40
    assert p.eta == timedelta(hours=7 / p.rate_overall)
    by_name = {a.name: a for a in p.annotators}
    assert set(by_name) == {"[b]ana[/b]", "ben", "chloé", "dev", "eve"}
    ana, ben, dev, eve = by_name["[b]ana[/b]"], by_name["ben"], by_name["dev"], by_name["eve"]
    # All 8 items labelled: nothing is left for her. Ben has 2 he has not labelled.
    assert (ana.phase, ana.test_done, ana.flags) == ("done", 8, 1)
    assert ana.gate_reason == "accuracy 1.000 >= threshold 0.750 (4 items)"
    assert (ben.phase, ben.test_done) == ("test", 6)
    assert (dev.phase, dev.gate, dev.training_accuracy) == ("rejected", "rejected", 0.5)
    assert (eve.phase, eve.gate, eve.training_done, eve.gate_reason) == (
        "training",
        "pending",
        1,
        None,
    )
    assert ana.median_seconds == 4.0  # the step clock: shown, then answered 4 s later


def test_the_recent_rate_counts_the_last_fifteen_minutes(workspace, tmp_path):
    ctx = busy_study(workspace.engine, tmp_path)
    last = study_progress(workspace.engine, ctx, now=NOW).last_activity
    assert last is not None
    p = study_progress(workspace.engine, ctx, now=last + timedelta(minutes=5))
    assert p.rate_recent is not None and p.rate_recent > 0
    assert p.eta == timedelta(hours=p.labels_needed / p.rate_recent)


def test_the_tracker_reads_new_labels_and_matches_a_fresh_read(workspace, tmp_path):
    ctx = busy_study(workspace.engine, tmp_path)
    tracker = ProgressTracker(ctx)
    tracker.refresh(workspace.engine, NOW)
    read_up_to = tracker.last_id
    label_as(workspace.engine, ctx.study.name, "chloé", test_items=2, clock=StepClock())
    label_as(workspace.engine, ctx.study.name, "fay", test_items=3, clock=StepClock())
    incremental = tracker.refresh(workspace.engine, NOW)
    assert tracker.last_id > read_up_to
    assert without_time(incremental) == without_time(study_progress(workspace.engine, ctx, NOW))
    assert incremental.labels_total == 17 + 2 + 3


def test_a_refresh_reads_the_import_record_once(workspace, tmp_path):
    """The console's refresh asked the import record whether the labels were imported, then
    again for their times: two reads of the same row each second of a live console."""
    from sqlalchemy import event

    ctx = busy_study(workspace.engine, tmp_path)
    tracker = ProgressTracker(ctx)
    tracker.refresh(workspace.engine, NOW)
    statements: list[str] = []

    def seen(_conn, _cursor, statement, *_args) -> None:  # type: ignore[no-untyped-def]
        statements.append(statement)

    event.listen(workspace.engine, "before_cursor_execute", seen)
    try:
        progress = tracker.refresh(workspace.engine, NOW)
    finally:
        event.remove(workspace.engine, "before_cursor_execute", seen)
    assert sum("labelimport" in statement.lower() for statement in statements) == 1
    assert progress.last_activity is not None  # the dates are known: the record was read


def test_a_revised_label_makes_the_tracker_read_afresh(workspace, tmp_path):
    ctx = busy_study(workspace.engine, tmp_path)
    tracker = ProgressTracker(ctx)
    before = tracker.refresh(workspace.engine, NOW)
    session = AnnotatorSession.open(workspace.engine, ctx.study.name, "ben", clock=StepClock())
    last = session.last_answer()
    assert last is not None
    item, value = last
    session.revise(item, "entailment" if value == "not_entailment" else "not_entailment")
    after = tracker.refresh(workspace.engine, NOW)
    assert without_time(after) == without_time(study_progress(workspace.engine, ctx, NOW))
    assert tracker.revision is not None and after.labels_total == before.labels_total


def test_the_change_stamp_moves_with_labels_decisions_and_flag_actions(workspace, tmp_path):
    ctx = busy_study(workspace.engine, tmp_path)
    stamp = change_stamp(workspace.engine)
    assert change_stamp(workspace.engine) == stamp  # nothing new, nothing moved
    label_as(workspace.engine, ctx.study.name, "chloé", test_items=1, clock=StepClock())
    moved = change_stamp(workspace.engine)
    assert moved.labels == stamp.labels + 1 and moved.last_label > stamp.last_label
    label_as(workspace.engine, ctx.study.name, "gil", clock=StepClock())  # trains, is admitted
    decided = change_stamp(workspace.engine)
    assert decided.last_decision != moved.last_decision
    [flag] = flags.list_flags(workspace.engine, ctx.id)
    flags.resolve_flag(workspace.engine, ctx, flag.label_id, by="rhea", reason="fixed")
    assert change_stamp(workspace.engine).last_flag_action is not None
    assert change_stamp(workspace.engine) != decided


def test_studies_overview(workspace, tmp_path):
    busy_study(workspace.engine, tmp_path)
    [row] = studies_overview(workspace.engine)
    assert (row.name, row.task, row.state, row.k, row.n_sample) == (
        "rte [pilot]",
        "superglue/rte",
        "test",
        3,
        8,
    )
    assert (row.items_complete, row.labels_total) == (3, 17)
    assert round(row.share_done, 3) == round(17 / 24, 3)
    assert row.last_activity is not None and row.last_activity > START


def test_catch_and_refresher_answers_are_not_test_labels(workspace, tmp_path):
    """Catch items (issue 16) sit in the test stream but are not test items: the progress of a
    study with catch items counts test answers only, like `annotate status`."""
    rte_study(
        workspace.engine,
        tmp_path,
        name="c",
        train=20,
        test=20,
        gate_threshold=0.6,
        catch_rate=0.4,
        catch_action="pause",
        annotators_per_item=3,
    )
    simulate(workspace.engine, "c", 3, 0.9, seed=5, accuracies=[0.97] * 3, drift={0: (4, 0.0)})
    with workspace.engine.connect() as conn:
        phases = dict(conn.execute(select(Label.phase, func.count()).group_by(Label.phase)).all())
    assert phases[catch.CATCH] > 0 and phases[catch.REFRESHER] > 0
    ctx = load_study(workspace.engine, "c")
    p = study_progress(workspace.engine, ctx)
    # The drifting annotator used every refresher item and was paused (no more test items).
    assert p.labels_total == phases[TEST] < 60
    assert sum(p.histogram.values()) == 20 and not p.complete
    status = study_status(workspace.engine, ctx)
    assert {a.name: a.test_done for a in p.annotators} == {
        a["name"]: a["test_done"] for a in status["annotators"]
    }
    later = p.computed_at + timedelta(hours=2)
    said = study_status(workspace.engine, ctx, now=later)["warnings"]
    paused = [w for w in said if " is paused: " in w]  # the console has it from catch_report
    assert len(paused) == 1 and paused[0] in catch_report(workspace.engine, ctx).warnings
    assert progress_warnings(ctx, p, later) == [w for w in said if w not in paused]


class _UnevenClock(StepClock):
    """Each reading is the next of a few uneven steps later, so answers take 1 to 11 s."""

    STEPS = (1, 2, 7, 3, 11, 5, 4)

    def __init__(self, skip: int = 0) -> None:
        super().__init__()
        self.readings = skip

    def __call__(self):  # type: ignore[no-untyped-def]
        self.now += timedelta(seconds=self.STEPS[self.readings % len(self.STEPS)])
        self.readings += 1
        return self.now


def test_the_console_and_the_report_show_the_same_median_seconds(workspace, tmp_path):
    """Issue 26.2: the Study screen's test median is the report's "Median s per test answer",
    in the annotator table and in the datasheet alike (issue 35: one population, test
    answers); the datasheet's minutes count both phases."""
    from statistics import median

    from annotate.report.build import study_report

    ctx = rte_study(workspace.engine, tmp_path, name="timed", train=3, test=6)
    label_as(workspace.engine, "timed", "ana", test_items=6, clock=_UnevenClock())
    label_as(workspace.engine, "timed", "ben", test_items=5, clock=_UnevenClock(skip=1))
    console = {a.name: a for a in study_progress(workspace.engine, ctx, now=NOW).annotators}
    report = study_report(workspace.engine, "timed", bootstrap=0)
    table = {a.name: a.seconds_per_item for a in report.annotators}
    assert report.datasheet is not None
    sheet = {t.name: t for t in report.datasheet.time_on_task.annotators}
    assert console["ana"].median_seconds != console["ben"].median_seconds
    for name in ("ana", "ben"):
        a = console[name]
        assert a.median_seconds is not None and a.median_training_seconds is not None
        # Seconds are computed in the store, to SQLite's millisecond (julianday) resolution.
        assert table[name] == pytest.approx(a.median_seconds, abs=2.5e-3)
        assert a.median_seconds != a.median_training_seconds
        label_seconds = (
            select(Label.shown_at, Label.answered_at)
            .join(Annotator, Annotator.id == Label.annotator_id)
            .where(Label.study_id == ctx.id, Annotator.name == name)
        )
        with workspace.engine.connect() as c:
            both = [(done - shown).total_seconds() for shown, done in c.execute(label_seconds)]
        assert sheet[name].median_seconds == pytest.approx(a.median_seconds, abs=2.5e-3)
        assert sheet[name].median_seconds != pytest.approx(median(both), abs=2.5e-3)
        assert sheet[name].total_minutes == pytest.approx(sum(both) / 60, abs=1e-3)


def test_one_label_a_moment_ago_is_no_rate(workspace, tmp_path):
    """Issue 39, item 7: a rate needs time and labels behind it ("25133.3/h, ETA 5 s" from
    one label is none)."""
    ctx = busy_study(workspace.engine, tmp_path)
    tracker = ProgressTracker(ctx)
    tracker.refresh(workspace.engine, NOW)
    first = tracker.test_times[0]
    moment = NOW.fromtimestamp(first, NOW.tzinfo) + timedelta(seconds=30)
    p = study_progress(workspace.engine, ctx, now=moment)
    assert (p.rate_recent, p.rate_overall, p.eta) == (None, None, None)
    assert eta_text(p) == "not yet (too few labels for a rate)"


def test_a_finished_studys_rate_stays_and_it_has_no_eta(workspace, tmp_path):
    ctx = busy_study(workspace.engine, tmp_path)
    for name in ("fay", "gus"):
        label_as(workspace.engine, ctx.study.name, name, test_items=8, clock=StepClock())
    done = study_progress(workspace.engine, ctx, now=NOW)
    assert done.complete and done.eta is None and eta_text(done) == "complete"
    assert done.last_activity is not None
    later = study_progress(workspace.engine, ctx, now=done.last_activity + timedelta(days=3))
    assert later.rate_overall == done.rate_overall is not None  # as of its last label
    assert later.rate_recent == done.rate_recent


def test_a_study_finished_within_minutes_shows_its_rate_over_the_test_phase(workspace, tmp_path):
    """A study whose test labels all came within two minutes showed "Labels/hour: – (last 1
    min) · – (whole study)" once complete: a finished test phase is a span to count over, not
    too little to project from."""
    ctx = rte_study(workspace.engine, tmp_path, name="quick", test=8, annotators_per_item=1)
    label_as(workspace.engine, "quick", "ana", test_items=8, clock=StepClock())
    done = study_progress(workspace.engine, ctx, now=NOW)
    assert done.complete and done.rate_overall is not None
    line = next(s for s in summary_text(done, NOW).plain.splitlines() if "Labels/hour" in s)
    assert line == f"Labels/hour: {done.rate_overall:.1f} over the test phase (complete)"


def test_a_stuck_study_has_no_eta(workspace, tmp_path):
    """Fewer than k admitted, nobody in training: the warning says no item can complete,
    and the ETA does not pretend otherwise."""
    ctx = rte_study(
        workspace.engine,
        tmp_path,
        name="stuck",
        train=4,
        test=8,
        annotators_per_item=3,
        gate_threshold=0.75,
    )
    clock = StepClock()
    label_as(workspace.engine, "stuck", "ana", test_items=8, clock=clock)
    label_as(workspace.engine, "stuck", "dev", training=lambda i: "entailment", clock=clock)
    p = study_progress(workspace.engine, ctx, now=NOW)
    assert p.labels_total == 8 and p.rate_overall is not None  # labels came in at a rate
    assert p.stuck and p.eta is None
    assert eta_text(p) == "none while no item can complete"
    assert any("no item can be completed" in w for w in progress_warnings(ctx, p, NOW))


# --- issue 39.7: the labels against the plan, in words -----------------------------------------
def test_labels_of_a_study_that_stopped_every_item_early_are_said_in_words(workspace, tmp_path):
    """stop_when_decided, careful annotators: every item decided before k. The bare share
    read "65/100 (100%)"; the words say why the labels are fewer than planned."""
    rte_study(workspace.engine, tmp_path, name="es", test=20, stop_when_decided=True)
    simulate(workspace.engine, "es", annotators=5, accuracy=1.0, seed=3)
    ctx = load_study(workspace.engine, "es")
    with workspace.engine.connect() as conn:
        given = conn.scalar(
            select(func.count()).where(Label.study_id == ctx.id, Label.phase == TEST)
        )
    planned = ctx.k * 20
    assert given < planned  # the premise: labels were spared
    tally = study_progress(workspace.engine, ctx).tally
    assert tally.words("test labels") == (
        f"{given}/{planned} test labels, every item decided (stopped early)"
    )
    assert tally.short == f"{given}/{planned}, stopped early" and "%" not in tally.short
    [row] = studies_overview(workspace.engine)
    assert row.tally == tally  # the list and the study say the same


def test_labels_past_the_plan_name_the_extra_annotators_for_ties(workspace, tmp_path):
    """tie_rule extra-annotator: ties took a third label, so the study holds more labels than
    k per item ("84/80" before); the words count the extra annotators."""
    rte_study(workspace.engine, tmp_path, name="xd", test=20, annotators_per_item=2,
              tie_rule="extra-annotator")  # fmt: skip
    simulate(workspace.engine, "xd", annotators=4, accuracy=0.7, seed=5)
    ctx = load_study(workspace.engine, "xd")
    with workspace.engine.connect() as conn:
        per_item = conn.execute(
            select(func.count())
            .where(Label.study_id == ctx.id, Label.phase == TEST)
            .group_by(Label.item_id)
        ).scalars()
        counts = list(per_item)
    given, extra = sum(counts), sum(max(0, n - 2) for n in counts)
    assert extra > 0 and given == 40 + extra  # the premise: every item done, ties took more
    tally = study_progress(workspace.engine, ctx).tally
    assert tally.words("test labels") == (
        f"{given} test labels (40 planned + {extra} extra annotators for ties), complete"
    )
    assert tally.short == f"{given} (40 + {extra} for ties)"
    [row] = studies_overview(workspace.engine)
    assert row.tally == tally


def test_labels_mid_way_say_what_is_to_go_and_what_an_early_stop_spared():
    from annotate.protocol.progress import LabelTally
    from annotate.protocol.standing import Completeness

    # k = 3: decided at 2 labels (1 spared), at 3, one item at 1 (2 to go), one untouched.
    tally = LabelTally.of(Completeness.of([(2, 0), (3, 0), (1, 2), (0, 3)], 3))
    assert tally.words() == "6/12 labels, 5 to go (1 not needed: items decided early)"
    assert tally.short == "6/12, 5 to go"
    plain = LabelTally.of(Completeness.of([(3, 0), (1, 2)], 3))
    assert (plain.words(), plain.short) == ("4/6 labels, 2 to go", "4/6 (67%)")


# --- issue 39.7: `annotate status` says the labels as the console does -------------------------
def status_of(cli, study: str) -> tuple[str, dict]:
    """`annotate status STUDY` as printed (whitespace folded) and as JSON."""
    shown = cli("status", study)
    assert shown.code == 0, shown.stderr
    return " ".join(shown.stdout.split()), cli("status", study, "--format", "json").json()


def stored_labels(engine, study: str) -> dict[int, list[str]]:
    """Each test item's label values, read from the store."""
    ctx = load_study(engine, study)
    per_item: dict[int, list[str]] = {}
    with engine.connect() as conn:
        for item, value in conn.execute(
            select(Label.item_id, Label.value).where(Label.study_id == ctx.id, Label.phase == TEST)
        ).all():
            per_item.setdefault(item, []).append(value)
    return per_item


def assert_status_says(cli, workspace, study: str, words: str) -> dict:
    """`status` prints `words` (with no bare share), its JSON carries them beside the old
    keys, and the console's Studies list and Study view say the same (one LabelTally)."""
    text, data = status_of(cli, study)
    assert words in text and "%" not in text
    assert data["test_labels"]["words"] == words
    ctx = load_study(workspace.engine, study)
    assert study_progress(workspace.engine, ctx).tally.words("test labels") == words
    [row] = [s for s in studies_overview(workspace.engine) if s.name == study]
    assert row.tally.words("test labels") == words
    given = sum(map(len, stored_labels(workspace.engine, study).values()))
    assert data["labels_total"] == data["test_labels"]["given"] == given  # the old key stays
    return data


def test_status_says_in_words_that_a_study_stopped_early(cli, workspace, tmp_path):
    """stop_when_decided: every item decided before k, fewer labels than planned, and
    `status` said only "20/20 items complete" beside a full bar."""
    rte_study(workspace.engine, tmp_path, name="es", test=20, stop_when_decided=True)
    simulate(workspace.engine, "es", annotators=5, accuracy=1.0, seed=3)
    given = sum(map(len, stored_labels(workspace.engine, "es").values()))
    planned = load_study(workspace.engine, "es").k * 20
    assert given < planned  # the premise
    data = assert_status_says(
        cli, workspace, "es", f"{given}/{planned} test labels, every item decided (stopped early)"
    )
    assert data["test_labels"] == {
        "given": given,
        "planned": planned,
        "extra": 0,
        "not_needed": planned - given,
        "to_go": 0,
        "finished": True,
        "words": f"{given}/{planned} test labels, every item decided (stopped early)",
    }
    assert data["early_stop"]["labels_saved"] == planned - given  # and the old keys agree


def test_status_names_the_extra_annotators_for_ties(cli, workspace, tmp_path):
    """tie_rule extra-annotator: more labels than k per item; `status` said nothing of it
    but the histogram."""
    rte_study(workspace.engine, tmp_path, name="xd", test=20, annotators_per_item=2,
              tie_rule="extra-annotator")  # fmt: skip
    simulate(workspace.engine, "xd", annotators=4, accuracy=0.7, seed=5)
    counts = [len(v) for v in stored_labels(workspace.engine, "xd").values()]
    given, extra = sum(counts), sum(max(0, n - 2) for n in counts)
    assert extra > 0 and given == 40 + extra  # the premise
    data = assert_status_says(
        cli,
        workspace,
        "xd",
        f"{given} test labels (40 planned + {extra} extra annotators for ties), complete",
    )
    assert (data["test_labels"]["extra"], data["test_labels"]["to_go"]) == (extra, 0)


def test_status_mid_way_says_what_is_to_go_and_what_an_early_stop_spared(cli, workspace, tmp_path):
    """k = 3 with stop_when_decided, two annotators: an item both agree on is decided at
    two labels (one spared); one they split waits for a third."""
    from tests.tui.console_support import StepClock, label_as

    rte_study(workspace.engine, tmp_path, name="mid", train=4, test=8, annotators_per_item=3,
              gate_threshold=0.75, stop_when_decided=True)  # fmt: skip
    clock = StepClock()
    label_as(workspace.engine, "mid", "ana", test_items=8, clock=clock)
    label_as(workspace.engine, "mid", "ben", test_items=8, wrong_every=3, clock=clock)
    values = stored_labels(workspace.engine, "mid").values()
    agreed = sum(len(v) == 2 and v[0] == v[1] for v in values)
    split = sum(len(v) == 2 and v[0] != v[1] for v in values)
    assert agreed and split and agreed + split == 8  # the premise: both kinds of item
    data = assert_status_says(
        cli,
        workspace,
        "mid",
        f"16/24 test labels, {split} to go ({agreed} not needed: items decided early)",
    )
    assert data["state"] == "test" and data["test_labels"]["finished"] is False


# --- `status`: an item held by a session that dropped is on a screen, not untouched -------------
def dropped_sessions(engine, tmp_path, clock=None) -> None:
    """k = 2, six test items: ana's window closes on her first test item, unanswered; ben
    answers that item (breadth-first, he is given it too) and his window closes on the next."""
    from tests.tui.console_support import gold_answer

    rte_study(engine, tmp_path, name="held", train=4, test=6, annotators_per_item=2,
              gate_threshold=0.75)  # fmt: skip
    for name, answers in (("ana", 0), ("ben", 1)):
        opened = {"clock": clock} if clock is not None else {}
        session = AnnotatorSession.open(engine, "held", name, create_annotator=True, **opened)
        item = session.next_item()
        while item is not None and item.phase == "training":
            session.submit(item, gold_answer(item))
            item = session.next_item()
        for _ in range(answers):
            session.submit(item, gold_answer(item))
            item = session.next_item()
        assert item is not None and item.phase == TEST  # on the screen; no answer, no release


def test_status_counts_an_item_held_by_a_dropped_session_as_on_a_screen(workspace, tmp_path):
    clock = StepClock()
    dropped_sessions(workspace.engine, tmp_path, clock)
    ctx = load_study(workspace.engine, "held")
    data = study_status(workspace.engine, ctx, now=clock.now)
    counts = {k: v for k, v in data.items() if k.startswith("items_")}
    assert counts == {
        "items_total": 6,
        "items_complete": 0,
        "items_open_ties": 0,
        "items_decided_early": 0,
        "items_in_progress": 1,  # ben's answer, and ana still holds it
        "items_untouched": 4,  # was 5: ben's second item counted as untouched
        "items_on_screen": 2,  # any live lease
        "items_on_screen_unlabelled": 1,
    }
    # The holds run out (quick: 10 minutes): nobody has the item any more.
    later = clock.now + timedelta(minutes=ctx.protocol.lease_minutes + 1)
    data = study_status(workspace.engine, ctx, now=later)
    assert (data["items_untouched"], data["items_on_screen_unlabelled"]) == (5, 0)
    assert (data["items_in_progress"], data["items_on_screen"]) == (1, 0)


def test_status_prints_and_gives_the_items_on_a_screen_apart(cli, workspace, tmp_path):
    dropped_sessions(workspace.engine, tmp_path)  # the real clock: status reads it too
    text, data = status_of(cli, "held")
    assert "0/6 items complete, 1 in progress, 1 on a screen (no label yet), 4 untouched" in text
    assert (data["items_on_screen_unlabelled"], data["items_untouched"]) == (1, 4)


def test_status_counts_items_by_labels_in_words(cli, workspace, tmp_path):
    """The line under the table read "1 labels: 1"; the console's histogram says "1 label"."""
    busy_study(workspace.engine, tmp_path, name="busy")
    text = cli("status", "busy").stdout
    line = next(row for row in text.splitlines() if row.startswith("Items by number of labels"))
    assert line.endswith("(k = 3): 1 label: 2, 2 labels: 3, 3 labels: 3")


def test_the_report_counts_one_flag_in_words(cli, workspace, tmp_path):
    """The report's flagged items section was titled "Flagged items: 1 flags (…)"."""
    busy_study(workspace.engine, tmp_path, name="busy")  # ana flagged one item
    text = cli("report", "busy", "--bootstrap", "0").stdout
    assert "Flagged items: 1 flag (1 open, 0 resolved, 0 on excluded items)" in text
