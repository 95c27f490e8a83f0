"""What the annotator does besides answering: quit and resume, flag with a comment, revise
the previous answer."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Static

from annotate.tui.app import create_app
from annotate.tui.screens.flag import FlagModal
from annotate.tui.screens.guidelines import GuidelinesScreen
from annotate.tui.screens.item import ItemScreen
from annotate.tui.screens.phases import FinishedScreen
from tests import fixtures as fx
from tests.tui.support import (
    QUICK_TEST,
    all_static_text,
    build_study,
    labels,
    leases,
    revisions,
    screen_lines,
    screen_text,
    start,
    static_text,
    wait_until,
    without_labels,
)
from tests.tui.task_data import MULTIRC_TEST, STSB_TEST

RTE_TEST = without_labels(fx.SG_RTE)


def rte_study(workspace, tmp_path, **overrides) -> str:
    return build_study(
        workspace.engine,
        tmp_path,
        "superglue/rte",
        dev=fx.SG_RTE,
        test=RTE_TEST,
        overrides={**QUICK_TEST, **overrides},
    )


class TestResume:
    """Quitting (or being killed) mid-way and starting again continues at the right item."""

    async def test_quit_with_q_then_resume_at_next_item(self, workspace, tmp_path):
        study = rte_study(workspace, tmp_path)
        first = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with first.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            answered = first.screen.item.item_id
            await pilot.press("1")
            on_screen = first.screen.item.item_id
            await pilot.press("q")
            await pilot.pause()
            assert not first.is_running  # q leaves the app
        assert [label.item_id for label in labels(workspace.engine)] == [answered]
        assert leases(workspace.engine) == 0  # q gave the item on screen back

        second = create_app(workspace.engine, study, "ana")
        async with second.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert isinstance(second.screen, GuidelinesScreen)
            assert "Welcome back" in screen_text(second)
            await pilot.press("enter")
            await pilot.pause()
            screen = second.screen
            assert isinstance(screen, ItemScreen)
            assert screen.item.item_id == on_screen != answered
            assert "Test 1/3" in screen_text(second)
            await pilot.press("2")
        assert len(labels(workspace.engine)) == 2

    async def test_killed_app_resumes_the_item_it_showed(self, workspace, tmp_path):
        """Without q the lease stays (as after kill -9): the same item comes back, unanswered,
        and training answers given before the kill are kept."""
        study = rte_study(
            workspace, tmp_path, training_items=2, gate_min_items=2, gate_threshold=0.0
        )
        first = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with first.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press("1", "enter", "1", "enter")  # training, with feedback
            await pilot.press("2")  # the first test answer
            shown = first.screen.item.item_id
            # leaving the context ends the app without `q`: nothing is released
        assert len(labels(workspace.engine)) == 3
        assert leases(workspace.engine) == 1  # still reserved for ana, as after a crash

        second = create_app(workspace.engine, study, "ana")
        async with second.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            assert second.screen.item.item_id == shown
            assert "Test 1/3" in screen_text(second)


class TestFlag:
    """`f` opens a dialog; the flag and comment go with the next answer."""

    async def test_flag_with_comment_is_stored_verbatim(self, workspace, tmp_path):
        study = rte_study(workspace, tmp_path)
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        comment = "[b]x[/b] q?"  # q and ? must be typed, not obeyed
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press("f")
            assert isinstance(app.screen, FlagModal)
            await pilot.press(*comment)
            assert app.is_running and isinstance(app.screen, FlagModal)
            assert app.screen.query_one(Input).value == comment
            await pilot.press("enter")
            assert isinstance(app.screen, ItemScreen)
            note = static_text(app.screen.query_one("#flag-note", Static))
            assert comment in note and "Flagged" in note
            await pilot.press("2")
            await pilot.press("1")  # the next item is not flagged
        first, second = labels(workspace.engine)
        assert (first.flag, first.comment, first.value) == (True, comment, "not_entailment")
        assert (second.flag, second.comment) == (False, None)

    async def test_a_long_comment_leaves_the_item_and_its_keys_in_view(self, workspace, tmp_path):
        """A pasted page is cut at the page's limit and shown on two lines with …; the item
        and both answer keys stay on an 80x24 screen, and the quit dialog keeps its keys."""
        from textual import events

        from annotate.protocol.flags import COMMENT_MAX_CHARS

        study = rte_study(workspace, tmp_path)
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        comment = "The hypothesis names a Friday that the premise never gives. " * 50
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press("f")
            field = app.screen.query_one(Input)
            field.post_message(events.Paste(comment))
            await pilot.pause()
            assert len(field.value) == COMMENT_MAX_CHARS
            await pilot.press("enter")
            note = static_text(app.screen.query_one("#flag-note", Static))
            assert note.endswith("… (sent with your answer)") and len(note) < 200
            shown = screen_text(app)
            assert "Entailment" in shown and "Not entailment" in shown
            await pilot.press("q")
            assert "discard and quit" in screen_text(app)
            await pilot.press("enter")  # keep it: back to the item
            await pilot.press("2")
        (label,) = labels(workspace.engine)
        assert label.comment == comment[:COMMENT_MAX_CHARS].strip()

    async def test_escape_cancels_the_flag(self, workspace, tmp_path):
        study = rte_study(workspace, tmp_path)
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press("f", "a", "b", "escape")
            assert isinstance(app.screen, ItemScreen)
            await pilot.press("1")
        (label,) = labels(workspace.engine)
        assert (label.flag, label.comment) == (False, None)


class TestRevise:
    """`u` shows the previous test answer again; the next answer key changes it."""

    async def test_revise_previous_answer_then_continue(self, workspace, tmp_path):
        study = rte_study(workspace, tmp_path)
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press("u")  # nothing to revise yet: stays on the item
            assert isinstance(app.screen, ItemScreen) and not app.screen.revising
            first_item = app.screen.item.item_id
            await pilot.press("1")
            current = app.screen
            await pilot.press("u")
            revising = app.screen
            assert isinstance(revising, ItemScreen) and revising.revising
            assert revising.item.item_id == first_item
            banner = static_text(revising.query_one("#revise-banner", Static))
            assert "it was: Entailment" in banner
            await pilot.press("2")
            await pilot.pause()
            assert app.screen is current  # back on the item that was waiting
            await pilot.press("1")
        stored = labels(workspace.engine)
        assert (stored[0].item_id, stored[0].value) == (first_item, "not_entailment")
        assert stored[0].revisions == 1 and len(stored) == 2
        (revision,) = revisions(workspace.engine)
        assert (revision.label_id, revision.old_value) == (stored[0].id, "entailment")

    async def test_escape_leaves_the_answer_and_training_is_final(self, workspace, tmp_path):
        study = rte_study(
            workspace, tmp_path, training_items=1, gate_min_items=1, gate_threshold=0.0
        )
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            await pilot.press("1", "enter")  # training answer and its feedback
            await pilot.press("u")  # training answers cannot be revised
            assert isinstance(app.screen, ItemScreen) and not app.screen.revising
            await pilot.press("2")  # first test answer
            current = app.screen
            await pilot.press("u")
            assert app.screen.revising
            await pilot.press("escape")
            assert app.screen is current
        assert [label.value for label in labels(workspace.engine, "test")] == ["not_entailment"]
        assert revisions(workspace.engine) == []

    async def test_revise_the_last_answer_from_the_all_done_screen(self, workspace, tmp_path):
        """The batch is done: `u` there goes back to the last test answer as on an item
        screen, and the answer given there changes it; the footer says so."""
        study = rte_study(workspace, tmp_path)
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await start(pilot)
            while isinstance(app.screen, ItemScreen):
                last = app.screen.item.item_id
                await pilot.press("1")
            finished = app.screen
            assert isinstance(finished, FinishedScreen)
            assert "u Revise previous" in " ".join(screen_lines(app)[-1].split())
            await pilot.press("u")
            revising = app.screen
            assert isinstance(revising, ItemScreen) and revising.revising
            assert revising.item.item_id == last
            await pilot.press("2")
            await pilot.pause()
            assert app.screen is finished  # back on "All done"
            notices = [n.message for n in app._notifications]
            assert any(n.startswith("Previous answer changed to: Not entailment") for n in notices)
        stored = labels(workspace.engine)
        assert [label.value for label in stored] == ["entailment"] * 2 + ["not_entailment"]
        (revision,) = revisions(workspace.engine)
        assert (revision.label_id, revision.old_value) == (stored[-1].id, "entailment")

    async def test_u_is_not_offered_on_all_done_without_a_test_answer(self, workspace, tmp_path):
        """The one answer came after others had completed its item (not stored): nothing to
        revise, so "All done" offers no `u` (not in its text, not in the footer), and the key
        does nothing."""
        from datetime import timedelta

        from annotate.protocol.session import AnnotatorSession
        from annotate.store.models import utcnow

        study = rte_study(workspace, tmp_path, test_sample=1)
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await start(pilot)
            later = utcnow() + timedelta(minutes=app.session.ctx.protocol.lease_minutes + 1)
            bob = AnnotatorSession.open(workspace.engine, study, "bob", create_annotator=True)
            bob.clock = lambda: later  # ana's lease has run out by bob's clock
            bob.submit(bob.next_item(), "entailment")
            await pilot.press("1")
            await wait_until(pilot, lambda: isinstance(app.screen, FinishedScreen), "the end")
            shown = " ".join(all_static_text(app).split())
            assert "Your last answer was not needed" in shown and "Press q to leave." in shown
            assert "Press u" not in shown
            assert not app.screen.check_action("revise", ())  # the footer leaves it out
            app.clear_notifications()
            await pilot.press("u")
            await pilot.pause()
            assert isinstance(app.screen, FinishedScreen) and not app._notifications

    async def test_an_stsb_score_is_told_as_a_score(self, workspace, tmp_path):
        """STS-B's banner said "it was: 0", a class label's wording; it says the score."""
        study = build_study(
            workspace.engine, tmp_path, "glue/stsb", test=STSB_TEST, overrides=QUICK_TEST
        )
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with app.run_test(size=(100, 30)) as pilot:
            await start(pilot)
            await pilot.press("0")
            await pilot.pause()
            await pilot.press("u")
            revising = app.screen
            assert isinstance(revising, ItemScreen) and revising.revising
            banner = " ".join(static_text(revising.query_one("#revise-banner", Static)).split())
            await pilot.press("3")
            await pilot.pause()
            notices = [n.message for n in app._notifications]
        assert "(your score was 0 on the scale 0–5)" in banner, banner
        assert "Previous answer changed to: a score of 3 on the scale 0–5" in notices, notices

    async def test_a_multirc_judgement_is_told_by_the_candidates_numbers(self, workspace, tmp_path):
        """The banner and the notice name MultiRC's candidates by their numbers on the
        screen, not by their ids in the data (30, 31 …)."""
        study = build_study(
            workspace.engine,
            tmp_path,
            "superglue/multirc",
            dev=fx.SG_MULTIRC,
            test=MULTIRC_TEST,
            overrides={**QUICK_TEST, "training_items": 0, "test_sample": "all"},
        )
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            first = app.screen.item.fields["answers"]
            await pilot.press(*["1", "2", "1"][: len(first)], "enter")
            await pilot.pause()
            await pilot.press("u")
            revising = app.screen
            assert isinstance(revising, ItemScreen) and revising.revising
            banner = static_text(revising.query_one("#revise-banner", Static))
            was = ", ".join(
                f"{n}: {v}" for n, v in enumerate(["True", "False", "True"][: len(first)], 1)
            )
            assert f"it was: {was}" in banner, banner
            assert not any(f"{a['idx']}:" in banner for a in first)
            await pilot.press("2", "enter")
            await pilot.pause()
            notices = [n.message for n in app._notifications]
            now = ", ".join(
                f"{n}: {v}" for n, v in enumerate(["False", "False", "True"][: len(first)], 1)
            )
            assert f"Previous answer changed to: {now}" in notices, notices


def eleven_point_task(folder) -> str:
    """STS-B's file with a 0-10 scale: a custom task whose top point is two keystrokes."""
    spec = (Path(__file__).parents[2] / "tasks" / "glue" / "stsb.toml").read_text()
    head, _, tail = spec.partition("[scale]")
    anchors = "".join(f'"{v}" = "Point {v} of 10"\n' for v in range(11))
    rest = tail[tail.index("[source]") :].replace("clip = [0.0, 5.0]", "clip = [0.0, 10.0]")
    path = folder / "rate11.toml"
    path.write_text(
        head.replace('aliases = ["STS-B", "STSB"]\n', "").replace('"glue"', '"custom"', 1)
        + f"[scale]\nmin = 0\nmax = 10\n\n[scale.anchors]\n{anchors}\n{rest}"
    )
    return str(path)


