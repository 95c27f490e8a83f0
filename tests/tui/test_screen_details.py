"""The annotator's screens in the details a first-time user trips on (issue 15, items 10-12,
and issue 11's flag typed before `q`): what stays in view, which keys answer, what the words say."""

from __future__ import annotations

import re

from textual.widgets import Input, Static

from annotate import specs
from annotate.presentation.item_layout import split_highlights
from annotate.tui.app import create_app
from annotate.tui.screens.discard import DiscardModal
from annotate.tui.screens.feedback import FeedbackScreen
from annotate.tui.screens.flag import FlagModal
from annotate.tui.screens.help import HelpScreen
from annotate.tui.screens.item import ItemScreen
from annotate.tui.widgets.choosers import EntityChoice
from annotate.tui.widgets.title import fit_title
from annotate.wording import count_of
from tests import fixtures as fx
from tests.tui.support import (
    ONE_TRAINING_ITEM,
    QUICK_TEST,
    build_study,
    labels,
    leases,
    screen_lines,
    screen_text,
    start,
    static_text,
    wait_until,
    without_labels,
)
from tests.tui.task_data import (
    COPA_DEV,
    COPA_TEST,
    LONG_PREMISE_HYPOTHESIS,
    LONG_PREMISE_TEST,
    MULTIRC_TEST,
    RECORD_MANY_NAMES,
    RECORD_MANY_TEST,
    RECORD_TEST,
    STSB_TEST,
)


def app_for(workspace, tmp_path, task: str, *, test, dev=None, overrides=QUICK_TEST, **names):
    study = build_study(workspace.engine, tmp_path, task, test=test, dev=dev, overrides=overrides)
    return create_app(workspace.engine, study, names.get("annotator", "ana"), create_annotator=True)


def long_premise_app(workspace, tmp_path):
    """RTE with one training item and a test item whose premise is too long for the screen:
    the hypothesis is pinned below it, in the feedback too."""
    dev = [{**LONG_PREMISE_TEST[0], "label": "not_entailment", "idx": 1}]
    return app_for(
        workspace,
        tmp_path,
        "superglue/rte",
        dev=dev,
        test=LONG_PREMISE_TEST,
        overrides=ONE_TRAINING_ITEM,
    )


