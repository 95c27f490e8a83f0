"""Text from data and people is shown exactly as written, never parsed as markup, and the keys
still record labels (DESIGN.md invariant 6)."""

from __future__ import annotations

from annotate.tui.app import create_app
from annotate.tui.screens.item import ItemScreen
from annotate.tui.screens.phases import FinishedScreen
from tests.tui.support import (
    QUICK_TEST,
    all_static_text,
    build_study,
    labels,
    screen_text,
    start,
)

MARKUP_PAIRS = [
    ("[CLS] the [MASK] sat [SEP]", "stray [/foo] tag"),
    ("[@click=app.quit]x[/]", '[link="https://x.y"]z[/link]'),
    (
        "Emoji 😀 👩‍🔬 and right-to-left: שלום עולם · مرحبا بالعالم",
        "[bold]not bold[/bold] [sic] \\[x]",
    ),
]

SENTENCE = "The [sic] committee met again [/foo] and read the [CLS] minutes aloud. "
LONG_PASSAGE = (SENTENCE * 80)[: 5000 - len(" END-OF-PASSAGE")] + " END-OF-PASSAGE"


async def test_markup_in_items_and_names_is_shown_verbatim(workspace, tmp_path):
    rows = [{"premise": p, "hypothesis": h, "idx": n} for n, (p, h) in enumerate(MARKUP_PAIRS)]
    study = build_study(
        workspace.engine,
        tmp_path,
        "superglue/rte",
        test=rows,
        overrides=QUICK_TEST,
        name="[/s] study",
    )
    annotator = "[b]ana[/b]"
    app = create_app(workspace.engine, study, annotator, create_annotator=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await start(pilot)
        for n in range(len(MARKUP_PAIRS)):
            screen = app.screen
            assert isinstance(screen, ItemScreen)
            premise, hypothesis = screen.item.fields["premise"], screen.item.fields["hypothesis"]
            shown, whole = screen_text(app), all_static_text(app)
            assert f"[/s] study · {annotator}" in shown  # header
            for text in (premise, hypothesis):
                assert text in whole  # after Textual processed it: nothing parsed away
            if "right-to-left" not in premise:  # wide and RTL glyphs are drawn cell by cell
                assert premise in shown and hypothesis in shown
            await pilot.click("#field-premise")  # the [@click=…] text is not a link
            assert app.is_running
            await pilot.press("1")
            assert len(labels(workspace.engine)) == n + 1
        assert isinstance(app.screen, FinishedScreen)
    assert {label.value for label in labels(workspace.engine)} == {"entailment"}


async def test_long_passage_scrolls_and_markup_in_choices(workspace, tmp_path):
    boolq = [{"question": "was the [MASK] read [/foo]", "passage": LONG_PASSAGE, "idx": 0}]
    multirc = [
        {
            "idx": 0,
            "passage": {
                "text": LONG_PASSAGE,
                "questions": [
                    {
                        "question": "Which [CLS] token?",
                        "idx": 0,
                        "answers": [
                            {"text": "[/foo] the end", "idx": 0},
                            {"text": "[@click=app.quit]x[/]", "idx": 1},
                        ],
                    }
                ],
            },
        }
    ]
    assert len(LONG_PASSAGE) == 5000
    for task, rows, keys in (
        ("superglue/boolq", boolq, ["2"]),
        ("superglue/multirc", multirc, ["1", "2", "enter"]),
    ):
        study = build_study(
            workspace.engine, tmp_path, task, test=rows, overrides=QUICK_TEST, name=task
        )
        app = create_app(workspace.engine, study, "ana", create_annotator=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await start(pilot)
            assert LONG_PASSAGE in all_static_text(app)
            assert "END-OF-PASSAGE" not in screen_text(app)
            question = rows[0].get("question") or "Which [CLS] token?"
            assert question in screen_text(app)  # pinned below the passage
            if task == "superglue/multirc":
                assert "[/foo] the end" in screen_text(app)
                assert "[@click=app.quit]x[/]" in screen_text(app)
            if task == "superglue/boolq":
                await pilot.press(*["pagedown"] * 10)  # ~70 lines of passage, ~10 in view
                assert "END-OF-PASSAGE" in screen_text(app)
                assert question in screen_text(app)  # still in view
            await pilot.press(*keys)
            assert isinstance(app.screen, FinishedScreen)
    values = [label.value for label in labels(workspace.engine)]
    assert values == ["false", {"0": "1", "1": "0"}]