class TestScalePastNine:
    """A 0-10 rating scale: 10 is two keystrokes, 1 then 0; 1 alone is 1 then Enter."""

    async def test_ten_is_typed_as_one_then_zero_and_one_with_enter(self, workspace, tmp_path):
        """The bar showed " 10 " for a key no keystroke gives: 10 was the mouse's alone."""
        task = eleven_point_task(tmp_path)
        study = build_study(workspace.engine, tmp_path, task, test=STSB_TEST, overrides=QUICK_TEST)
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with app.run_test(size=(100, 40)) as pilot:
            await start(pilot)
            bar = " ".join(static_text(app.screen.query_one("#answer-bar", Static)).split())
            assert "10 type 1 then 0" in bar and "1 type 1 then Enter" in bar, bar
            first = app.screen.item.item_id
            await pilot.press("1")
            await pilot.pause()
            cue = static_text(app.screen.query_one("#entity-cue", Static))
            assert "Enter answers 1" in cue and "for 10" in cue, cue
            assert app.screen.item.item_id == first  # waiting: 1, or the 1 of 10
            await pilot.press("0")
            await pilot.pause()
            second = app.screen.item.item_id
            assert second != first
            await pilot.press("1", "escape")  # cleared: still the same item
            await pilot.pause()
            assert not app.screen.query_one("#entity-cue", Static).display
            assert app.screen.item.item_id == second
            await pilot.press("1", "enter")
            await pilot.pause()
        answered = [(label.item_id, label.value) for label in labels(workspace.engine)]
        assert answered == [(first, 10.0), (second, 1.0)], answered


