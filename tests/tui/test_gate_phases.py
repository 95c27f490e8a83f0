"""A refused annotator who comes back is told so at once, not invited to start (issue 15)."""

from __future__ import annotations

from annotate.tui.app import create_app
from annotate.tui.screens.guidelines import GuidelinesScreen
from annotate.tui.screens.phases import RejectedScreen
from tests import fixtures as fx
from tests.tui.support import build_study, screen_text, start, without_labels


def wrong_key(app) -> str:
    """The key of the wrong answer to the training item on screen (tests know the gold)."""
    fields = app.screen.item.fields
    gold = next(r["label"] for r in fx.SG_RTE if r["premise"] == fields["premise"])
    return "2" if gold == "entailment" else "1"


async def test_a_refused_annotator_who_returns_sees_the_refusal_first(workspace, tmp_path):
    study = build_study(
        workspace.engine,
        tmp_path,
        "superglue/rte",
        dev=fx.SG_RTE,
        test=without_labels(fx.SG_RTE),
        overrides={"training_items": 2, "gate_min_items": 2, "gate_threshold": 1.0,
                   "test_sample": 3, "annotators_per_item": 1},
    )  # fmt: skip
    first = create_app(workspace.engine, study, "ana", create_annotator=True)
    async with first.run_test(size=(80, 24)) as pilot:
        await start(pilot)
        for _ in range(2):
            await pilot.press(wrong_key(first), "enter")
        assert isinstance(first.screen, RejectedScreen)
    back = create_app(workspace.engine, study, "ana")
    async with back.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(back.screen, RejectedScreen)
        assert not isinstance(back.screen, GuidelinesScreen)
        shown = screen_text(back)
        assert "Thank you for your work" in shown
        assert "Press Enter to start" not in shown and "finished training" not in shown
        await pilot.press("enter")  # nothing to start
        assert isinstance(back.screen, RejectedScreen)
