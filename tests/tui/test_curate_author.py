"""Writing a new diagnostic pair in the curation app: type or paste the sentences, see their
difference, label both directions, tag, save; and every rule that stops a save."""

from __future__ import annotations

import asyncio

import pytest
from textual import events
from textual.widgets import Input, TextArea

from annotate.curation.examples import ExampleQuery, find_examples, save_pair, set_retired
from annotate.curation.export import export_set
from annotate.curation.sets import create_set
from annotate.curation.validation import PairDraft
from annotate.tui.curate.app import CurateApp, create_curate_app
from annotate.tui.curate.screens.author import AuthorScreen
from annotate.tui.curate.screens.confirm import ConfirmDiscard
from annotate.tui.curate.screens.start_from import AskStartingExample
from annotate.tui.curate.widgets.diff_view import ADDED_STYLE, REMOVED_STYLE, DiffView, diff_text
from annotate.tui.curate.widgets.label_choice import LabelChoice
from annotate.tui.curate.widgets.tag_picker import TagPicker
from tests.tui.support import all_static_text, screen_text, static_text

SIZE = (100, 30)


@pytest.fixture
def engine(workspace):
    create_set(workspace.engine, "new")
    return workspace.engine


def examples(engine) -> list:
    return find_examples(engine, "new", ExampleQuery())


async def fill(pilot, premise="", hypothesis="", forward=None, backward=None, tags=()) -> None:
    """Put values into the form directly (the typing itself is tested once, below)."""
    screen = pilot.app.screen
    screen.query_one("#premise", TextArea).text = premise
    screen.query_one("#hypothesis", TextArea).text = hypothesis
    screen.query_one("#forward", LabelChoice).value = forward
    screen.query_one("#backward", LabelChoice).value = backward
    screen.query_one(TagPicker).set_selected(tags)
    await pilot.pause()


