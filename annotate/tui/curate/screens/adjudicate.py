"""Settle a disagreement: the example with every opinion on it (not blind: this is where the
opinions meet), and the final label and tags to keep. The earlier values stay in the history."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static

from annotate.curation.desk import CurationDesk
from annotate.curation.review import QueueEntry
from annotate.terminal_text import SafeText as Text
from annotate.tui.curate.screens.common import (
    ExampleScreen,
    opinions_text,
)
from annotate.tui.curate.widgets.diff_view import DiffView
from annotate.tui.curate.widgets.label_choice import LabelChoice
from annotate.tui.curate.widgets.tag_picker import TagPicker
from annotate.tui.screens.messages import ScreenMessage


class AdjudicateScreen(ExampleScreen):
    BINDINGS = [
        Binding("ctrl+s", "settle", "Settle"),
        Binding("ctrl+n", "skip", "Skip for now"),
    ]

    class Done(ScreenMessage):
        """The example was settled, or skipped."""

        def __init__(self, origin: Screen, example_id: int, skipped: bool) -> None:
            super().__init__(origin)
            self.example_id = example_id
            self.skipped = skipped

    def __init__(self, desk: CurationDesk, entry: QueueEntry, remaining: int) -> None:
        super().__init__()
        self.desk = desk
        self.entry = entry
        self.remaining = remaining

    def compose(self) -> ComposeResult:
        example = self.entry.example
        yield Header()
        yield Static(
            Text.assemble(
                ("Disagreement", "bold"),
                f" · example {example.id} · disputed: {', '.join(self.entry.disputed)}"
                f" · {self.remaining} open",
            ),
            id="curate-status",
            markup=False,
        )
        with Horizontal(id="columns"):
            with VerticalScroll(id="left"):  # focusable: long texts scroll by key
                yield DiffView(example.premise, example.hypothesis)
                yield Static(opinions_text(self.entry.opinions), id="opinions", markup=False)
            with VerticalScroll(id="right", can_focus=False):
                yield LabelChoice("Final label", self.desk.labels, example.label, id="label")
                if "tags" in self.entry.disputed or example.pair_id is None:
                    yield TagPicker(example.fine_tags)
                else:  # a pair's tags are disputed and settled on its first direction
                    yield Static(
                        Text.assemble(
                            ("Tags (the pair's, not disputed here): ", "bold"),
                            ", ".join(example.fine_tags) or "none",
                        ),
                        id="pair-tags",
                        markup=False,
                    )
                yield Input(placeholder="Why (kept in the history)", id="note")
        yield Static(id="problems", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#problems").display = False
        self.query_one("#label").focus()

    async def action_settle(self) -> None:
        example = self.entry.example
        await self._store(
            lambda: self.desk.settle(
                self.entry,
                self.query_one("#label", LabelChoice).value,
                pickers[0].selected if (pickers := self.query(TagPicker)) else example.fine_tags,
                self.query_one("#note", Input).value,
            )
        )

    def _example_id(self) -> int:
        return self.entry.example.id

    GONE = "has no open disagreement for you now"
    UNSAVED = "Your decision"

    def has_unsaved_work(self) -> bool:
        """The form starts as the example stands: a label or tags changed, or a reason typed."""
        example = self.entry.example
        pickers = self.query(TagPicker)
        return bool(
            self.query_one("#label", LabelChoice).value != example.label
            or (pickers and set(pickers[0].selected) != set(example.fine_tags))
            or self.query_one("#note", Input).value.strip()
        )

    def _fresh(self, example_id: int) -> QueueEntry | None:
        return self.desk.queue_entry(example_id)

    def _refill(self, fresh: QueueEntry) -> None:
        self.entry = fresh
