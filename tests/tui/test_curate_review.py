"""Second opinions in the curation app: the reviewer's screen is blind to the author's label,
tags and note; reviews produce agreement figures and a queue the author or an adjudicator
settles."""

from __future__ import annotations

import pytest
from textual.widgets import Input, OptionList

from annotate.curation.examples import (
    edit_example,
    example_history,
    get_example,
    save_pair,
    set_retired,
)
from annotate.curation.review import (
    Opinion,
    ReviewFilter,
    disagreement_queue,
    example_decisions,
    example_reviews,
    settle,
    submit_review,
)
from annotate.curation.sets import create_set
from annotate.curation.stats import set_statistics
from annotate.curation.validation import PairDraft
from annotate.tui.curate.app import create_curate_app
from annotate.tui.curate.screens.adjudicate import AdjudicateScreen
from annotate.tui.curate.screens.common import opinions_text
from annotate.tui.curate.screens.confirm import ConfirmDiscard
from annotate.tui.curate.screens.done import NothingLeftScreen
from annotate.tui.curate.screens.review import ReviewScreen
from annotate.tui.curate.widgets.label_choice import LabelChoice
from annotate.tui.curate.widgets.tag_picker import TagPicker
from tests.tui.support import all_static_text, screen_text

SIZE = (100, 30)
SECRET_NOTE = "NOTE-ONLY-THE-AUTHOR-WROTE"


@pytest.fixture
def engine(workspace):
    engine = workspace.engine
    create_set(engine, "s")
    save_pair(
        engine,
        "s",
        "ana",
        PairDraft(
            premise="Ana gave Ben the map.",
            hypothesis="Ana gave the map to Ben.",
            forward="entailment",
            backward="entailment",
            tags=["Datives"],
            domain="Artificial",
            note=SECRET_NOTE,
        ),
    )
    return engine


def notifications(app) -> list[str]:
    """Every message the app notifies from now on (toasts come and go: the record stays)."""
    said: list[str] = []
    real = app.notify

    def notify(message, *args, **kwargs):
        said.append(str(message))
        return real(message, *args, **kwargs)

    app.notify = notify
    return said


def tag_list_text(app) -> str:
    tag_list = app.screen.query_one("#tag-list", OptionList)
    return "\n".join(str(option.prompt) for option in tag_list.options)