class TestWritingAPair:
    """The curator writes a pair with the keyboard and saves it."""

    async def test_write_paste_label_both_ways_tag_save_and_export(self, engine, tmp_path):
        app = create_curate_app(engine, "new", "ana")
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            assert isinstance(screen, AuthorScreen) and app.focused.id == "premise"
            await pilot.press(*"A cat sat.")
            await pilot.press("tab")
            app.post_message(events.Paste("A cat did not\nsit.\n"))  # a paste
            await pilot.pause()
            assert screen.query_one("#hypothesis", TextArea).text == "A cat did not\nsit.\n"
            diff = screen.query_one(DiffView)
            assert "4 of 8 words differ (50%)" in static_text(diff)  # and a warning
            await pilot.press("tab", "3", "tab", "c")  # 3 and c both mean contradiction
            await pilot.press("tab", *"neg", "enter")  # filter, Enter toggles the best match
            await pilot.press(*"qua", "down", "space")  # or ↓ into the list and Space
            assert screen.query_one(TagPicker).selected == ["Quantifiers", "Negation"]
            await pilot.press("up", "up")  # back to the filter: Enter there toggles again
            await pilot.press(*"qua", "enter")
            assert screen.query_one(TagPicker).selected == ["Negation"]
            screen.query_one("#domain", Input).value = "Artificial"
            screen.query_one("#note", Input).value = "negated the verb"
            await pilot.press("ctrl+s")
            await pilot.pause()

            saved = examples(engine)
            assert [(e.premise, e.hypothesis, e.label) for e in saved] == [
                ("A cat sat.", "A cat did not sit.", "contradiction"),
                ("A cat did not sit.", "A cat sat.", "contradiction"),
            ]
            assert {e.pair_id for e in saved} == {1}
            assert all(e.fine_tags == ["Negation"] and e.domain == "Artificial" for e in saved)
            assert saved[0].note == "negated the verb" and saved[0].author == "ana"
            # The form is ready for the next pair; the domain stays.
            assert screen.query_one("#premise", TextArea).text == ""
            assert screen.query_one("#forward", LabelChoice).value is None
            assert screen.query_one(TagPicker).selected == []
            assert screen.query_one("#domain", Input).value == "Artificial"
            assert app.focused.id == "premise"
            assert "1 saved" in screen_text(app)
        assert app.summary() == "ana: 1 pair saved in set 'new'."
        # The pair is in the export: both directions, their labels, the tag and the domain.
        export_set(engine, "new", tmp_path / "new.tsv")
        assert (tmp_path / "new.tsv").read_bytes().split(b"\r\n")[1:] == [
            b"\t\tNegation\t\tArtificial\tA cat sat.\tA cat did not sit.\tcontradiction",
            b"\t\tNegation\t\tArtificial\tA cat did not sit.\tA cat sat.\tcontradiction",
            b"",
        ]

    async def test_a_pasted_colour_code_leaves_no_control_character_in_the_pair(self, engine):
        app = create_curate_app(engine, "new", "ana")
        async with app.run_test(size=SIZE) as pilot:
            await fill(pilot, "", "The car stopped.", "neutral", "neutral", ["Negation"])
            app.screen.query_one("#premise", TextArea).focus()
            app.post_message(events.Paste("The \x1b[31mred\x1b[0m car stopped."))
            await pilot.pause()
            await pilot.press("ctrl+s")
            await pilot.pause()
        assert [e.premise for e in examples(engine)] == [
            "The [31mred[0m car stopped.",
            "The car stopped.",
        ]

    async def test_the_difference_is_marked_and_a_large_edit_warned(self, engine):
        app = create_curate_app(engine, "new", "ana")
        async with app.run_test(size=SIZE) as pilot:
            await fill(pilot, "The cat sat on the mat.", "The dog sat on the mat.")
            diff = app.screen.query_one(DiffView)
            text = diff_text("The cat sat on the mat.", "The dog sat on the mat.", warn=False)
            assert static_text(diff) == text.plain
            marked = {text.plain[s.start : s.end]: s.style for s in text.spans}
            assert marked["cat"] == REMOVED_STYLE and marked["dog"] == ADDED_STYLE
            assert "⚠" not in static_text(diff)
            await fill(pilot, "The cat sat on the mat.", "Nobody ever owned a pet here.")
            # 26.13: no warning while typing (a half-typed form differs a lot) ...
            assert "⚠" not in static_text(diff) and "differ" in static_text(diff)
            await pilot.press("ctrl+s")  # ... it comes when the author submits
            await pilot.pause()
            assert "⚠" in static_text(diff) and "not a minimal edit" in static_text(diff)

    async def test_the_chosen_label_is_marked_and_the_footer_has_one_quit(self, engine):
        """26.13: a marker besides reverse video; the domain hint fits 80 columns; one Quit."""
        app = create_curate_app(engine, "new", "ana")
        async with app.run_test(size=(80, 24)) as pilot:
            screen = app.screen
            screen.query_one("#forward", LabelChoice).value = "neutral"
            await pilot.pause()
            assert "✓2 neutral" in " ".join(all_static_text(app).split()) or "✓2 neutral" in (
                screen_text(app)
            )
            domain = screen.query_one("#domain", Input)
            assert len(domain.placeholder) <= domain.content_region.width
        done = create_curate_app(engine, "new", "ana", review=True)
        async with done.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            footer = screen_text(done).splitlines()[-1]
            assert footer.count("Quit") == 1, footer

    async def test_markup_in_sentences_is_shown_and_saved_verbatim(self, engine):
        premise, hypothesis = (
            "[CLS] the [MASK] sat [/foo]",
            "[bold]the[/bold] [@click=app.quit]x[/] sat",
        )
        app = create_curate_app(engine, "new", "[b]ana[/b]")
        async with app.run_test(size=SIZE) as pilot:
            await fill(pilot, premise, hypothesis, "neutral", "neutral", ["Core args"])
            shown = all_static_text(app)
            assert premise in shown and hypothesis in shown
            assert "new · [b]ana[/b]" in screen_text(app)
            await pilot.press("ctrl+s")
            assert app.is_running
        assert (examples(engine)[0].premise, examples(engine)[0].hypothesis) == (
            premise,
            hypothesis,
        )