class TestHypothesisInView:
    """Item 10: the hypothesis is pinned below a premise of any length."""

    async def test_hypothesis_visible_at_80x24_under_a_5000_character_premise(
        self, workspace, tmp_path
    ):
        app = app_for(workspace, tmp_path, "superglue/rte", test=LONG_PREMISE_TEST)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            shown = screen_text(app)
            assert "Hypothesis" in shown
            assert LONG_PREMISE_HYPOTHESIS in shown  # whole, on screen, without scrolling
            assert "(1) The harbour office" in shown  # the premise starts at the top
            body = app.screen.query_one("#body")
            assert body.max_scroll_y > 0  # the premise scrolls in its own region
            await pilot.press("pagedown", "pagedown")
            assert body.scroll_y > 0
            assert LONG_PREMISE_HYPOTHESIS in screen_text(app)  # still there
            assert "entailment" in screen_lines(app)[-2]  # and the keys under it

    async def test_every_pair_task_pins_its_last_field(self, workspace, tmp_path):
        app = app_for(workspace, tmp_path, "superglue/cb", test=without_labels(fx.SG_RTE))
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            pinned = app.screen.query_one("#pinned")
            assert [w.id for w in pinned.children] == ["field-hypothesis"]

    async def test_hypothesis_visible_in_training_feedback_too(self, workspace, tmp_path):
        """The feedback keeps the item on screen to show why: the hypothesis included."""
        app = long_premise_app(workspace, tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press("1")
            await wait_until(pilot, lambda: isinstance(app.screen, FeedbackScreen), "feedback")
            shown = screen_text(app)
            assert LONG_PREMISE_HYPOTHESIS in shown and "✗ Wrong" in shown


class TestRecord:
    """Item 11: ReCoRD's number keys, its highlights and its title at 80 columns."""

    async def test_a_number_key_names_the_entity_and_enter_stores_it(self, workspace, tmp_path):
        app = app_for(workspace, tmp_path, "superglue/record", test=RECORD_TEST)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press("2")
            cue = app.screen.query_one("#entity-cue", Static)
            await wait_until(pilot, lambda: "Riverton" in static_text(cue), "the cue")
            assert "Enter chooses" in static_text(cue)
            assert "Riverton" in screen_text(app)  # the cue is on screen at 80x24
            assert labels(workspace.engine) == []  # nothing stored before Enter
            await pilot.press("enter")
            await wait_until(pilot, lambda: len(labels(workspace.engine)) == 1, "the answer")
        assert labels(workspace.engine)[0].value == "Riverton"

    async def test_two_digit_numbers_with_more_than_nine_entities(
        self, workspace, tmp_path, monkeypatch
    ):
        monkeypatch.setattr(EntityChoice, "SETTLE_SECONDS", 30.0)  # no pause on a slow machine
        app = app_for(workspace, tmp_path, "superglue/record", test=RECORD_MANY_TEST)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press("1", "2", "enter")  # 12: there is no 120
            await wait_until(pilot, lambda: len(labels(workspace.engine)) == 1, "entity 12")
            await pilot.press("1")  # could be 10, 11 or 12: the cue shows the digit waiting
            cue = app.screen.query_one("#entity-cue", Static)
            await wait_until(pilot, lambda: "Typed 1" in static_text(cue), "the pending digit")
            assert "10–12" in static_text(cue) and RECORD_MANY_NAMES[0] in static_text(cue)
            assert len(labels(workspace.engine)) == 1
            await pilot.press("enter")
            await wait_until(pilot, lambda: len(labels(workspace.engine)) == 2, "entity 1")
            await pilot.press("5", "enter")  # no entity 50 or more: 5 at once
            await wait_until(pilot, lambda: len(labels(workspace.engine)) == 3, "entity 5")
        values = [label.value for label in labels(workspace.engine)]
        assert values == [RECORD_MANY_NAMES[11], RECORD_MANY_NAMES[0], RECORD_MANY_NAMES[4]]

    async def test_a_pause_ends_the_number(self, workspace, tmp_path, monkeypatch):
        """`1`, a pause, then `2` means entity 2, not 12 (issue 39, item 1)."""
        monkeypatch.setattr(EntityChoice, "SETTLE_SECONDS", 2.0)  # the pause: waited for, not slept
        app = app_for(workspace, tmp_path, "superglue/record", test=RECORD_MANY_TEST)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press("1")
            cue = app.screen.query_one("#entity-cue", Static)
            await wait_until(pilot, lambda: "Typed 1" in static_text(cue), "the pending digit")
            await wait_until(pilot, lambda: "Enter chooses" in static_text(cue), "the pause")
            await pilot.press("2")
            await wait_until(pilot, lambda: "2. " + RECORD_MANY_NAMES[1] in static_text(cue), "2")
            assert labels(workspace.engine) == []
            await pilot.press("enter")
            await wait_until(pilot, lambda: len(labels(workspace.engine)) == 1, "the answer")
        assert labels(workspace.engine)[0].value == RECORD_MANY_NAMES[1]

    async def test_the_cue_stays_under_the_list_on_the_next_item(self, workspace, tmp_path):
        """The cue ("Enter chooses …") is the line under the entity list on every item: the
        second item's list was mounted below it, so the cue jumped above the list."""
        app = app_for(workspace, tmp_path, "superglue/record", test=RECORD_MANY_TEST)
        async with app.run_test(size=(100, 30)) as pilot:
            await start(pilot)

            def cue_row() -> int:
                lines = screen_lines(app)
                cue = next(n for n, line in enumerate(lines) if "Enter chooses" in line)
                first = next(n for n, line in enumerate(lines) if line.startswith(" 1. "))
                return cue - first

            assert cue_row() > 0
            await pilot.press("3", "enter")
            await wait_until(pilot, lambda: len(labels(workspace.engine)) == 1, "the answer")
            await pilot.pause()
            assert isinstance(app.screen, ItemScreen)
            assert cue_row() > 0, screen_text(app)

    async def test_highlights_are_a_list_not_markers(self, workspace, tmp_path):
        app = app_for(workspace, tmp_path, "superglue/record", test=RECORD_MANY_TEST)
        async with app.run_test(size=(100, 40)) as pilot:
            await start(pilot)
            article = static_text(app.screen.query_one("#field-passage", Static))
            assert "@highlight" not in article
            assert (
                "Highlights\n • Twelve rowers cross the bay\n • The crossing took [b]four[/b]"
                in (article)
            )

    async def test_title_keeps_study_and_annotator_at_80_columns(self, workspace, tmp_path):
        app = app_for(workspace, tmp_path, "superglue/record", test=RECORD_TEST)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            header = screen_lines(app)[0]
            assert "ReCoRD" in header and "pilot · ana" in header
        assert fit_title("ReCoRD: Reading Comprehension", "s · a", 100) == (
            "ReCoRD: Reading Comprehension",
            "s · a",
        )
        assert fit_title("ReCoRD: Reading Comprehension", "s · a", 20) == ("ReCoRD", "s · a")
        assert fit_title("A long title without a colon", "study · ann", 24) == (
            "A long ti…",
            "study · ann",
        )


class TestFeedbackWords:
    """Item 12: feedback names what an answer means, not only its key's label."""

    async def test_copa_feedback_shows_the_choices_text(self, workspace, tmp_path):
        app = app_for(
            workspace,
            tmp_path,
            "superglue/copa",
            dev=COPA_DEV,
            test=COPA_TEST,
            overrides=ONE_TRAINING_ITEM,
        )
        async with app.run_test(size=(100, 40)) as pilot:
            await start(pilot)
            await pilot.press("1")  # the toilet; the right one is the spout
            await wait_until(pilot, lambda: isinstance(app.screen, FeedbackScreen), "feedback")
            answers = static_text(app.screen.query_one("#answers", Static))
        assert "Your answer: Choice 1 — The toilet filled with water." in answers
        assert "Right answer: Choice 2 — Water flowed from the spout." in answers

    async def test_stsb_feedback_shows_the_anchor(self, workspace, tmp_path):
        app = app_for(
            workspace,
            tmp_path,
            "glue/stsb",
            dev=fx.STSB_DEV,
            test=STSB_TEST,
            overrides=ONE_TRAINING_ITEM,
        )
        async with app.run_test(size=(120, 40)) as pilot:
            await start(pilot)
            await pilot.press("3")
            await wait_until(pilot, lambda: isinstance(app.screen, FeedbackScreen), "feedback")
            answers = static_text(app.screen.query_one("#answers", Static))
        assert "Your answer: 3 — Roughly equivalent, but some important information" in answers
        # The gold ratings of STSB_DEV (4.6, 0.25, 3.8) fall between points of the scale.
        gold = re.search(r"Right answer: ([\d.]+) — nearest point (\d): (.+?) \(", answers)
        assert gold is not None, answers
        rating, point, anchor = gold.groups()
        assert int(point) == round(float(rating))
        assert anchor == specs.load_task("glue/stsb").scale.anchors[point]


class TestHelpKeys:
    """`?` lists the keys of the screen it was opened from, not the item screen's everywhere."""

    async def test_help_lists_the_keys_of_the_item_then_of_the_feedback(self, workspace, tmp_path):
        app = long_premise_app(workspace, tmp_path)

        async def help_text() -> str:
            await pilot.press("question_mark")
            await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), "help")
            said = str(app.screen.query_one("#help-keys", Static).render())
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen), "closed")
            return said

        async with app.run_test(size=(100, 40)) as pilot:
            await start(pilot)
            on_item = await help_text()
            assert "Answer keys" in on_item and "flag the item" in on_item
            assert "Shift+↑/↓" in on_item  # the hypothesis is pinned: these keys scroll it
            await pilot.press("1")
            await wait_until(pilot, lambda: isinstance(app.screen, FeedbackScreen), "feedback")
            on_feedback = await help_text()
        assert "Enter/Space  continue" in on_feedback and "Shift+↑/↓" in on_feedback
        assert "Answer keys" not in on_feedback and "flag the item" not in on_feedback


