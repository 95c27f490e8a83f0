"""A crowd study in the terminal app (issue 22): consent, the researcher's guidelines, a batch of
test items, the exit survey and the completion code; and two terminal windows of one annotator
on the same item, where the newer keeps the answer and the older says so."""

from __future__ import annotations

from sqlmodel import Session, select

from annotate.presentation.answer_keys import COME_BACK
from annotate.presentation.closing import words_on_leaving
from annotate.protocol import crowd
from annotate.protocol.crowd_config import CrowdConfig, with_codes
from annotate.store.models import SurveyAnswer, Visit
from annotate.tui.app import create_app
from annotate.tui.screens.crowd import ConsentScreen, ContinuedScreen, ExitScreen, SurveyScreen
from annotate.tui.screens.guidelines import GuidelinesScreen
from annotate.tui.screens.item import ItemScreen
from tests import fixtures as fx
from tests.tui.support import (
    QUICK_TEST,
    all_static_text,
    build_study,
    labels,
    wait_until,
    without_labels,
)

CODES = {"completed": "DONE1234", "no_consent": "NOCONS11"}
SURVEY = [
    {"name": "difficulty", "prompt": "How hard were the items?", "kind": "choice",
     "choices": ["easy", "about right", "hard"]},
    {"name": "remarks", "prompt": "Anything we should know?", "max_length": 200},
]  # fmt: skip


def crowd_rte(engine, tmp_path, *, batch: int = 2, **settings) -> str:
    study = build_study(
        engine,
        tmp_path,
        "superglue/rte",
        dev=fx.SG_RTE,
        test=without_labels(fx.SG_RTE),
        overrides={**QUICK_TEST, "max_test_items_per_annotator": batch},
    )
    config = {
        "platform": "link",
        "codes": CODES,
        "consent": "You may stop at any time. [b]Your answers[/b] are kept without your name.",
        "guidelines": "This is a paid study: about five minutes.",
        "survey": SURVEY,
        **settings,
    }
    crowd.set_config(engine, study, with_codes(CrowdConfig.model_validate(config)))
    return study


async def test_i_do_not_agree_shows_the_no_consent_code(workspace, tmp_path):
    study = crowd_rte(workspace.engine, tmp_path)
    app = create_app(workspace.engine, study, "ana", create_annotator=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ConsentScreen), "consent")
        assert "[b]Your answers[/b]" in all_static_text(app)  # shown as typed, not as markup
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, ExitScreen), "exit")
        text = all_static_text(app)
        assert "did not agree" in text and "NOCONS11" in text
    assert labels(workspace.engine) == []
    with Session(workspace.engine) as s:
        assert s.exec(select(Visit.outcome)).all() == ["no_consent"]


async def test_consent_guidelines_batch_survey_and_the_completion_code(workspace, tmp_path):
    study = crowd_rte(workspace.engine, tmp_path)
    app = create_app(workspace.engine, study, "ana", create_annotator=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ConsentScreen), "consent")
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, GuidelinesScreen), "guidelines")
        assert "This is a paid study" in all_static_text(app)
        await pilot.press("enter")
        for _ in range(2):  # the batch: two of the three test items
            await wait_until(pilot, lambda: isinstance(app.screen, ItemScreen), "an item")
            await pilot.press("1")
        await wait_until(pilot, lambda: isinstance(app.screen, SurveyScreen), "the survey")
        assert "How hard were the items?" in all_static_text(app)
        await pilot.press("3")
        await wait_until(
            pilot, lambda: "Anything we should know" in all_static_text(app), "question 2"
        )
        await pilot.press(*"fine", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ExitScreen), "exit")
        text = all_static_text(app)
        assert "You have finished your items" in text and "DONE1234" in text
    assert len(labels(workspace.engine, "test")) == 2
    with Session(workspace.engine) as s:
        answers = {(a.question, a.answer) for a in s.exec(select(SurveyAnswer))}
        assert answers == {("difficulty", "hard"), ("remarks", "fine")}
        assert s.exec(select(Visit.outcome)).all() == ["completed"]
    again = create_app(workspace.engine, study, "ana")  # opened again: the same code, at once
    async with again.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(again.screen, ExitScreen), "exit again")
        assert "DONE1234" in all_static_text(again)


async def test_two_terminal_windows_on_one_item_keep_the_newer_answer(workspace, tmp_path):
    study = crowd_rte(workspace.engine, tmp_path, batch=3, consent=None, survey=[])
    older = create_app(workspace.engine, study, "ana", create_annotator=True)
    async with older.run_test(size=(80, 24)) as first:
        await first.press("enter")
        await wait_until(first, lambda: isinstance(older.screen, ItemScreen), "older's item")
        newer = create_app(workspace.engine, study, "ana")
        async with newer.run_test(size=(80, 24)) as second:
            await second.press("enter")
            await wait_until(second, lambda: isinstance(newer.screen, ItemScreen), "newer's item")
            assert newer.screen.item.item_id == older.screen.item.item_id
            await second.press("2")  # not entailment, in the newer window
            await wait_until(
                second, lambda: len(labels(workspace.engine, "test")) == 1, "the newer answer"
            )
            await first.press("f", *"odd wording", "enter")  # a flag with its comment
            await wait_until(first, lambda: isinstance(older.screen, ItemScreen), "flagged")
            await first.press("1")  # entailment, in the older window: refused
            await wait_until(first, lambda: isinstance(older.screen, ContinuedScreen), "refusal")
            said = " ".join(all_static_text(older).split())
            assert "continued in another window" in said
            # What was dropped is said, not covered by "every answer given here is saved".
            assert "The answer you just gave here (Entailment" in said
            assert "and its comment “odd wording” were not saved" in said
            assert isinstance(newer.screen, ItemScreen)  # the newer goes on with its next item
            # the older's last words send ana to the newer window, not to "run it again later"
            words = words_on_leaving(
                "ana", older.session, study, COME_BACK, elsewhere=older.continued_elsewhere
            )
            assert (
                words[1] == "You went on in another window, which holds your place: continue there."
            )
    assert [label.value for label in labels(workspace.engine, "test")] == ["not_entailment"]