class TestBlindReview:
    """A second curator reviews the pair without seeing the author's choices."""

    async def test_the_reviewer_never_sees_the_authors_label_tags_or_note(self, engine):
        app = create_curate_app(engine, "s", "ben", review=True)
        async with app.run_test(size=SIZE) as pilot:
            for example_id in (1, 2):
                screen = app.screen
                assert isinstance(screen, ReviewScreen)
                assert screen.example.id == example_id
                assert not hasattr(screen.example, "label") and not hasattr(screen.example, "tags")
                shown, whole = screen_text(app), all_static_text(app)
                assert "Ana gave Ben the map." in shown
                for secret in (SECRET_NOTE, "ana", "Artificial"):
                    assert secret not in whole and secret not in shown
                assert screen.query_one("#label", LabelChoice).value is None
                assert "(not chosen)" in shown  # no label comes pre-chosen
                if example_id == 2:  # 26.12: the pair's tags were given with example 1
                    assert not screen.query(TagPicker)
                    assert "you gave them with example 1" in " ".join(shown.split())
                    await pilot.press("2", "ctrl+s")
                    await pilot.pause()
                    continue
                assert screen.query_one(TagPicker).selected == []
                assert "[x]" not in tag_list_text(app)  # no tag comes pre-ticked
                assert "No tag chosen yet" in shown
                # The reviewer's own opinion: neutral, with another tag.
                await pilot.press("2", "tab", *"core", "enter")
                await pilot.press("ctrl+s")
                await pilot.pause()
            assert isinstance(app.screen, NothingLeftScreen)
            assert "Nothing left to review" in all_static_text(app)
        assert app.reviews_done == 2
        queue = disagreement_queue(engine, "s")
        assert [(e.example.id, e.disputed) for e in queue] == [
            (1, ["label", "tags"]),
            (2, ["label"]),  # the pair's tags are disputed once, on example 1
        ]

    async def test_a_review_needs_a_label_and_a_tag_and_can_be_skipped(self, engine):
        app = create_curate_app(engine, "s", "ben", review=True)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+s")
            await pilot.pause()
            problems = all_static_text(app)
            assert "choose a label" in problems and "at least one phenomenon tag" in problems
            assert app.focused.id == "label"
            await pilot.press("ctrl+n")  # skip: the next example, this one comes back next time
            await pilot.pause()
            assert app.screen.example.id == 2
            await pilot.press("ctrl+n")
            await pilot.pause()
            assert isinstance(app.screen, NothingLeftScreen)
        assert app.reviews_done == 0
        assert create_curate_app(engine, "s", "ben", review=True).desk.next_blind().id == 1

    async def test_sentences_edited_while_on_screen_are_shown_before_a_review_is_stored(
        self, engine
    ):
        app = create_curate_app(engine, "s", "ben", review=True)
        said = notifications(app)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            assert screen.example.id == 1 and "Ana gave the map to Ben." in screen_text(app)
            edit_example(engine, "s", 1, "cara", {"hypothesis": "Ana lent the map to Ben."})
            await pilot.press("1", "tab", *"dat", "enter", "ctrl+s")  # judged the old sentences
            await pilot.pause()
            assert app.screen is screen and app.reviews_done == 0
            assert said == ["example 1 changed since you opened it (now version 2): look again"]
            assert example_reviews(engine, "s", 1) == []
            assert screen.example.version == 2
            assert "Ana lent the map to Ben." in screen_text(app)
            assert screen.query_one("#label", LabelChoice).value is None  # judged afresh
            assert screen.query_one(TagPicker).selected == []
            assert app.focused.id == "label"
            await pilot.press("2", "tab", *"dat", "enter", "ctrl+s")
            await pilot.pause()
            assert isinstance(app.screen, ReviewScreen) and app.screen.example.id == 2
        [review] = example_reviews(engine, "s", 1)
        assert (review.label, review.example_version) == ("neutral", 2)
        assert not get_example(engine, "s", 1).label_unchecked

    async def test_an_example_retired_while_on_screen_is_left_for_the_next(self, engine):
        app = create_curate_app(engine, "s", "ben", review=True)
        said = notifications(app)
        async with app.run_test(size=SIZE) as pilot:
            assert app.screen.example.id == 1
            set_retired(engine, "s", 1, "ana", True, "duplicate")  # meanwhile, from the CLI
            await pilot.press("1", "tab", *"dat", "enter", "ctrl+s")
            await pilot.pause()
            assert said == [
                "example 1 was retired since you opened it and is no longer yours to review"
            ]
            assert isinstance(app.screen, NothingLeftScreen)  # its reverse went with it
        assert app.reviews_done == 0 and example_reviews(engine, "s", 1) == []

    async def test_ctrl_q_asks_before_a_chosen_label_is_lost(self, engine):
        app = create_curate_app(engine, "s", "ben", review=True)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("2", "ctrl+q")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmDiscard) and app.is_running
            said = all_static_text(app)
            assert "Quit without saving?" in said and "Your review is not saved" in said
            await pilot.press("n")
            await pilot.pause()
            assert isinstance(app.screen, ReviewScreen)
            assert app.screen.query_one("#label", LabelChoice).value == "neutral"
            await pilot.press("ctrl+q", "y")
            await pilot.pause()
        assert not app.is_running and example_reviews(engine, "s", 1) == []

    async def test_ctrl_q_with_nothing_chosen_quits_at_once(self, engine):
        app = create_curate_app(engine, "s", "ben", review=True)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+q")
            await pilot.pause()
        assert not app.is_running

    async def test_an_author_has_nothing_of_their_own_to_review(self, engine):
        app = create_curate_app(engine, "s", "ana", review=True)
        async with app.run_test(size=SIZE) as pilot:
            assert isinstance(app.screen, NothingLeftScreen)
            await pilot.press("q")
        assert not app.is_running