class TestClickAnswers:
    """A click or a tap on an answer in the answer bar answers, as its key does."""

    async def test_clicking_an_answer_stores_it(self, workspace, tmp_path):
        from annotate.tui.widgets.answer_bar import AnswerBar

        study = rte_study(workspace, tmp_path)
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            bar = app.screen.query_one(AnswerBar)
            assert static_text(bar).splitlines()[1].startswith(" 2  Not entailment")
            answered = app.screen.item.item_id
            await pilot.click(AnswerBar, offset=(5, 1))  # RTE's options get a line each
            await pilot.pause()
            assert app.screen.item.item_id != answered
        [label] = labels(workspace.engine)
        assert (label.item_id, label.value) == (answered, "not_entailment")


class TestHostileText:
    """A premise full of terminal escapes is shown with visible placeholders, and the rest of
    the screen is intact."""

    async def test_escapes_in_a_premise_are_shown_not_obeyed(self, workspace, tmp_path):
        hostile = "Clear\x1b[2J\x1b[H title\x1b]2;PWNED\x07 red\x1b[31m bidi\u202eevil [CLS]"
        rows = [{**row, "premise": hostile} for row in RTE_TEST]
        study = build_study(
            workspace.engine,
            tmp_path,
            "superglue/rte",
            dev=fx.SG_RTE,
            test=rows,
            overrides=QUICK_TEST,
        )
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with app.run_test(size=(100, 30)) as pilot:
            await start(pilot)
            shown = screen_text(app)
        assert "Clear␛[2J␛[H title␛]2;PWNED␇ red␛[31m bidi⟨RLO⟩evil [CLS]" in " ".join(
            shown.split()
        )
        assert "\x1b" not in shown and "\u202e" not in shown
