"""The protocol as the annotator lives it: guidelines, training feedback, the gate (waiting,
admitted, refused), the test phase without feedback, and the end."""

from __future__ import annotations

import pytest
from textual.widgets import ProgressBar, Static

from annotate import specs
from annotate.protocol import gate
from annotate.protocol.session import AnnotatorSession
from annotate.protocol.studies import load_study
from annotate.tui.app import create_app
from annotate.tui.screens.feedback import FeedbackScreen
from annotate.tui.screens.guidelines import GuidelinesScreen, reflow
from annotate.tui.screens.help import HelpScreen
from annotate.tui.screens.item import ItemScreen
from annotate.tui.screens.phases import (
    FinishedScreen,
    HeldScreen,
    RejectedScreen,
    WaitingScreen,
)
from tests import fixtures as fx
from tests.tui.support import (
    QUICK_TEST,
    all_static_text,
    build_study,
    labels,
    screen_text,
    start,
    wait_until,
    without_labels,
)
from tests.tui.task_data import CB_DEV, CB_TEST, explained_task

RTE_TEST = without_labels(fx.SG_RTE)
TWO_TRAINING = {
    "training_items": 2,
    "gate_min_items": 2,
    "test_sample": 3,
    "annotators_per_item": 1,
}


def two_training_study(engine, tmp_path, **overrides) -> str:
    """An RTE study (fx.SG_RTE) of two training items, the gate after both, three test items
    of one label each; `overrides` on top. Returns its name."""
    return build_study(
        engine,
        tmp_path,
        "superglue/rte",
        dev=fx.SG_RTE,
        test=RTE_TEST,
        overrides={**TWO_TRAINING, **overrides},
    )


def gold_key(app) -> str:
    """The key of the right answer to the training item on screen (tests know the gold)."""
    gold = next(r["label"] for r in fx.SG_RTE if r["premise"] == app.screen.item.fields["premise"])
    return {"entailment": "1", "not_entailment": "2"}[gold]


def wrong_key(app) -> str:
    return "2" if gold_key(app) == "1" else "1"


class TestGuidelines:
    """The annotator reads the task, the label-prior hint and the keys before the first item."""

    @pytest.mark.parametrize(
        ("task", "dev", "test", "hint_on", "expected"),
        [
            (
                "superglue/rte",
                fx.SG_RTE,
                RTE_TEST,
                True,
                "Labels in this task are roughly balanced",
            ),
            ("superglue/cb", CB_DEV, CB_TEST, True, "Labels in this task are skewed"),
            ("superglue/rte", fx.SG_RTE, RTE_TEST, False, None),
        ],
    )
    async def test_guidelines_prior_hint_and_keys(
        self, workspace, tmp_path, task, dev, test, hint_on, expected
    ):
        study = build_study(
            workspace.engine,
            tmp_path,
            task,
            dev=dev,
            test=test,
            overrides={**TWO_TRAINING, "label_prior_hint": hint_on},
        )
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, GuidelinesScreen)
            text = all_static_text(app)
            spec = specs.load_task(task)
            assert spec.title in screen_text(app)
            assert reflow(spec.guidelines)[:60] in text  # the spec's guidelines
            assert ("in this task are" in text) is hint_on
            if expected:
                assert expected in text
            for option in spec.answer_options():
                assert option.text in text
            assert "Press Enter to start" in screen_text(app)
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, ItemScreen)

    async def test_help_lists_keys_and_closes(self, workspace, tmp_path):
        study = build_study(
            workspace.engine, tmp_path, "superglue/rte", test=RTE_TEST, overrides=QUICK_TEST
        )
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            item_screen = app.screen
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)
            text = all_static_text(app)
            for words in (
                "flag the item",
                "change your previous test answer",
                "quit",
                "Entailment",
            ):
                assert words in text
            await pilot.press("escape")
            assert app.screen is item_screen
            await pilot.press("1")
            assert len(labels(workspace.engine)) == 1


