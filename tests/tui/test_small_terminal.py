"""At 60x20 (a split pane, a small laptop window) the passage keeps rows to be read under a
long list of candidates or entities, and every answer key's text is in view, whole."""

from __future__ import annotations

from textual.containers import VerticalScroll

from annotate.tui.app import create_app
from annotate.tui.screens.feedback import FeedbackScreen
from annotate.tui.screens.help import HelpScreen
from annotate.tui.screens.item import ItemScreen
from tests import fixtures as fx
from tests.tui.support import ONE_TRAINING_ITEM, build_study, screen_lines, screen_text, start
from tests.tui.task_data import CB_DEV, CB_TEST, STSB_TEST, entity_spans

SMALL = (60, 20)
ARTICLE = " ".join(
    f"Councillor Rana Patel {n} spoke at the harbour meeting in Eastport about the new ferry."
    for n in range(12)
)
NAMES = [
    "Rana Patel",
    "Eastport",
    "Harbour Board",
    "Lena Moss",
    "Westfield",
    "Coast Guard",
    "Ivo Stark",
    "Northgate",
    "Ferry Union",
    "Mia Toft",
    "Southby",
    "Port Office",
    "Ada Quill",
]
ENTITY_TEXT = ARTICLE + " " + ", ".join(NAMES) + ".\n@highlight\nFerry plan debated"


def record_rows(start_idx: int, label: bool) -> list[dict]:
    row = {
        "source": "Test",
        "passage": {"text": ENTITY_TEXT, "entities": entity_spans(ENTITY_TEXT, NAMES)},
        "qas": [{"query": "@placeholder asked the board to delay the vote.", "idx": start_idx}],
        "idx": start_idx,
    }
    if label:
        row["qas"][0]["answers"] = [{"start": 22, "end": 31, "text": "Rana Patel"}]
    return [row]


def multirc_rows(start_idx: int, label: bool) -> list[dict]:
    answers = [
        {"text": f"Candidate answer number {n}", "idx": 100 * start_idx + n} for n in range(10)
    ]
    if label:
        for a in answers:
            a["label"] = 1
    question = {"question": "Who spoke at the meeting?", "idx": start_idx, "answers": answers}
    return [
        {
            "idx": start_idx,
            "version": 1.1,
            "passage": {"text": ARTICLE, "questions": [question]},
        }
    ]


def one_item_app(workspace, tmp_path, task: str, dev, test):
    """ana's terminal app on a study of `task` with one training and one test item."""
    study = build_study(
        workspace.engine, tmp_path, task, dev=dev, test=test, overrides=ONE_TRAINING_ITEM
    )
    return create_app(workspace.engine, study, "ana", create_annotator=True)


def body_rows(app) -> int:
    return app.screen.query_one("#body", VerticalScroll).size.height


async def test_record_article_keeps_rows_above_thirteen_entities(workspace, tmp_path):
    """ReCoRD: the article keeps at least four rows under the sentence and the entity list,
    and the sentence with @placeholder stays whole in view."""
    app = one_item_app(
        workspace, tmp_path, "superglue/record", record_rows(1, True), record_rows(2, False)
    )
    async with app.run_test(size=SMALL) as pilot:
        await start(pilot)
        assert isinstance(app.screen, ItemScreen)
        assert body_rows(app) >= 5  # the heading and four lines of the article
        assert "asked the board to delay the vote." in screen_text(app)
        assert "Councillor Rana Patel 0 spoke" in screen_text(app)


async def test_multirc_paragraph_keeps_rows_above_ten_candidates(workspace, tmp_path):
    app = one_item_app(
        workspace, tmp_path, "superglue/multirc", multirc_rows(1, True), multirc_rows(2, False)
    )
    async with app.run_test(size=SMALL) as pilot:
        await start(pilot)
        assert isinstance(app.screen, ItemScreen)
        assert body_rows(app) >= 5
        await pilot.press(*["1"] * 10, "enter")
        await pilot.pause()
        assert isinstance(app.screen, FeedbackScreen)  # the feedback leaves it rows too
        assert body_rows(app) >= 3
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ItemScreen)  # the test item's new list fits as well
        assert body_rows(app) >= 5