class TestValidation:
    """Ctrl+S on a form that breaks a rule: the problem is shown, the cursor goes to the field,
    nothing is stored."""

    CASES = [
        (
            ("", "The gate is shut.", "neutral", "neutral", ["Negation"]),
            "the premise is empty",
            "premise",
        ),
        (
            ("The gate is open.", " ", "neutral", "neutral", ["Negation"]),
            "the hypothesis is empty",
            "hypothesis",
        ),
        (
            ("The gate is open.", "The gate is open.", "neutral", "neutral", ["Negation"]),
            "identical",
            "hypothesis",
        ),
        (
            ("The gate is open.", "The gate is shut.", None, "neutral", ["Negation"]),
            "premise → hypothesis",
            "forward",
        ),
        (
            ("The gate is open.", "The gate is shut.", "neutral", None, ["Negation"]),
            "hypothesis → premise",
            "backward",
        ),
        (
            ("The gate is open.", "The gate is shut.", "neutral", "neutral", []),
            "at least one phenomenon tag",
            "tag-filter",
        ),
    ]

    @pytest.mark.parametrize(("values", "message", "focus"), CASES, ids=[c[1] for c in CASES])
    async def test_each_rule_stops_the_save(self, engine, values, message, focus):
        app = create_curate_app(engine, "new", "ana")
        async with app.run_test(size=SIZE) as pilot:
            await fill(pilot, *values)
            await pilot.press("ctrl+s")
            await pilot.pause()
            problems = app.screen.query_one("#problems")
            assert problems.display and message in static_text(problems)
            assert app.focused.id == focus
            assert app.screen.query_one("#premise", TextArea).text == values[0]  # form kept
        assert examples(engine) == []

    async def test_a_domain_with_a_tab_stops_the_save_at_the_domain(self, engine):
        app = create_curate_app(engine, "new", "ana")
        async with app.run_test(size=SIZE) as pilot:
            await fill(
                pilot, "The gate is open.", "The gate is shut.", "neutral", "neutral", ["Negation"]
            )
            app.screen.query_one("#domain", Input).value = "News\tWire"  # pasted from a table
            await pilot.press("ctrl+s")
            await pilot.pause()
            problems = app.screen.query_one("#problems")
            assert "the domain holds a tab" in static_text(problems)
            assert app.focused.id == "domain"
        assert examples(engine) == []

    async def test_a_duplicate_pair_is_refused_in_either_direction(self, engine):
        save_pair(
            engine,
            "new",
            "ben",
            PairDraft(
                "The gate is open.",
                "The gate is shut.",
                "contradiction",
                "contradiction",
                ["Lexical entailment"],
            ),
        )
        app = create_curate_app(engine, "new", "ana")
        async with app.run_test(size=SIZE) as pilot:
            await fill(
                pilot, "The gate is shut.", "The gate is open.", "neutral", "neutral", ["Negation"]
            )
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert "duplicate" in static_text(app.screen.query_one("#problems"))
            # Fixing the problem and saving again works, and hides the problems.
            app.screen.query_one("#hypothesis", TextArea).text = "The gate is ajar."
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert not app.screen.query_one("#problems").display
        assert len(examples(engine)) == 4


async def test_the_curate_command_fails_before_any_screen(cli):
    cli("curate", "create", "new")
    assert "no curation set named 'old'" in cli("curate", "author", "old", "--as", "ana").stderr


class TestUnsavedWork:
    """Ctrl+Q and Ctrl+R ask before a half-written pair is thrown away."""

    async def test_ctrl_q_asks_first_and_n_keeps_the_pair(self, engine):
        app = create_curate_app(engine, "new", "ana")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"A cat sat.")
            await pilot.press("ctrl+q")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmDiscard) and app.is_running
            assert "Quit without saving this pair?" in all_static_text(app)
            await pilot.press("n")
            await pilot.pause()
            assert isinstance(app.screen, AuthorScreen)
            assert app.screen.query_one("#premise", TextArea).text == "A cat sat."
            await pilot.press("ctrl+q", "y")
            await pilot.pause()
        assert not app.is_running
        assert examples(engine) == []

    async def test_ctrl_q_on_an_empty_form_quits_at_once(self, engine):
        app = create_curate_app(engine, "new", "ana")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+q")
            await pilot.pause()
        assert not app.is_running

    async def test_ctrl_r_asks_before_clearing(self, engine):
        app = create_curate_app(engine, "new", "ana")
        async with app.run_test(size=SIZE) as pilot:
            await fill(pilot, "A cat sat.", "A cat did not sit.", forward="contradiction")
            await pilot.press("ctrl+r")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmDiscard)
            await pilot.press("escape")  # keep writing
            await pilot.pause()
            author = app.screen
            assert isinstance(author, AuthorScreen)
            assert author.query_one("#hypothesis", TextArea).text == "A cat did not sit."
            await pilot.press("ctrl+r", "y")
            await pilot.pause()
            assert app.screen is author and not author.has_unsaved_work()
            assert author.query_one("#premise", TextArea).text == ""


