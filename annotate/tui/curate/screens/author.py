"""Write a new diagnostic pair: premise and hypothesis, their word-level difference, a label for
each direction, phenomenon tags, domain and source note. Ctrl+S validates and saves; the form
then clears for the next pair (the domain stays, pairs often come in runs from one source).
Ctrl+O (or `--from ID`) fills the form from an existing example, to edit into a new pair."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.suggester import SuggestFromList
from textual.widgets import Footer, Header, Input, Static, TextArea

from annotate.curation.desk import CurationDesk
from annotate.curation.examples import ExampleView
from annotate.curation.validation import DraftInvalid, PairDraft, Problem, clean_sentence
from annotate.errors import UserError
from annotate.terminal_text import SafeText as Text
from annotate.text import terminal_safe
from annotate.tui.curate.screens.common import FOCUS_OF_FIELD, problems_text
from annotate.tui.curate.screens.confirm import ConfirmDiscard
from annotate.tui.curate.screens.start_from import AskStartingExample
from annotate.tui.curate.widgets.diff_view import DiffView
from annotate.tui.curate.widgets.label_choice import LabelChoice
from annotate.tui.curate.widgets.tag_picker import TagPicker


class AuthorScreen(Screen[None]):
    BINDINGS = [
        Binding("ctrl+s", "save", "Save pair"),
        Binding("ctrl+r", "ask_clear", "Clear form"),
        Binding("ctrl+o", "ask_start_from", "Start from…"),
    ]

    def __init__(self, desk: CurationDesk, start_from: ExampleView | None = None) -> None:
        super().__init__()
        self.desk = desk
        self.saved = 0
        """Pairs saved on this screen (for the status line and the summary at exit)."""
        self.start_from = start_from
        """The example the pair on the form was filled from (None: a form begun empty)."""
        self._as_filled: tuple[object, ...] | None = None
        """The form's work as the example filled it: unchanged, there is nothing to lose."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(self._status(), id="curate-status", markup=False)
        with Horizontal(id="columns"):
            with VerticalScroll(id="left", can_focus=False):
                yield TextArea(id="premise", placeholder="A natural sentence")
                yield TextArea(id="hypothesis", placeholder="The same sentence, minimally edited")
                yield DiffView(warn=False)  # the minimal-edit warning comes at Ctrl+S
            with VerticalScroll(id="right", can_focus=False):
                labels = self.desk.labels
                yield LabelChoice("Premise → hypothesis", labels, id="forward")
                yield LabelChoice("Hypothesis → premise", labels, id="backward")
                yield TagPicker()
                yield Input(
                    placeholder="Domain: News, Wikipedia, Reddit …",
                    suggester=SuggestFromList(self.desk.domains(), case_sensitive=False),
                    id="domain",
                )
                yield Input(placeholder="Source note: where from, what the edit does", id="note")
        yield Static(id="problems", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#premise", TextArea).border_title = "Premise"
        self.query_one("#hypothesis", TextArea).border_title = "Hypothesis"
        self.query_one("#problems").display = False
        self.query_one("#premise").focus()
        if self.start_from is not None:
            self.fill_from(self.start_from)

    def _status(self) -> Text:
        return Text.assemble(
            ("New pair", "bold"),
            f" from example {self.start_from.id}" if self.start_from is not None else "",
            f" · set {self.desk.info.name} · {self.desk.curator} · {self.saved} saved",
            (" · Tab moves on; 1/2/3 or e/n/c label; Ctrl+S saves", "dim"),
        )

    def on_text_area_changed(self, _event: TextArea.Changed) -> None:
        premise, hypothesis = self._sentences()
        self.query_one(DiffView).show(premise, hypothesis, warn=False)  # still typing

    def _sentences(self) -> tuple[str, str]:
        return (
            clean_sentence(self.query_one("#premise", TextArea).text),
            clean_sentence(self.query_one("#hypothesis", TextArea).text),
        )

    def draft(self) -> PairDraft:
        premise, hypothesis = self._sentences()
        return PairDraft(
            premise=premise,
            hypothesis=hypothesis,
            forward=self.query_one("#forward", LabelChoice).value,
            backward=self.query_one("#backward", LabelChoice).value,
            tags=self.query_one(TagPicker).selected,
            domain=self.query_one("#domain", Input).value,
            note=self.query_one("#note", Input).value,
        )

    def show_problems(self, problems: list[Problem]) -> None:
        box = self.query_one("#problems", Static)
        box.update(problems_text(problems))
        box.display = True
        focus = {**FOCUS_OF_FIELD, "domain": "#domain"}  # this screen has a domain box
        field = self.query_one(focus.get(problems[0].field, "#premise"))
        # Focus once the box has taken its room, so the column is scrolled (or not) for the
        # layout the curator sees: focused at once, the scroll raced the layout.
        self.fault_focused = False
        self.call_after_refresh(self._focus_fault, field)

    def _focus_fault(self, field) -> None:  # type: ignore[no-untyped-def]
        # The field goes to the top of its column at once: one picture whatever the column's
        # scroll was (a smooth minimal scroll ended in one of two places).
        field.focus(scroll_visible=False)
        field.scroll_visible(animate=False, top=True)
        self.fault_focused = True  # tests wait for it

    def action_save(self) -> None:
        self.query_one(DiffView).show(*self._sentences(), warn=True)  # submitted: judge it
        try:
            forward, backward = self.desk.save_pair(self.draft())
        except DraftInvalid as exc:
            self.show_problems(exc.problems)
            self.notify(terminal_safe(str(exc)), title="Not saved", severity="error", markup=False)
            return
        except UserError as exc:
            self.notify(terminal_safe(str(exc)), severity="error", markup=False)
            return
        self.saved += 1
        note = f"Saved pair {forward.pair_id}: examples {forward.id} and {backward.id}."
        if self.query_one(DiffView).diff.large:
            note += " (A large edit: consider a more minimal one next time.)"
        self.notify(note, markup=False)
        self.action_clear()

    def _work(self) -> tuple[object, ...]:
        # The domain stays between pairs, so it is not part of a pair's work.
        draft = self.draft()
        return (
            draft.premise,
            draft.hypothesis,
            draft.forward,
            draft.backward,
            tuple(draft.tags),
            draft.note.strip(),
        )

    def has_unsaved_work(self) -> bool:
        """Anything typed or chosen for the pair on the form; a form just filled from an
        example and left as it was holds nothing of the curator's to lose."""
        work = self._work()
        return any(work) and work != self._as_filled

    def fill_from(self, example: ExampleView) -> None:
        """Put the example's sentences (premise, hypothesis, in its order), tags and domain on
        the form; the labels stay empty: the edited pair is labelled afresh, both ways."""
        self.action_clear()
        self.start_from = example
        # TextArea holds plain text: the example's sentences are never read as markup.
        self.query_one("#premise", TextArea).text = example.premise
        self.query_one("#hypothesis", TextArea).text = example.hypothesis
        self.query_one(TagPicker).set_selected(example.fine_tags)
        if example.domain:
            self.query_one("#domain", Input).value = example.domain
        self._as_filled = self._work()
        self.query_one("#curate-status", Static).update(self._status())

    def action_ask_start_from(self) -> None:
        """Ctrl+O: ask for an example id and fill the form from it, after asking first when
        the form holds work to lose."""

        def chosen(example_id: int | None) -> None:
            if example_id is None:
                return
            try:
                example = self.desk.starting_point(example_id)
            except UserError as exc:  # unknown or retired: the form stays as it was
                self.notify(terminal_safe(str(exc)), severity="error", markup=False)
                return
            self.fill_from(example)

        def answered(discard: bool | None) -> None:
            if discard:
                self.app.push_screen(AskStartingExample(), chosen)

        if self.has_unsaved_work():
            self.app.push_screen(ConfirmDiscard("Start from another example?"), answered)
        else:
            self.app.push_screen(AskStartingExample(), chosen)

    def action_ask_clear(self) -> None:
        """Ctrl+R: clear the form, after asking when there is something to lose."""
        if not self.has_unsaved_work():
            self.action_clear()
            return

        def answered(discard: bool | None) -> None:
            if discard:
                self.action_clear()

        self.app.push_screen(ConfirmDiscard("Clear the form?"), answered)

    def action_clear(self) -> None:
        """Empty the form for the next pair; the domain stays."""
        self.start_from = None
        self._as_filled = None
        self.query_one("#premise", TextArea).text = ""
        self.query_one("#hypothesis", TextArea).text = ""
        self.query_one("#forward", LabelChoice).value = None
        self.query_one("#backward", LabelChoice).value = None
        self.query_one(TagPicker).set_selected([])
        self.query_one("#note", Input).value = ""
        self.query_one("#problems").display = False
        self.query_one("#curate-status", Static).update(self._status())
        self.query_one("#premise").focus()