class TestTraining:
    """Each training answer gets feedback; the annotator presses a key to go on."""

    async def test_right_then_wrong_with_running_accuracy(self, workspace, tmp_path):
        study = two_training_study(workspace.engine, tmp_path, gate_threshold=0.5)
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            assert "Training 0/2" in screen_text(app)
            await pilot.press(gold_key(app))
            assert isinstance(app.screen, FeedbackScreen)
            shown = screen_text(app)
            assert "✓ Right" in shown and "So far: 1 of 1 right (100%)" in shown
            assert "Press Enter or Space to continue" in shown
            await pilot.press("1")  # an answer key does not skip the feedback
            assert isinstance(app.screen, FeedbackScreen)
            await pilot.press("enter")
            assert isinstance(app.screen, ItemScreen)
            assert "Training 1/2" in screen_text(app)
            gold_text = (
                "Entailment: the hypothesis follows"
                if gold_key(app) == "1"
                else "Not entailment: it does not follow"
            )
            await pilot.press(wrong_key(app))
            shown = screen_text(app)
            assert "✗ Wrong" in shown
            assert f"Right answer: {gold_text}" in shown
            assert "So far: 1 of 2 right (50%)" in shown
            # Threshold 0.5 reached: the trainee is told they passed (issue 39, item 5).
            assert "You passed the training: the gate admits you" in " ".join(shown.split())
            await pilot.press("space")
            await pilot.pause()
            assert isinstance(app.screen, ItemScreen) and app.screen.item.phase == "test"
        assert [label.correct for label in labels(workspace.engine)] == [True, False]

    async def test_cb_feedback_names_the_class_the_answer_counts_as(self, workspace, tmp_path):
        study = build_study(
            workspace.engine,
            tmp_path,
            "superglue/cb",
            dev=CB_DEV,
            test=CB_TEST,
            overrides={**TWO_TRAINING, "training_items": 1, "gate_min_items": 1},
        )
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press("7")
            shown = screen_text(app)
            assert "Your answer: Definitely false (counts as Contradiction)" in shown
            assert "Right answer: Contradiction" in shown and "✓ Right" in shown
            # Which points count as the right class (issue 39, item 5), read from the task.
            assert "(points 6–7 (Probably false, Definitely false) count as" in " ".join(
                shown.split()
            )

    async def test_explanation_is_shown_verbatim(self, workspace, tmp_path, monkeypatch):
        with explained_task(tmp_path, monkeypatch) as rows:
            study = build_study(
                workspace.engine,
                tmp_path,
                "custom/explained",
                dev=rows,
                test=without_labels(rows),
                overrides={"training_items": 1, "gate_min_items": 1},
            )
            app = create_app(workspace.engine, study, "ana", create_annotator=True)
            async with app.run_test(size=(80, 24)) as pilot:
                await start(pilot)
                await pilot.press("2")
                assert "Why: Purring [/foo] is a [CLS] sound." in screen_text(app)


def manual_gate_app(engine, tmp_path):
    """ana's app on a study of two training items and a manual gate, checking every 0.05 s."""
    study = two_training_study(engine, tmp_path, gate_rule="manual")
    app = create_app(engine, study, "ana", create_annotator=True)
    app.poll_seconds = 0.05
    return app, load_study(engine, study)


async def trained_by_keys(pilot) -> None:
    """Start, and answer both training items (1, then Enter past the feedback)."""
    await start(pilot)
    for _ in range(2):
        await pilot.press("1", "enter")