class TestStartingFromAnExample:
    """The curator starts a new pair from an existing one (`--from ID` or Ctrl+O): its
    sentences and tags fill the form, the labels are hers to give afresh."""

    @pytest.fixture
    def engine(self, engine):
        """Set `new` with one pair by ben: example 1 (open → shut) and 2 (shut → open)."""
        save_pair(
            engine,
            "new",
            "ben",
            PairDraft(
                "The gate is open.",
                "The gate is shut.",
                "contradiction",
                "contradiction",
                ["Lexical entailment", "Negation"],
                domain="News",
                note="antonym",
            ),
        )
        return engine

    async def test_from_fills_the_form_and_one_edited_word_saves_a_new_pair(self, engine):
        app = create_curate_app(engine, "new", "ana", start_from=1)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            assert isinstance(screen, AuthorScreen)
            assert screen.query_one("#premise", TextArea).text == "The gate is open."
            assert screen.query_one("#hypothesis", TextArea).text == "The gate is shut."
            assert screen.query_one(TagPicker).selected == ["Lexical entailment", "Negation"]
            assert screen.query_one("#forward", LabelChoice).value is None  # labelled afresh
            assert screen.query_one("#backward", LabelChoice).value is None
            assert screen.query_one("#note", Input).value == ""  # what this edit does is new
            assert "New pair from example 1" in screen_text(app)
            assert "Start from" in screen_text(app).splitlines()[-1]  # the footer shows Ctrl+O
            # One word: "shut" becomes "ajar", typed in the hypothesis.
            screen.query_one("#hypothesis", TextArea).focus()
            await pilot.press("end", *["backspace"] * len("shut."), *"ajar.")
            await pilot.press("tab", "n", "tab", "n")  # neutral both ways
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert "1 saved" in screen_text(app)
            assert "from example" not in screen_text(app)  # the next form starts empty
        saved = examples(engine)
        assert [(e.id, e.premise, e.hypothesis, e.label, e.author) for e in saved] == [
            (1, "The gate is open.", "The gate is shut.", "contradiction", "ben"),
            (2, "The gate is shut.", "The gate is open.", "contradiction", "ben"),
            (3, "The gate is open.", "The gate is ajar.", "neutral", "ana"),
            (4, "The gate is ajar.", "The gate is open.", "neutral", "ana"),
        ]
        assert saved[2].fine_tags == ["Lexical entailment", "Negation"]
        assert saved[2].domain == "News" and saved[2].note == ""

    async def test_saving_it_unedited_is_refused_as_a_duplicate(self, engine):
        app = create_curate_app(engine, "new", "ana", start_from=2)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            screen.query_one("#forward", LabelChoice).value = "contradiction"
            screen.query_one("#backward", LabelChoice).value = "contradiction"
            await pilot.press("ctrl+s")
            await pilot.pause()
            problems = screen.query_one("#problems")
            assert problems.display
            assert "this pair is already in the set (a duplicate)" in static_text(problems)
            assert screen.query_one("#premise", TextArea).text == "The gate is shut."  # kept
        assert len(examples(engine)) == 2

    async def test_an_untouched_filled_form_quits_at_once_an_edited_one_asks(self, engine):
        app = create_curate_app(engine, "new", "ana", start_from=1)
        async with app.run_test(size=SIZE) as pilot:
            app.screen.query_one("#forward", LabelChoice).value = "neutral"
            await pilot.press("ctrl+q")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmDiscard)  # a label given: work to lose
        fresh = create_curate_app(engine, "new", "ana", start_from=1)
        async with fresh.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+q")
            await pilot.pause()
        assert not fresh.is_running

    async def test_ctrl_o_asks_first_then_fills_the_form_from_the_id_given(self, engine):
        app = create_curate_app(engine, "new", "ana")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"A cat sat.")
            await pilot.press("ctrl+o")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmDiscard)  # a half-written pair: ask first
            await pilot.press("n")
            await pilot.pause()
            author = app.screen
            assert author.query_one("#premise", TextArea).text == "A cat sat."
            await pilot.press("ctrl+o", "y")
            await pilot.pause()
            assert isinstance(app.screen, AskStartingExample)
            await pilot.press("2", "enter")
            await pilot.pause()
            assert app.screen is author
            # Example 2's own order: its premise is the pair's hypothesis.
            assert author.query_one("#premise", TextArea).text == "The gate is shut."
            assert author.query_one("#hypothesis", TextArea).text == "The gate is open."
            assert author.query_one(TagPicker).selected == ["Lexical entailment", "Negation"]
            assert author.query_one("#forward", LabelChoice).value is None
            assert "New pair from example 2" in screen_text(app)
            # On a form just filled, Ctrl+O asks for the id at once; Esc changes nothing.
            await pilot.press("ctrl+o")
            await pilot.pause()
            assert isinstance(app.screen, AskStartingExample)
            await pilot.press("escape")
            await pilot.pause()
            assert author.query_one("#premise", TextArea).text == "The gate is shut."

    @pytest.mark.parametrize(
        ("example_id", "message"),
        [
            (99, "no example 99 in set 'new'"),
            (10**20, f"no example {10**20} in set 'new'"),  # past the store's integers
            (1, "example 1 of set 'new' is retired"),
        ],
        ids=["unknown", "huge", "retired"],
    )
    async def test_a_bad_id_in_the_app_is_a_notice_and_the_form_stays(
        self, engine, example_id, message
    ):
        set_retired(engine, "new", 1, "ben", True)
        app = create_curate_app(engine, "new", "ana")
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await pilot.press(*"A cat sat.", "ctrl+o", "y", *str(example_id), "enter")
            await pilot.pause()
            assert [n.message for n in app._notifications] == [message]
            assert isinstance(app.screen, AuthorScreen) and app.is_running
            assert app.screen.query_one("#premise", TextArea).text == "A cat sat."

    @pytest.mark.parametrize(
        ("example_id", "message"),
        [(99, "no example 99 in set 'new'"), (1, "example 1 of set 'new' is retired")],
        ids=["unknown", "retired"],  # past 64 bits: the option's range (test_cli_polish.py)
    )
    def test_a_bad_id_on_the_command_line_fails_before_any_screen(
        self, engine, cli, monkeypatch, example_id, message
    ):
        set_retired(engine, "new", 1, "ben", True)
        monkeypatch.setattr(CurateApp, "run", lambda self: pytest.fail("the app started"))
        result = cli("curate", "author", "new", "--as", "ana", "--from", example_id)
        assert result.code == 1
        assert result.stderr == f"error: {message}\n"  # one line, no traceback

    def test_the_command_opens_the_form_filled(self, engine, cli, monkeypatch):
        seen: list[tuple[str, str]] = []

        def run_headless(self: CurateApp) -> None:
            async def look() -> None:
                async with self.run_test(size=SIZE) as pilot:
                    await pilot.pause()
                    form = self.screen
                    seen.append(
                        (
                            form.query_one("#premise", TextArea).text,
                            form.query_one("#hypothesis", TextArea).text,
                        )
                    )

            asyncio.run(look())

        monkeypatch.setattr(CurateApp, "run", run_headless)
        result = cli("curate", "author", "new", "--as", "ana", "--from", "2")
        assert result.code == 0, result.stderr
        assert seen == [("The gate is shut.", "The gate is open.")]

    async def test_markup_in_the_example_is_shown_verbatim(self, engine):
        premise, hypothesis = "[CLS] the [MASK] sat [/foo]", "[bold]the[/bold] [@click=app.quit]x"
        save_pair(
            engine,
            "new",
            "ben",
            PairDraft(premise, hypothesis, "neutral", "neutral", ["Core args"]),
        )
        app = create_curate_app(engine, "new", "ana", start_from=3)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert app.screen.query_one("#premise", TextArea).text == premise
            assert app.screen.query_one("#hypothesis", TextArea).text == hypothesis
            shown = all_static_text(app)  # the difference view
            assert "[CLS]" in shown and "[MASK]" in shown and "[/foo]" in shown
            assert app.is_running