class TestLayoutDetails:
    async def test_help_close_hint_in_view_at_80x24(self, workspace, tmp_path):
        app = app_for(workspace, tmp_path, "superglue/rte", test=without_labels(fx.SG_RTE))
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press("question_mark")
            await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), "help")
            assert "Escape or ? closes this help" in screen_text(app)
            assert app.screen.query_one("#help-body").max_scroll_y > 0  # the rest scrolls

    async def test_a_notification_does_not_cover_the_answer_keys(self, workspace, tmp_path):
        app = app_for(workspace, tmp_path, "superglue/record", test=RECORD_TEST)
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await start(pilot)
            app.notify("A long notice " * 8, timeout=60)
            await wait_until(pilot, lambda: bool(app.screen.query("Toast")), "the toast")
            toast = app.screen.query_one("Toast").region
            keys = app.screen.query_one("#answer-bar").region
            chooser = app.screen.query_one("#chooser").region
            assert toast.height and keys.height
            assert not toast.overlaps(keys) and not toast.overlaps(chooser)
            assert "1 2 3…" in screen_text(app)  # drawn, not hidden under the toast

    async def test_the_test_phase_notice_covers_no_item_text(self, workspace, tmp_path):
        """26.14: the phase notice sits over the title and status lines, not the premise."""
        app = app_for(workspace, tmp_path, "superglue/rte", test=without_labels(fx.SG_RTE))
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await start(pilot)
            app.notify("Test phase: from now on there is no feedback.", timeout=60)
            await wait_until(pilot, lambda: bool(app.screen.query("Toast")), "the toast")
            toast = app.screen.query_one("Toast").region
            body = app.screen.query_one("#body").region
            assert toast.height and body.height
            assert not toast.overlaps(body), (toast, body)
            assert not toast.overlaps(app.screen.query_one("#answer-bar").region)

    async def test_reading_column_has_a_maximum_width(self, workspace, tmp_path):
        app = app_for(workspace, tmp_path, "superglue/rte", test=LONG_PREMISE_TEST)
        async with app.run_test(size=(200, 50)) as pilot:
            await start(pilot)
            body = app.screen.query_one("#body").region
            assert body.width == 100
            assert body.x == 50  # centred
            assert max(len(line.rstrip()) for line in screen_lines(app)[2:-6]) <= 150

    async def test_the_clock_says_what_it_times(self, workspace, tmp_path):
        app = app_for(workspace, tmp_path, "superglue/rte", test=without_labels(fx.SG_RTE))
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            status = screen_lines(app)[1]
            assert "time on item 00:0" in status and "session 00:" in status


