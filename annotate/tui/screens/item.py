"""One item to answer (or, when revising, the previous test item to answer again).

The screen only collects the answer: it posts `ItemScreen.Answered` with the time of the
keypress, and the app stores it (and shows the next item only once the store has committed).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Size
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, OptionList, Static

from annotate.presentation.answer_keys import ScreenKeys, item_keys, typed_key
from annotate.presentation.feedback import previous_answer
from annotate.presentation.progress import status_phase
from annotate.protocol.session import ItemView, Progress
from annotate.protocol.studies import TEST, TRAINING
from annotate.specs import LabelOption, TaskSpec
from annotate.store.models import utcnow
from annotate.terminal_text import SafeText as Text
from annotate.tui.screens.flag import FlagModal, shortened
from annotate.tui.screens.messages import ScreenMessage
from annotate.tui.widgets.answer_bar import AnswerBar
from annotate.tui.widgets.choosers import CandidateJudgements, EntityChoice
from annotate.tui.widgets.item_body import FIELD_CLASS, Block, build_item, item_blocks
from annotate.tui.widgets.overflow import scroll_pinned, show_pinned_cue, watch_overflow
from annotate.tui.widgets.room import fit_blocks
from annotate.tui.widgets.status import StatusBar
from annotate.tui.widgets.title import FittedHeader

DIGITS = tuple("0123456789")
"""Number keys (a tuple, not a string: "" is in every string)."""


class ItemScreen(Screen[None]):
    BINDINGS = [
        Binding("f", "flag", "Flag / comment"),
        Binding("u", "revise", "Revise previous"),
        Binding("escape", "cancel", "Back", show=True),
        # Priority: the passage scrolls even while the MultiRC/ReCoRD option list has focus.
        Binding("pageup", "scroll_body(-1)", "Scroll", show=False, priority=True),
        Binding("pagedown", "scroll_body(1)", "Scroll", show=False, priority=True),
        # The pinned question or hypothesis, when it is longer than its few rows.
        Binding("shift+up", "scroll_pinned(-1)", "Scroll", show=False, priority=True),
        Binding("shift+down", "scroll_pinned(1)", "Scroll", show=False, priority=True),
    ]

    class Answered(ScreenMessage):
        """The annotator answered `item` (or, with `revising`, changed the previous answer)."""

        def __init__(
            self,
            origin: Screen,
            item: ItemView,
            answer: Any,
            answered_at: datetime,
            flag: bool,
            comment: str | None,
            revising: bool,
        ) -> None:
            super().__init__(origin)
            self.item = item
            self.answer = answer
            self.answered_at = answered_at
            self.flag = flag
            self.comment = comment
            self.revising = revising

    class ReviseRequested(ScreenMessage):
        """The annotator asked to go back to the previous test answer."""

    def __init__(
        self,
        spec: TaskSpec,
        item: ItemView,
        progress: Progress,
        started: float,
        *,
        revising: bool = False,
        previous: Any = None,
    ) -> None:
        super().__init__()
        self.spec = spec
        self.item = item
        self.progress = progress
        self.started = started
        self.revising = revising
        self.previous = previous
        self.flag = False
        self.comment: str | None = None
        self.answered = False
        """Set at the first answer: a second keypress before the next item is ignored."""
        self.parts = build_item(spec, item.fields, previous if revising else None)
        self.options: dict[str, LabelOption] = {o.key: o for o in spec.answer_options()}
        self.typed = ""
        """The start of a key of several characters ("1" of a scale's "10"), as typed."""

    def compose(self) -> ComposeResult:
        yield FittedHeader()
        yield StatusBar(status_phase(self.item), self.progress, self.started)
        if self.revising:
            yield Static(self._revise_banner(), id="revise-banner", markup=False)
        yield Static("", id="flag-note", markup=False)
        with VerticalScroll(id="body"):
            yield from self.parts.scrolling
        if self.parts.pinned:
            with Vertical(id="pinned"):
                yield from self.parts.pinned
        if self.parts.chooser is not None:
            yield self.parts.chooser
        # ReCoRD: the entity a number key names, by name, before Enter stores it.
        yield Static("", id="entity-cue", markup=False)
        yield AnswerBar(self.spec)
        yield Footer()

    def on_mount(self) -> None:
        fit_blocks(self)
        self.query_one("#flag-note").display = False
        self._show_cue()
        focus = self.parts.chooser or self.query_one("#body")
        focus.focus()
        watch_overflow(self, "#body, #pinned", self._show_overflow)

    def on_resize(self) -> None:
        fit_blocks(self)
        self.call_after_refresh(self._show_overflow)

    def _show_overflow(self, *_: object) -> None:
        show_pinned_cue(self)

    async def show_item(self, item: ItemView, progress: Progress) -> None:
        """Show the next item in this same screen. Rebuilding only the item's own widgets,
        not the whole screen, keeps keypress-to-next-item fast (bench/bench_keypress.py);
        when its texts go where the last item's went (the usual case: one task, one
        layout), only the texts change, which is cheaper still."""
        self.item, self.progress = item, progress
        self.flag, self.comment, self.answered = False, None, False
        blocks = item_blocks(self.spec, item.fields)
        body = self.query_one("#body", VerticalScroll)
        pinned = self.query_one("#pinned", Vertical) if blocks.pinned else None
        if (
            not blocks.chooser
            and _same_shape(body, blocks.scrolling)
            and (pinned is None or _same_shape(pinned, blocks.pinned))
        ):
            for widget, block in zip(body.children, blocks.scrolling, strict=True):
                _retext(cast(Static, widget), block.content)
            if pinned is not None:
                for widget, block in zip(pinned.children, blocks.pinned, strict=True):
                    _retext(cast(Static, widget), block.content)
        else:
            old_chooser = self.parts.chooser
            self.parts = build_item(self.spec, item.fields, None, blocks)
            await _refill(body, self.parts.scrolling)
            if pinned is not None:
                await _refill(pinned, self.parts.pinned)
            if old_chooser is not None and self.parts.chooser is not None:
                await old_chooser.remove()
                # Where compose put it: above the cue that names its entity.
                await self.mount(self.parts.chooser, before=self.query_one("#entity-cue"))
                fit_blocks(self)
        # Now, not after the next refresh (the default): the new item's first frame is drawn
        # from its top, and no second pass of the message loop waits for it.
        body.scroll_home(animate=False, immediate=True)
        self.query_one("#flag-note").display = False
        self._show_cue()
        self.call_after_refresh(self._show_overflow)
        self.query_one(StatusBar).set_progress(status_phase(item), progress)
        focus = self.parts.chooser or body
        if self.focused is not focus:  # focusing again would only redraw the passage
            self.call_after_refresh(focus.focus)

    def _revise_banner(self) -> Text:
        return Text.assemble(
            ("Revising your previous answer", "bold"),
            f" ({previous_answer(self.spec, self.previous)}). ",
            "Answer again to change it, or press Escape to go back.",
        )

    # --- answers ----------------------------------------------------------------------------
    def on_key(self, event: events.Key) -> None:
        chooser = self.parts.chooser
        digit = event.character if event.character in DIGITS else None
        if isinstance(chooser, EntityChoice) and digit is not None:
            event.stop()
            chooser.type_digit(digit)  # highlights and names it; Enter stores it
            return
        if self._typed_key(event):
            return
        option = self.options.get(event.key) or self.options.get(event.character or "")
        if option is None:
            if event.character == "u" and self.item.phase == TRAINING:
                self.notify(
                    "Training answers are final: you have seen the right answer.", markup=False
                )
            return
        event.stop()
        self.action_answer_key(option.key)

    def _typed_key(self, event: events.Key) -> bool:
        """A rating scale past 9: keys of several characters typed one at a time ("1" then "0"
        for 10; "1" then Enter for 1), the start shown in the cue. True when the key was
        taken so."""
        if all(len(k) == 1 for k in self.options):
            return False
        if event.key == "escape" and self.typed:  # clears a key half typed ("1" of "10")
            event.stop()
            self.typed = ""
            self._show_cue()
            return True
        if event.key == "enter" and self.typed in self.options:
            event.stop()
            key, self.typed = self.typed, ""
            self._show_cue()
            self.action_answer_key(key)
            return True
        if not event.character or not event.character.isprintable():
            return False
        key, self.typed = typed_key(self.options, self.typed, event.character)
        self._show_cue()
        if key is None and not self.typed:
            return False
        event.stop()
        if key is not None:
            self.action_answer_key(key)
        return True

    def action_answer_key(self, key: str) -> None:
        """The answer with this key: pressed, or clicked/tapped in the answer bar."""
        option = self.options.get(key)
        if option is None:
            return
        if isinstance(self.parts.chooser, CandidateJudgements):
            self.parts.chooser.judge(option.value)
        elif isinstance(self.parts.chooser, EntityChoice):
            self.notify("Type an entity's number, or choose with ↑↓ and Enter.", markup=False)
        else:
            self.answer(option.value)

    def on_entity_choice_cue_changed(self, event: EntityChoice.CueChanged) -> None:
        event.stop()
        self._show_cue()

    def _show_cue(self) -> None:
        cue = self.query_one("#entity-cue", Static)
        chooser = self.parts.chooser
        cue.display = isinstance(chooser, EntityChoice) or bool(self.typed)
        if isinstance(chooser, EntityChoice):
            cue.update(chooser.cue())
        elif self.typed:
            longer = [k for k in self.options if k != self.typed and k.startswith(self.typed)]
            now = f"Enter answers {self.typed}; " if self.typed in self.options else ""
            cue.update(
                Text(
                    f"{self.typed}… {now}type {' or '.join(k[len(self.typed) :] for k in longer)}"
                    f" for {' or '.join(longer)}; Escape clears it"
                )
            )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        chooser = self.parts.chooser
        if isinstance(chooser, EntityChoice):
            self.answer(chooser.entities[event.option_index])
        elif isinstance(chooser, CandidateJudgements):
            if chooser.remaining:
                self.notify(f"Judge every answer first ({chooser.remaining} left).", markup=False)
            else:
                self.answer(chooser.answer())

    def answer(self, value: Any) -> None:
        if self.answered:
            return
        self.answered = True
        answered_at = utcnow()  # at the keypress, before any database work
        # To the app itself, where it is handled: bubbling through this screen's queue first
        # would add a pass of the message loop to every keypress.
        self.app.post_message(
            self.Answered(
                self, self.item, value, answered_at, self.flag, self.comment, self.revising
            )
        )

    def unsent_judgements(self) -> tuple[int, int] | None:
        """MultiRC: (judged, candidates) when judgements made here would be lost by quitting
        now (not submitted yet); None otherwise."""
        chooser = self.parts.chooser
        if self.answered or not isinstance(chooser, CandidateJudgements) or not chooser.changed:
            return None
        return len(chooser.judgements), len(chooser.answers)

    # --- other keys ---------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel":
            return self.revising
        if action in ("flag", "revise"):
            # Revising changes only the value; flags go with a new answer. Training answers
            # are final (the gold label was shown), so only test answers can be revised.
            return not self.revising and (action == "flag" or self.item.phase == TEST)
        return True

    def action_flag(self) -> None:
        self.app.push_screen(FlagModal(self.comment if self.flag else None), self._flagged)

    def _flagged(self, comment: str | None) -> None:
        if comment is None:
            return  # cancelled: keep what was there
        self.flag = True
        self.comment = comment.strip() or None
        note = self.query_one("#flag-note", Static)
        note.update(
            Text.assemble(
                ("⚑ Flagged", "bold"),
                (f": {shortened(self.comment)}" if self.comment else ""),
                " (sent with your answer)",
            )
        )
        note.display = True

    def action_revise(self) -> None:
        self.post_message(self.ReviseRequested(self))

    def help_keys(self) -> ScreenKeys:
        """The keys of this screen for its help: Shift+↑/↓ only where a text is pinned."""
        return item_keys(pinned=bool(self.query("#pinned")))

    def action_cancel(self) -> None:
        self.dismiss()

    def action_scroll_pinned(self, direction: int) -> None:
        scroll_pinned(self, direction)

    def action_scroll_body(self, direction: int) -> None:
        body = self.query_one("#body", VerticalScroll)
        if direction < 0:
            body.scroll_page_up()
        else:
            body.scroll_page_down()


def _same_shape(container: Widget, blocks: list[Block]) -> bool:
    """Whether `container` holds plain text widgets for these texts, in this order."""
    old = container.children
    return len(old) == len(blocks) and all(
        type(o) is Static and o.id == b.id and o.classes == {FIELD_CLASS}
        for o, b in zip(old, blocks, strict=True)
    )


async def _refill(container: Widget, widgets: list[Widget]) -> None:
    """Put `widgets` in `container`, in place of what it held."""
    await container.remove_children()
    await container.mount_all(widgets)


def _retext(widget: Static, content: Text) -> None:
    """New text in a laid-out widget. The screen is laid out again only if the text takes a
    different number of lines at the widget's width: a layout of the whole screen, and the
    redraw of the passage's container it brings, cost more than the rest of the keypress's
    drawing (bench/bench_keypress.py)."""
    shown = widget.content_size
    widget.update(content, layout=False)
    if not shown.width or text_height(widget, content, shown) != shown.height:
        widget.refresh(layout=True)


def text_height(widget: Static, content: Text, shown: Size) -> int:
    """The lines `content` takes in `widget` at the width it is `shown` at. When no line of
    it is wider (most hypotheses and questions), as many as it has: the text is wrapped
    once, to be drawn, not a second time to count its lines."""
    plain = content.plain
    lines = plain.split("\n")
    plain_wrap = (
        widget.styles.get_rule("text_wrap", "wrap") == "wrap"
        and not widget.styles.get_rule("line_pad", 0)
        and "\t" not in plain
    )
    if plain_wrap and all(cell_len(line) <= shown.width for line in lines):
        return len(lines)
    return widget.get_content_height(shown, shown, shown.width)