class TestGate:
    """After training the annotator waits for the gate, is admitted or politely turned away."""

    @pytest.mark.parametrize(
        ("rule", "decide", "next_screen"),
        [
            ("manual", "admit", ItemScreen),
            ("manual", "reject", RejectedScreen),
            ("median", "close", ItemScreen),
        ],
    )
    async def test_waiting_screen_moves_on_by_itself(
        self, workspace, tmp_path, rule, decide, next_screen
    ):
        study = two_training_study(workspace.engine, tmp_path, gate_rule=rule)
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        app.poll_seconds = 0.05
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            for _ in range(2):
                await pilot.press("1", "enter")
            assert isinstance(app.screen, WaitingScreen)
            assert "waiting for admission" in screen_text(app)
            ctx = load_study(workspace.engine, study)
            if decide == "close":
                gate.close_training(workspace.engine, ctx, force=True, reason="pilot run")
            else:
                gate.decide_manually(
                    workspace.engine, ctx, "ana", decide == "admit", reason="by the researcher"
                )
            await wait_until(
                pilot, lambda: isinstance(app.screen, next_screen), next_screen.__name__
            )
            if next_screen is ItemScreen:
                assert app.screen.item.phase == "test"
                assert "Test 0/3" in screen_text(app)

    async def test_a_refusal_overturned_by_hand_reaches_the_thank_you_screen(
        self, workspace, tmp_path
    ):
        """Closing the median gate turns ana away; the researcher admits her by hand after
        all, and the screen she left open moves on to the test items by itself."""
        app, ctx = manual_gate_app(workspace.engine, tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await trained_by_keys(pilot)
            gate.decide_manually(workspace.engine, ctx, "ana", False, reason="too fast")
            await wait_until(pilot, lambda: isinstance(app.screen, RejectedScreen), "refused")
            gate.decide_manually(workspace.engine, ctx, "ana", True, reason="trained in person")
            await wait_until(pilot, lambda: isinstance(app.screen, ItemScreen), "admitted")
            assert app.screen.item.phase == "test"

    async def test_a_refusal_mid_test_reaches_the_open_screen_by_itself(self, workspace, tmp_path):
        """The researcher refuses ana while a test item is on her screen: the screen moves to
        the thank-you screen by itself, before she spends time on an answer that would only
        be turned away (and her earlier test label is set aside). It says the researcher ended
        her part and the answers will not be used, not that the study "will not need you for
        its test items"; the researcher's reason stays theirs."""
        app, ctx = manual_gate_app(workspace.engine, tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await trained_by_keys(pilot)
            gate.decide_manually(workspace.engine, ctx, "ana", True, reason="trained in person")
            await wait_until(pilot, lambda: isinstance(app.screen, ItemScreen), "admitted")
            await pilot.press("1")  # one test label
            assert isinstance(app.screen, ItemScreen) and app.screen.item.phase == "test"
            gate.decide_manually(workspace.engine, ctx, "ana", False, reason="too fast")
            await wait_until(pilot, lambda: isinstance(app.screen, RejectedScreen), "refused")
            assert "Thank you for your work" in screen_text(app)
            shown = " ".join(all_static_text(app).split())
            assert "The researcher has ended your part in this study" in shown
            assert "answers you gave will not be used" in shown
            assert "will not need you" not in shown and "answers are saved" not in shown
            assert "too fast" not in shown
        assert labels(workspace.engine, "test") == []
        assert len(labels(workspace.engine, "set-aside")) == 1

    async def test_refused_at_once_by_threshold(self, workspace, tmp_path):
        study = two_training_study(workspace.engine, tmp_path, gate_threshold=1.0)
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press(wrong_key(app), "enter")
            await pilot.press(gold_key(app), "enter")
            assert isinstance(app.screen, RejectedScreen)
            shown = screen_text(app)
            assert "Thank you for your work" in shown and "answers are saved" in shown
            assert "%" not in shown  # no score to rub in


class TestTestPhase:
    """Test items come without feedback and never show gold; the end says so."""

    async def test_no_feedback_no_gold_then_finished(self, workspace, tmp_path):
        # A labelled test split: the gold is in the store but must never reach the screen.
        study = build_study(
            workspace.engine, tmp_path, "superglue/rte", test=fx.SG_RTE, overrides=QUICK_TEST
        )
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            for n in range(3):
                screen = app.screen
                assert isinstance(screen, ItemScreen)
                assert f"Test {n}/3" in screen_text(app)
                assert "time on item 00:0" in screen_text(app)  # elapsed time, labelled
                assert not hasattr(screen.item, "gold")
                await pilot.press("1")
                assert not isinstance(app.screen, FeedbackScreen)
                text = all_static_text(app)
                assert "Right" not in text and "Wrong" not in text
            assert isinstance(app.screen, FinishedScreen)
            assert "You labelled 3 test items" in screen_text(app)
        stored = labels(workspace.engine, "test")
        assert len(stored) == 3 and all(label.correct is None for label in stored)
        assert all(label.shown_at <= label.answered_at for label in stored)

    async def test_a_finished_annotator_who_returns_is_told_so_first(self, workspace, tmp_path):
        """ana labelled every item she can take, quit and comes back: "All done" is the first
        screen, not "Welcome back … Press Enter to start" and then "All done"."""
        study = build_study(
            workspace.engine, tmp_path, "superglue/rte", test=RTE_TEST, overrides=QUICK_TEST
        )
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            while isinstance(app.screen, ItemScreen):
                await pilot.press("1")
            assert isinstance(app.screen, FinishedScreen)
        back = create_app(workspace.engine, study, "ana")
        async with back.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert isinstance(back.screen, FinishedScreen)
            shown = screen_text(back)
            assert "All done" in shown and "Press Enter to start" not in shown

    async def test_an_item_held_by_a_window_left_open_is_waited_for_then_shown(
        self, workspace, tmp_path
    ):
        """The last item is on bo's screen (bo's app crashed: the hold lasts): ana is told it
        may come back, not "all done", and gets it as soon as bo's hold is given back."""
        study = build_study(
            workspace.engine, tmp_path, "superglue/rte", test=RTE_TEST, overrides=QUICK_TEST
        )
        bo = AnnotatorSession.open(workspace.engine, study, "bo", create_annotator=True)
        held = bo.next_item()
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        app.poll_seconds = 0.05
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            for _ in range(2):
                assert isinstance(app.screen, ItemScreen)
                await pilot.press("1")
            assert isinstance(app.screen, HeldScreen)
            shown = all_static_text(app)  # whole, as the lines wrap
            assert "No item for you right now" in shown and "All done" not in shown
            assert "1 item you have not labelled is on another annotator's screen" in shown
            lease = load_study(workspace.engine, study).protocol.lease_minutes
            assert f"the first within {lease:g} minutes" in shown  # bo's hold, just taken
            bo.release()  # the hold given back (bo's app quit)
            await wait_until(pilot, lambda: isinstance(app.screen, ItemScreen), "bo's item")
            assert app.screen.item.item_id == held.item_id
            await pilot.press("1")
            assert isinstance(app.screen, FinishedScreen)
            assert "You labelled 3 test items" in screen_text(app)

    async def test_each_answer_is_stored_before_the_next_item(self, workspace, tmp_path):
        study = build_study(
            workspace.engine, tmp_path, "superglue/rte", test=RTE_TEST, overrides=QUICK_TEST
        )
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        seen = []

        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            for _ in range(3):
                # The moment a new item screen exists, the previous answer is in the store.
                seen.append((app.screen.item.item_id, len(labels(workspace.engine))))
                await pilot.press("2")
        assert [count for _, count in seen] == [0, 1, 2]
        assert len({item for item, _ in seen}) == 3

    async def test_status_line_shows_progress_bar(self, workspace, tmp_path):
        study = build_study(
            workspace.engine, tmp_path, "superglue/rte", test=RTE_TEST, overrides=QUICK_TEST
        )
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        total = len(RTE_TEST)  # every item is a test item (no training)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            for done in (0, 1, 2):
                if done:
                    await pilot.press("1")
                    await pilot.pause()
                bar = app.screen.query_one("#status-bar", ProgressBar)
                assert (bar.total, bar.progress) == (total, done)
                phase = str(app.screen.query_one("#status-phase", Static).render())
                assert phase == f"Test {done}/{total}"
                row = next(line for line in screen_text(app).splitlines() if phase in line)
                assert f"{round(100 * done / total)}%" in row  # the bar's own figure, drawn


class TestArrivals:
    """Who opens the app at a moment other than the start sees where they are at once."""

    async def test_a_returning_trainee_at_the_gate_sees_the_waiting_screen_at_once(
        self, workspace, tmp_path
    ):
        """26.7: no guidelines with "Press Enter to start" for someone who waits."""
        study = two_training_study(workspace.engine, tmp_path, gate_rule="manual")
        first = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with first.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            for _ in range(2):
                await pilot.press("1", "enter")
            assert isinstance(first.screen, WaitingScreen)
        again = create_app(workspace.engine, study, "ana")
        again.poll_seconds = 1
        async with again.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert isinstance(again.screen, WaitingScreen)
            assert "Press Enter" not in screen_text(again)
            # as the page says it (wording.seconds): not "every 1 seconds"
            assert "checks by itself every 1 second and moves on" in all_static_text(again)

    async def test_a_late_joiner_of_a_complete_study_is_told_before_training(
        self, workspace, tmp_path
    ):
        """26.4: the study is complete: say so at once, no training for nothing."""
        from annotate.protocol.session import AnnotatorSession
        from annotate.tui.screens.phases import StudyCompleteScreen

        study = two_training_study(workspace.engine, tmp_path)
        session = AnnotatorSession.open(workspace.engine, study, "ana", create_annotator=True)
        while (item := session.next_item()) is not None:
            session.submit(item, "entailment" if item.phase == "test" else session_gold(item))
        late = create_app(workspace.engine, study, "zoe", create_annotator=True)
        async with late.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert isinstance(late.screen, StudyCompleteScreen)
            text = " ".join(screen_text(late).split())
            assert "This study is complete" in text and "no training to do" in text


def session_gold(item) -> str:
    return next(r["label"] for r in fx.SG_RTE if r["premise"] == item.fields["premise"])


async def test_an_answer_others_made_unneeded_is_said_at_the_end(workspace, tmp_path):
    """Issue 39, item 4: when the lease ran out and others completed the item, the finish
    screen says the last answer was not needed, not "Your answers are saved"."""
    from datetime import timedelta

    from annotate.protocol.session import AnnotatorSession
    from annotate.store.models import utcnow

    study = build_study(
        workspace.engine, tmp_path, "superglue/rte", test=RTE_TEST[:1], overrides=QUICK_TEST
    )
    app = create_app(workspace.engine, study, "ana", create_annotator=True)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await start(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, ItemScreen), "ana's item")
        later = utcnow() + timedelta(minutes=app.session.ctx.protocol.lease_minutes + 1)
        bob = AnnotatorSession.open(workspace.engine, study, "bob", create_annotator=True)
        bob.clock = lambda: later  # ana's lease has run out by bob's clock
        taken = bob.next_item()
        assert taken is not None and taken.item_id == app.screen.item.item_id
        bob.submit(taken, "entailment")
        await pilot.press("1")
        await wait_until(pilot, lambda: isinstance(app.screen, FinishedScreen), "the end")
        shown = " ".join(all_static_text(app).split())
        assert "Your last answer was not needed" in shown
        assert "Your answers are saved" not in shown