class TestFlagBeforeQuit:
    """Issue 11: a flag typed and then `q` (or Ctrl+Q) before answering is not dropped silently."""

    async def test_quit_asks_and_keeping_goes_back_with_the_flag(self, workspace, tmp_path):
        app = app_for(workspace, tmp_path, "superglue/rte", test=without_labels(fx.SG_RTE))
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press("f", *"premise cut off", "enter")
            await pilot.press("q")
            await wait_until(pilot, lambda: isinstance(app.screen, DiscardModal), "question")
            assert "Discard your flag comment?" in screen_text(app)
            assert "premise cut off" in screen_text(app)
            await pilot.press("enter")  # keep it
            assert isinstance(app.screen, ItemScreen) and app.is_running
            await pilot.press("2")
            await wait_until(pilot, lambda: len(labels(workspace.engine)) == 1, "the answer")
        (label,) = labels(workspace.engine)
        assert (label.flag, label.comment) == (True, "premise cut off")

    async def test_ctrl_q_in_the_open_dialog_asks_too(self, workspace, tmp_path):
        app = app_for(workspace, tmp_path, "superglue/rte", test=without_labels(fx.SG_RTE))
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press("f", *"half a thought")
            await pilot.press("ctrl+q")
            await wait_until(pilot, lambda: isinstance(app.screen, DiscardModal), "question")
            await pilot.press("escape")  # keep: back in the dialog, the text as typed
            assert isinstance(app.screen, FlagModal)
            assert app.screen.query_one(Input).value == "half a thought"

    async def test_discarding_quits_and_releases_the_item(self, workspace, tmp_path):
        app = app_for(workspace, tmp_path, "superglue/rte", test=without_labels(fx.SG_RTE))
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press("f", "enter")  # a flag without a comment is asked about too
            await pilot.press("q")
            await wait_until(pilot, lambda: isinstance(app.screen, DiscardModal), "question")
            assert "Discard your flag?" in screen_text(app)
            await pilot.press("d")
            await wait_until(pilot, lambda: not app.is_running, "the app to quit")
        assert labels(workspace.engine) == [] and leases(workspace.engine) == 0

    async def test_quit_without_a_flag_does_not_ask(self, workspace, tmp_path):
        app = app_for(workspace, tmp_path, "superglue/rte", test=without_labels(fx.SG_RTE))
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press("f", "escape", "q")  # the dialog cancelled: nothing to keep
            await wait_until(pilot, lambda: not app.is_running, "the app to quit")


