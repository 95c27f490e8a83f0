"""Catch items look like test items on the annotator's screen, before and after the answer:
the status line counts them with the test items, so its count moves on after every answer."""

from __future__ import annotations

import re

from textual.widgets import Static

from annotate.protocol.session import AnnotatorSession, Phase
from annotate.tui.app import create_app
from annotate.tui.screens.item import ItemScreen
from annotate.tui.screens.phases import FinishedScreen
from tests.engine_helpers import rte_study
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
