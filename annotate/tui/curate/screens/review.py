"""A blind second opinion: the reviewer sees the two sentences (and their difference) and gives
a label and tags of their own. The screen is built from a `BlindExample`, which holds no label
or tags: there is nothing of the author's to leak."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static

from annotate.curation.desk import CurationDesk
from annotate.curation.review import BlindExample, ReviewProgress
from annotate.terminal_text import SafeText as Text
from annotate.tui.curate.screens.common import ExampleScreen
from annotate.tui.curate.widgets.diff_view import DiffView
from annotate.tui.curate.widgets.label_choice import LabelChoice
from annotate.tui.curate.widgets.tag_picker import TagPicker
from annotate.tui.screens.messages import ScreenMessage


class ReviewScreen(ExampleScreen):
    BINDINGS = [
        Binding("ctrl+s", "submit", "Submit"),
        Binding("ctrl+n", "skip", "Skip for now"),
    ]

    class Done(ScreenMessage):
        """The reviewer submitted a review of `example_id`, or skipped it."""

        def __init__(self, origin: Screen, example_id: int, skipped: bool) -> None:
            super().__init__(origin)
            self.example_id = example_id
            self.skipped = skipped

    def __init__(self, desk: CurationDesk, example: BlindExample, progress: ReviewProgress):
        super().__init__()
        self.desk = desk
        self.example = example
        self.progress = progress
        self.tagged_with = desk.pair_tagged_with(example.id)
        """Tags belong to the pair: when this reviewer tagged the other direction already,
        this one asks for a label only."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(
            Text.assemble(
                ("Blind review", "bold"),
                f" · example {self.example.id} · {self.progress.done} done, "
                f"{self.progress.remaining} waiting",
                (" · the author's label and tags are hidden", "dim"),
            ),
            id="curate-status",
            markup=False,
        )
        with Horizontal(id="columns"):
            with VerticalScroll(id="left"):  # focusable: long texts scroll by key
                yield DiffView(self.example.premise, self.example.hypothesis)
            with VerticalScroll(id="right", can_focus=False):
                yield LabelChoice("Premise → hypothesis", self.desk.labels, id="label")
                if self.tagged_with is None:
                    yield TagPicker()
                else:
                    yield Static(
                        f"Tags: you gave them with example {self.tagged_with}, the reverse "
                        "direction (tags belong to the pair). Choose the label only.",
                        id="pair-tagged",
                        markup=False,
                    )
                yield Input(placeholder="Note for the author (optional)", id="note")
        yield Static(id="problems", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#problems").display = False
        self.query_one("#label").focus()

    async def action_submit(self) -> None:
        await self._store(
            lambda: self.desk.submit_review(
                self.example,
                self.query_one("#label", LabelChoice).value,
                [] if self.tagged_with is not None else self.query_one(TagPicker).selected,
                self.query_one("#note", Input).value,
            )
        )

    def _example_id(self) -> int:
        return self.example.id

    GONE = "is no longer yours to review"
    UNSAVED = "Your review"

    def has_unsaved_work(self) -> bool:
        return bool(
            self.query_one("#label", LabelChoice).value is not None
            or (self.tagged_with is None and self.query_one(TagPicker).selected)
            or self.query_one("#note", Input).value.strip()
        )

    def _fresh(self, example_id: int) -> BlindExample | None:
        return self.desk.blind(example_id)

    def _refill(self, fresh: BlindExample) -> None:
        self.example = fresh
        self.tagged_with = self.desk.pair_tagged_with(fresh.id)