class TestJudgementsBeforeQuit:
    """MultiRC: candidates judged and then `q` before Enter submits them are not dropped
    silently, as a flag typed before `q` is not."""

    @staticmethod
    def multirc_app(workspace, tmp_path):
        return app_for(workspace, tmp_path, "superglue/multirc", test=MULTIRC_TEST)

    async def test_quit_asks_and_keeping_goes_back_with_the_judgements(self, workspace, tmp_path):
        app = self.multirc_app(workspace, tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            candidates = len(app.screen.item.fields["answers"])
            await pilot.press("1")  # the first candidate judged true, the item not submitted
            await pilot.press("q")
            await wait_until(pilot, lambda: not isinstance(app.screen, ItemScreen), "a change")
            assert app.is_running  # asked, not gone
            shown = " ".join(" ".join(map(static_text, app.screen.query(Static))).split())
            assert "Discard your judgements?" in shown
            assert f"1 of {candidates} candidate answers judged" in shown
            await pilot.press("enter")  # keep them
            assert isinstance(app.screen, ItemScreen) and app.is_running
            await pilot.press(*["2"] * (candidates - 1), "enter")
            await wait_until(pilot, lambda: len(labels(workspace.engine)) == 1, "the answer")
        (label,) = labels(workspace.engine)
        assert list(label.value.values()) == ["1"] + ["0"] * (candidates - 1)

    async def test_discarding_quits_and_releases_the_item(self, workspace, tmp_path):
        app = self.multirc_app(workspace, tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press("2", "q")
            await wait_until(pilot, lambda: not isinstance(app.screen, ItemScreen), "a change")
            assert app.is_running and "discard and quit" in screen_text(app)
            await pilot.press("d")
            await wait_until(pilot, lambda: not app.is_running, "the app to quit")
        assert labels(workspace.engine) == [] and leases(workspace.engine) == 0

    async def test_a_flag_and_judgements_are_asked_about_together(self, workspace, tmp_path):
        app = self.multirc_app(workspace, tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press("f", *"odd", "enter", "1", "q")
            await wait_until(pilot, lambda: isinstance(app.screen, DiscardModal), "question")
            shown = " ".join(" ".join(map(static_text, app.screen.query(Static))).split())
            assert "Discard your flag comment and judgements?" in shown
            assert "the flag is lost" in shown and "they are lost" in shown

    async def test_quit_before_judging_does_not_ask(self, workspace, tmp_path):
        app = self.multirc_app(workspace, tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press("q")
            await wait_until(pilot, lambda: not app.is_running, "the app to quit")


def test_highlight_markers_split_from_the_article():
    article, highlights = split_highlights(
        "Text [b] here.\n@highlight\nOne\n@highlight\nTwo\nlines"
    )
    assert (article, highlights) == ("Text [b] here.", ["One", "Two lines"])
    assert split_highlights("No markers @highlight inline") == ("No markers @highlight inline", [])


def test_counts_in_words():
    assert count_of(1, "item") == "1 item"
    assert count_of(0, "item") == "0 items"
    assert count_of(2, "training item") == "2 training items"
    assert count_of(1, "study") == "1 study" and count_of(3, "study") == "3 studies"


def _multirc_with(candidates: int, question: str = "Which of these did the ferry carry?"):
    answers = [{"text": f"Cargo number {n}", "idx": n, "label": n % 2} for n in range(candidates)]
    return [
        {
            "idx": 0,
            "version": 1.1,
            "passage": {
                "text": "The ferry leaves at nine. It carries cars, bikes and walkers.",
                "questions": [{"question": question, "idx": 0, "answers": answers}],
            },
        }
    ]


class TestOverflow:
    """Issue 39, item 3: a block that can overflow at 80x24 scrolls from the keyboard and says
    that it can; nothing the trainee must see is out of reach."""

    async def test_multirc_feedback_with_14_candidates_scrolls_to_the_end(
        self, workspace, tmp_path
    ):
        rows = _multirc_with(14)
        app = app_for(
            workspace, tmp_path, "superglue/multirc", dev=rows, test=without_labels(rows),
            overrides=ONE_TRAINING_ITEM,
        )  # fmt: skip
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press(*["1"] * 14, "enter")
            await wait_until(pilot, lambda: isinstance(app.screen, FeedbackScreen), "feedback")
            panel = app.screen.query_one("#feedback")
            await wait_until(pilot, lambda: bool(panel.border_title), "the overflow cue")
            assert "more feedback below: ↓" in str(panel.border_title)
            shown = screen_text(app)
            assert "Press Enter or Space to continue." in shown  # always in view
            assert "So far:" not in shown  # below the fold, for now
            for _ in range(30):
                await pilot.press("down")
            await wait_until(pilot, lambda: "So far:" in screen_text(app), "the end of it")
            assert "14. Cargo number 13" in screen_text(app)
            assert not panel.border_title  # nothing more below: the cue is gone

    async def test_a_long_hypothesis_scrolls_and_says_so(self, workspace, tmp_path):
        long_hypothesis = " ".join(f"Clause {n} of a very long hypothesis." for n in range(40))
        test = [{"premise": "A short premise.", "hypothesis": long_hypothesis, "idx": 0}]
        app = app_for(workspace, tmp_path, "superglue/rte", test=test)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            pinned = app.screen.query_one("#pinned")
            await wait_until(pilot, lambda: bool(pinned.border_title), "the overflow cue")
            assert "more below: Shift+↓" in str(pinned.border_title)
            assert "Clause 39" not in screen_text(app)
            for _ in range(30):
                await pilot.press("shift+down")
            await wait_until(pilot, lambda: "Clause 39" in screen_text(app), "the end")
            assert "more below" not in str(pinned.border_title)

    async def test_a_long_passage_says_it_continues(self, workspace, tmp_path):
        app = app_for(workspace, tmp_path, "superglue/rte", test=LONG_PREMISE_TEST)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            pinned = app.screen.query_one("#pinned")
            await wait_until(pilot, lambda: bool(pinned.border_title), "the overflow cue")
            assert "passage continues: PgDn" in str(pinned.border_title)
            assert "passage continues: PgDn" in screen_text(app)  # drawn on the border