class TestAdjudication:
    """Two curators' reviews give agreement figures and a queue; an adjudicator settles it."""

    async def test_two_reviews_then_the_adjudicator_settles_with_history(self, engine):
        submit_review(engine, "s", "ben", 1, "entailment", ["Datives"])
        submit_review(engine, "s", "ben", 2, "neutral", [])  # the pair's tags came with 1
        submit_review(engine, "s", "cara", 1, "entailment", ["Datives"])
        submit_review(engine, "s", "cara", 2, "entailment", [])
        review = set_statistics(engine, "s")["review"]
        assert review["reviews"] == 4 and review["coders"] == ["ana", "ben", "cara"]
        assert review["labels"]["pairwise_agreement"] == pytest.approx(4 / 6)
        assert review["tags"]["mean_jaccard"] == pytest.approx(1.0)
        assert review["open_disagreements"] == 1

        # ben took part in example 2, so his queue is empty; dan settles it.
        ben = create_curate_app(engine, "s", "ben", adjudicate=True)
        async with ben.run_test(size=SIZE):
            assert isinstance(ben.screen, NothingLeftScreen)
        app = create_curate_app(engine, "s", "dan", adjudicate=True)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            assert isinstance(screen, AdjudicateScreen) and screen.entry.example.id == 2
            opinions = all_static_text(app)
            for who, label in (("ana", "entailment"), ("ben", "neutral"), ("cara", "entailment")):
                assert who in opinions and label in opinions
            # The author's label comes pre-chosen; the pair's tags are not disputed here (26.12).
            assert screen.query_one("#label", LabelChoice).value == "entailment"
            assert not screen.query(TagPicker)
            assert "Tags (the pair's, not disputed here): Datives" in all_static_text(app)
            await pilot.press("2")
            screen.query_one("#note", Input).value = "the recipient moves: core args too"
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert isinstance(app.screen, NothingLeftScreen)
        assert app.settled == 1
        assert disagreement_queue(engine, "s") == []
        history = example_history(engine, "s", 2)
        assert history[0]["label"] == "entailment"
        assert (history[0]["change"], history[0]["changed_by"]) == ("adjudication", "dan")
        assert history[0]["change_note"] == "the recipient moves: core args too"
        assert history[1]["label"] == "neutral"

    async def test_an_edit_made_meanwhile_is_not_undone_by_the_open_screen(self, engine):
        """ben disputes example 1's label and tags; dan opens it; meanwhile sam fixes the label
        (only the tags stay disputed); dan's Ctrl+S on the old screen must not put the old
        label back: it shows the example as it is now, and his next Ctrl+S settles that."""
        submit_review(engine, "s", "ben", 1, "neutral", ["Datives", "Core args"])
        app = create_curate_app(engine, "s", "dan", adjudicate=True)
        said = notifications(app)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            assert isinstance(screen, AdjudicateScreen) and screen.entry.disputed == [
                "label",
                "tags",
            ]
            assert screen.query_one("#label", LabelChoice).value == "entailment"
            edit_example(engine, "s", 1, "sam", {"label": "neutral"}, "ben is right")
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert app.screen is screen and app.settled == 0
            assert said == ["example 1 changed since you opened it (now version 2): look again"]
            assert screen.entry.example.version == 2 and screen.entry.disputed == ["tags"]
            assert screen.query_one("#label", LabelChoice).value == "neutral"
            assert "disputed: tags ·" in all_static_text(app)
            assert get_example(engine, "s", 1).label == "neutral"  # sam's fix stands
            assert app.focused.id == "label"
            await pilot.press("ctrl+s")  # settled as it is now
            await pilot.pause()
            assert isinstance(app.screen, NothingLeftScreen)
        assert app.settled == 1 and disagreement_queue(engine, "s") == []
        assert get_example(engine, "s", 1).label == "neutral"

    async def test_a_review_given_meanwhile_is_shown_before_anything_is_settled(self, engine):
        """ben disputes example 1; dan opens it; meanwhile cara reviews it too (disagreeing
        with both): dan's Ctrl+S decides nothing, and the screen shows cara's opinion."""
        submit_review(engine, "s", "ben", 1, "neutral", ["Datives"])
        app = create_curate_app(engine, "s", "dan", adjudicate=True)
        said = notifications(app)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            assert isinstance(screen, AdjudicateScreen) and screen.entry.example.id == 1
            assert "cara" not in all_static_text(app)
            submit_review(
                engine, "s", "cara", 1, "contradiction", ["Datives"], "a loan, not a gift"
            )
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert app.screen is screen and app.settled == 0
            assert said == ["example 1 has a new review since you opened it: look again"]
            assert example_decisions(engine, "s", 1) == []
            assert [o.who for o in screen.entry.opinions] == ["ana", "ben", "cara"]
            opinions = all_static_text(app)
            assert "cara" in opinions and "a loan, not a gift" in opinions
            assert app.focused.id == "label"
            await pilot.press("ctrl+s")  # settled, now that every opinion was shown
            await pilot.pause()
            assert isinstance(app.screen, NothingLeftScreen)
        assert app.settled == 1 and disagreement_queue(engine, "s") == []
        [decision] = example_decisions(engine, "s", 1)
        assert (decision.decided_by, decision.label) == ("dan", "entailment")

    async def test_a_screen_whose_disagreement_an_edit_settled_moves_on(self, engine):
        submit_review(engine, "s", "ben", 2, "neutral", ["Datives"])
        app = create_curate_app(engine, "s", "dan", adjudicate=True)
        said = notifications(app)
        async with app.run_test(size=SIZE) as pilot:
            assert app.screen.entry.example.id == 2
            edit_example(engine, "s", 2, "sam", {"label": "neutral"})  # ben's label: agreed
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert isinstance(app.screen, NothingLeftScreen)
            assert said == [
                "example 2 changed since you opened it (now version 2) and has no open "
                "disagreement for you now"
            ]
        assert app.settled == 0 and get_example(engine, "s", 2).label == "neutral"

    async def test_ctrl_q_asks_only_when_the_decision_differs_from_the_example(self, engine):
        submit_review(engine, "s", "ben", 2, "neutral", ["Datives"])
        app = create_curate_app(engine, "s", "dan", adjudicate=True)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("2", "ctrl+q")  # ben's label chosen over the author's
            await pilot.pause()
            assert isinstance(app.screen, ConfirmDiscard)
            assert "Your decision is not saved" in all_static_text(app)
            await pilot.press("escape", "1", "ctrl+q")  # the label as it stands: nothing lost
            await pilot.pause()
        assert not app.is_running and app.settled == 0

    async def test_a_disagreement_settled_by_another_meanwhile_moves_on(self, engine):
        submit_review(engine, "s", "ben", 2, "neutral", ["Datives"])
        app = create_curate_app(engine, "s", "dan", adjudicate=True)
        said = notifications(app)
        async with app.run_test(size=SIZE) as pilot:
            entry = app.screen.entry
            settle(engine, "s", 2, "cara", "entailment", ["Datives"], reviews_seen=entry.review_ids)
            await pilot.press("2", "ctrl+s")
            await pilot.pause()
            assert isinstance(app.screen, NothingLeftScreen)
            assert said == [
                "example 2 was settled since you opened it and has no open disagreement for you now"
            ]
        assert [d.decided_by for d in example_decisions(engine, "s", 2)] == ["cara"]

    async def test_a_disagreement_retired_while_on_screen_says_so(self, engine):
        submit_review(engine, "s", "ben", 2, "neutral", ["Datives"])
        app = create_curate_app(engine, "s", "dan", adjudicate=True)
        said = notifications(app)
        async with app.run_test(size=SIZE) as pilot:
            assert app.screen.entry.example.id == 2
            set_retired(engine, "s", 2, "ana", True, "duplicate")
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert isinstance(app.screen, NothingLeftScreen)
            assert said == [
                "example 2 was retired since you opened it and has no open disagreement for you now"
            ]
        assert app.settled == 0

    async def test_the_author_settles_her_own_example_only_with_an_override(self, engine):
        """26.11: without --override the author's queue is empty; with it, she settles."""
        submit_review(engine, "s", "ben", 2, "neutral", ["Datives"])
        alone = create_curate_app(engine, "s", "ana", adjudicate=True)
        async with alone.run_test(size=SIZE):
            assert isinstance(alone.screen, NothingLeftScreen)
            assert "your own only with --override REASON" in " ".join(
                all_static_text(alone).split()
            )
        app = create_curate_app(engine, "s", "ana", adjudicate=True, override_reason="no one else")
        async with app.run_test(size=SIZE) as pilot:
            assert isinstance(app.screen, AdjudicateScreen)
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert isinstance(app.screen, NothingLeftScreen)
            # She gave --override: the end does not tell her to give it.
            shown = " ".join(all_static_text(app).split())
            assert "--override REASON" not in shown
            assert "your own too: you gave --override" in shown
        assert app.settled == 1 and disagreement_queue(engine, "s") == []