async def test_cb_scale_lines_up_in_the_width_it_has(workspace, tmp_path):
    """CB's seven points in columns that fit 60 columns: no point broken over two lines, no
    empty row under them."""
    app = one_item_app(workspace, tmp_path, "superglue/cb", CB_DEV, CB_TEST)
    async with app.run_test(size=SMALL) as pilot:
        await start(pilot)
        await pilot.pause()
        lines = screen_lines(app)
        bar = lines[lines.index(next(line for line in lines if " 1  Definitely true" in line)) :]
        shown = "\n".join(bar)
        for point in ("Leaning true", "Probably false", "Definitely false", "Can't tell"):
            assert point in shown, shown
        keys = bar[: next(n for n, line in enumerate(bar) if "Flag / comment" in line)]
        assert all(line.strip() for line in keys), shown


async def test_stsb_anchors_are_all_in_view(workspace, tmp_path):
    app = one_item_app(workspace, tmp_path, "glue/stsb", fx.STSB_DEV, STSB_TEST)
    async with app.run_test(size=SMALL) as pilot:
        await start(pilot)
        shown = screen_text(app)
        assert "Completely different" in shown
        assert "5  Completely equivalent: they mean the same thing" in shown


async def test_help_fits_the_window_and_its_key_lines_are_whole(workspace, tmp_path):
    """`?` at 60x20: the help's box fits the window (its frame and close line in view), and
    every key's line wraps rather than running past the right edge."""
    app = one_item_app(workspace, tmp_path, "glue/stsb", fx.STSB_DEV, STSB_TEST)
    async with app.run_test(size=SMALL) as pilot:
        await start(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        box = app.screen.query_one("#help-dialog").region
        assert box.x >= 0 and box.y >= 0, box
        assert box.right <= SMALL[0] and box.bottom <= SMALL[1], box
        keys = app.screen.query_one("#help-keys").region
        assert keys.right <= box.right, (keys, box)  # wrapped inside the box, not cut
        shown = " ".join(" ".join(line.split()) for line in screen_lines(app))
        assert "(sent with your answer)" in shown.replace(" █ █ ", " "), shown
        assert "closes this help" in shown


async def test_a_short_passage_is_not_said_to_continue(workspace, tmp_path):
    """CB's one-line premise at 60x20: the passage is all in view, so the border above the
    hypothesis has no "passage continues: PgDn" (it was read while the scale's rows were
    still being laid out, and stayed)."""
    app = one_item_app(workspace, tmp_path, "superglue/cb", CB_DEV, CB_TEST)
    async with app.run_test(size=SMALL) as pilot:
        await start(pilot)
        await pilot.pause()
        assert isinstance(app.screen, ItemScreen)
        assert app.screen.query_one("#body", VerticalScroll).max_scroll_y == 0
        assert "passage continues" not in screen_text(app)


async def test_cb_scale_keeps_each_key_beside_its_point_in_the_guidelines_and_help(
    workspace, tmp_path
):
    """CB at 60x20: the guidelines' and the help's key lists put the seven points in columns
    that fit the window, each key on the line of its point ("3" was left at the end of one
    line and "Leaning true" began the next)."""
    app = one_item_app(workspace, tmp_path, "superglue/cb", CB_DEV, CB_TEST)
    points = ["Definitely true", "Probably true", "Leaning true", "Can't tell"]
    points += ["Leaning false", "Probably false", "Definitely false"]
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        body = app.screen.query_one("#body", VerticalScroll)
        body.scroll_end(animate=False)
        await pilot.pause()
        shown = screen_text(app)
        for n, point in enumerate(points, 1):
            assert f" {n}  {point}" in shown, shown
        await start(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        shown = screen_text(app)
        for n, point in enumerate(points, 1):
            assert f" {n}  {point}" in shown, shown
