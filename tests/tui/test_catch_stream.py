"""Catch items look like test items on the annotator's screen, before and after the answer:
the status line counts them with the test items, so its count moves on after every answer."""

from __future__ import annotations

import re

from textual.widgets import Static

from annotate.protocol.session import AnnotatorSession, Phase
from annotate.tui.app import create_app
from annotate.tui.screens.feedback import FeedbackScreen
from annotate.tui.screens.item import ItemScreen
from annotate.tui.screens.phases import FinishedScreen, PausedScreen
from tests.engine_helpers import catch_study, rte_study
from tests.tui.support import screen_text, start, static_text, wait_until


def right_answer(source_id: str) -> str:
    return "entailment" if int(source_id) % 2 == 0 else "not_entailment"


def trained(engine, study: str, name: str) -> None:
    """`name` answers every training item right and is admitted."""
    session = AnnotatorSession.open(engine, study, name, create_annotator=True)
    while session.phase() is Phase.TRAINING:
        item = session.next_item()
        session.submit(item, right_answer(item.source_id))
    assert session.phase() is Phase.TEST


def stream_count(app) -> tuple[int, int]:
    text = static_text(app.screen.query_one("#status-phase", Static))
    done, total = re.search(r"Test (\d+)/(\d+)", text).groups()
    return int(done), int(total)


async def test_the_count_moves_on_after_a_catch_answer_as_after_a_test_answer(workspace, tmp_path):
    # 6 dev items, all training items: they are the catch pool (6 catch items at most)
    rte_study(workspace.engine, tmp_path, name="c", train=6, test=12, catch_rate=0.4)
    trained(workspace.engine, "c", "ana")
    app = create_app(workspace.engine, "c", "ana")
    kinds = []
    async with app.run_test(size=(100, 30)) as pilot:
        await start(pilot)
        done, total = stream_count(app)
        assert done == 0 and total > 12  # the test items and the catch items due among them
        while isinstance(app.screen, ItemScreen):
            item = app.screen.item
            kinds.append("catch" if int(item.source_id) < 1000 else "test")  # test ids 1000..
            await pilot.press("1")
            await wait_until(
                pilot,
                lambda answered=item: (
                    not isinstance(app.screen, ItemScreen) or app.screen.item is not answered
                ),
                "the next item",
            )
            if isinstance(app.screen, ItemScreen):
                assert stream_count(app) == (len(kinds), total)  # one more, whatever it was
        assert isinstance(app.screen, FinishedScreen)
        # every planned item came: the count ends at its total
        assert len(kinds) == total and kinds.count("test") == 12 and "catch" in kinds
        assert f"You labelled {total} test items" in screen_text(app)


def wrong_key(source_id: str) -> str:
    return "2" if right_answer(source_id) == "entailment" else "1"


async def test_a_refresher_round_is_announced_and_counted_as_its_own(workspace, tmp_path):
    # catch_action "pause": five wrong catch answers send the annotator back to 3 training
    # items with feedback; the screen says so and counts the round, then the test stream goes on
    catch_study(workspace.engine, tmp_path, catch_rate=0.4, catch_action="pause")
    trained(workspace.engine, "c", "ana")
    app = create_app(workspace.engine, "c", "ana")
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await start(pilot)
        while isinstance(app.screen, ItemScreen) and not app.screen.item.refresher:
            stream = stream_count(app)
            item = app.screen.item
            await pilot.press(wrong_key(item.source_id))  # every answer wrong
            await wait_until(
                pilot,
                lambda answered=item: getattr(app.screen, "item", None) is not answered,
                "the next item",
            )
        assert isinstance(app.screen, ItemScreen), "the wrong catch answers must bring a refresher"
        status = static_text(app.screen.query_one("#status-phase", Static))
        assert status.startswith("Refresher 0/3")
        await wait_until(pilot, lambda: bool(app.screen.query("Toast")), "the notice")
        toast = " ".join(str(t.render()) for t in app.screen.query("Toast"))
        assert "A short refresher: 3 training items with feedback" in toast
        for n in range(1, 4):
            right = app.screen.item.source_id
            await pilot.press("1" if right_answer(right) == "entailment" else "2")
            await wait_until(pilot, lambda: isinstance(app.screen, FeedbackScreen), "feedback")
            text = screen_text(app)
            assert f"Refresher {n}/3" in text and "✓ Right" in text  # feedback, counted
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, ItemScreen), "the next item")
        # back to the test stream, its count where it was plus the answer that brought the round
        done, total = stream_count(app)
        assert (done, total) == (stream[0] + 1, stream[1])
        assert not app.screen.item.refresher


def trained_on_a_pausing_study(engine, tmp_path):
    """ana's app, her training done, on a study of two training items whose catch items send
    a drifting annotator to a refresher and then pause them."""
    catch_study(
        engine, tmp_path, catch_rate=0.4, catch_action="pause", training_items=2, gate_min_items=2
    )
    trained(engine, "c", "ana")
    return create_app(engine, "c", "ana")


async def test_a_short_last_refresher_round_says_how_many_items_it_has(workspace, tmp_path):
    """Two training items, so the refresher round has two: the notice and the status line say
    2, not the 3 a full round has (the annotator was promised a third that never came, then
    paused)."""
    app = trained_on_a_pausing_study(workspace.engine, tmp_path)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await start(pilot)
        while isinstance(app.screen, ItemScreen) and not app.screen.item.refresher:
            item = app.screen.item
            await pilot.press(wrong_key(item.source_id))
            await wait_until(
                pilot,
                lambda answered=item: getattr(app.screen, "item", None) is not answered,
                "the next item",
            )
        assert isinstance(app.screen, ItemScreen), "the wrong catch answers must bring a refresher"
        status = static_text(app.screen.query_one("#status-phase", Static))
        assert status.startswith("Refresher 0/2"), status
        await wait_until(pilot, lambda: bool(app.screen.query("Toast")), "the notice")
        toast = " ".join(str(t.render()) for t in app.screen.query("Toast"))
        assert "A short refresher: 2 training items with feedback" in toast
        for n in range(1, 3):
            right = app.screen.item.source_id
            await pilot.press("1" if right_answer(right) == "entailment" else "2")
            await wait_until(pilot, lambda: isinstance(app.screen, FeedbackScreen), "feedback")
            assert f"Refresher {n}/2" in screen_text(app)
            await pilot.press("enter")
            await pilot.pause()
        assert isinstance(app.screen, PausedScreen)


async def test_a_paused_annotator_who_returns_is_told_so_first(workspace, tmp_path):
    """Paused (no refresher item left), ana quits and comes back: the pause is the first
    screen, not "Welcome back … Press Enter to start" and then the pause."""
    app = trained_on_a_pausing_study(workspace.engine, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await start(pilot)
        while isinstance(app.screen, ItemScreen):
            item = app.screen.item
            right = "1" if right_answer(item.source_id) == "entailment" else "2"
            await pilot.press(right if item.refresher else wrong_key(item.source_id))
            if item.refresher:
                await wait_until(pilot, lambda: isinstance(app.screen, FeedbackScreen), "feedback")
                await pilot.press("enter")
            await wait_until(
                pilot,
                lambda answered=item: getattr(app.screen, "item", None) is not answered,
                "the next screen",
            )
        assert isinstance(app.screen, PausedScreen)
    back = create_app(workspace.engine, "c", "ana")
    async with back.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert isinstance(back.screen, PausedScreen)
        assert "Press Enter to start" not in screen_text(back)