class TestTheEnds:
    """What the app says when nothing is left: true to a filter, a skip and every role."""

    async def test_a_filtered_review_says_it_was_the_filter_that_ran_dry(self, engine):
        app = create_curate_app(engine, "s", "ben", review=True, wanted=ReviewFilter(author="cy"))
        async with app.run_test(size=SIZE):
            assert isinstance(app.screen, NothingLeftScreen)
            shown = " ".join(all_static_text(app).split())
            assert "Every example by cy (your filter) has your opinion." in shown
            assert "by others in this set" not in shown  # ana's two are not reviewed by ben

    async def test_a_disagreement_passed_over_is_said_to_be_still_open(self, engine):
        submit_review(engine, "s", "ben", 2, "neutral", ["Datives"])
        app = create_curate_app(engine, "s", "dan", adjudicate=True)
        async with app.run_test(size=SIZE) as pilot:
            assert isinstance(app.screen, AdjudicateScreen)
            await pilot.press("ctrl+n")
            await pilot.pause()
            assert isinstance(app.screen, NothingLeftScreen)
            shown = " ".join(all_static_text(app).split())
            assert "No open disagreement left in this run." in shown
            assert "1 disagreement passed over with Ctrl+N: still open" in shown
            assert "No open disagreement for you to settle" not in shown
        assert len(disagreement_queue(engine, "s")) == 1

    def test_a_long_role_is_not_run_into_the_name(self):
        text = opinions_text(
            [
                Opinion("sam", "reviewer of the reverse direction", "contradiction", ["Negation"]),
                Opinion("ana", "author", "entailment", ["Datives"]),
            ]
        ).plain
        assert "reviewer of the reverse direction sam" in text
        assert text.splitlines()[1].startswith("author    ana")


class TestLongTextsAndSmallTerminals:
    """A long pair can be read to its end by key, and a narrow terminal stacks the columns."""

    @pytest.mark.parametrize("size", [(60, 20), (100, 30)])
    async def test_the_text_column_scrolls_by_key_and_stacks_when_narrow(self, workspace, size):
        engine = workspace.engine
        create_set(engine, "long")
        words = "The quick brown fox jumps over the lazy dog near the old river bank. " * 40
        save_pair(
            engine,
            "long",
            "ana",
            PairDraft(
                premise=words + "It rained.",
                hypothesis=words + "It did not rain.",
                forward="contradiction",
                backward="contradiction",
                tags=["Negation"],
            ),
        )
        app = create_curate_app(engine, "long", "ben", review=True)
        async with app.run_test(size=size) as pilot:
            left, right = app.screen.query_one("#left"), app.screen.query_one("#right")
            narrow = size[0] < 80
            assert left.region.width > (50 if narrow else 40)  # never a sliver of text
            assert (left.region.y < right.region.y) == narrow  # stacked, or side by side
            await pilot.press("shift+tab")  # from the label choice back to the text
            assert app.focused is left
            await pilot.press("end")
            assert left.scroll_y == left.max_scroll_y > 0  # the hypothesis's end is reachable
