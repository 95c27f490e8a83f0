"""Pick fine tags from the GLUE taxonomy, grouped under their coarse categories.

Keyboard first: type part of a tag (or of a category) in the filter and press Enter to toggle
the best match; ↓ goes into the list, where Space or Enter toggles the highlighted tag and ↑ at
the top returns to the filter.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from annotate.taxonomy import CATEGORY_OF, FINE, TAXONOMY, search_tags
from annotate.terminal_text import SafeText as Text


class TagPicker(Vertical):
    DEFAULT_CSS = """
    TagPicker { height: auto; border: round $panel-lighten-2; }
    TagPicker:focus-within { border: round $accent; }
    TagPicker #tag-list { height: 10; border: none; }
    TagPicker #tag-chosen { padding: 0 1; }
    """

    class Changed(Message):
        def __init__(self, picker: TagPicker, tags: list[str]) -> None:
            super().__init__()
            self.picker = picker
            self.tags = tags

        @property
        def control(self) -> TagPicker:
            return self.picker

    def __init__(self, selected: Iterable[str] = (), *, id: str = "tags") -> None:
        super().__init__(id=id)
        self.chosen: set[str] = {t for t in selected if t in CATEGORY_OF}
        self.border_title = "Phenomena"

    @property
    def selected(self) -> list[str]:
        """The chosen fine tags in taxonomy order."""
        return [t for t in FINE if t in self.chosen]

    def set_selected(self, tags: Iterable[str]) -> None:
        """Choose exactly `tags`, with an empty filter (the whole taxonomy in view)."""
        self.chosen = {t for t in tags if t in CATEGORY_OF}
        self.query_one("#tag-filter", Input).value = ""
        self._rebuild()
        self._changed()

    def compose(self) -> ComposeResult:
        yield Input(
            placeholder="filter: type, Enter toggles the best match, ↓ list", id="tag-filter"
        )
        yield OptionList(id="tag-list")
        yield Static(id="tag-chosen", markup=False)

    def on_mount(self) -> None:
        self._rebuild()
        self._show_chosen()

    # --- building the list --------------------------------------------------------------------
    def _prompt(self, tag: str) -> Text:
        mark = "[x] " if tag in self.chosen else "[ ] "
        return Text.assemble((mark, "bold" if tag in self.chosen else "dim"), tag)

    def _rebuild(self) -> None:
        query = self.query_one("#tag-filter", Input).value
        matches = set(search_tags(query))
        options: list[Option] = []
        for coarse, tags in TAXONOMY.items():
            shown = [t for t in tags if t in matches]
            if shown:
                options.append(Option(Text(coarse, style="bold underline"), disabled=True))
                options += [Option(self._prompt(t), id=t) for t in shown]
        tag_list = self.query_one("#tag-list", OptionList)
        tag_list.set_options(options)
        best = self.best_match()
        if best is not None:
            tag_list.highlighted = tag_list.get_option_index(best)

    def best_match(self) -> str | None:
        """The tag Enter in the filter toggles: the best match of the filter text."""
        query = self.query_one("#tag-filter", Input).value
        if not query.strip():
            return None
        matches = search_tags(query)
        return matches[0] if matches else None

    def _show_chosen(self) -> None:
        chosen = self.selected
        text = (
            Text.assemble(("Chosen: ", "bold"), " · ".join(chosen))
            if chosen
            else Text("No tag chosen yet", style="dim italic")
        )
        self.query_one("#tag-chosen", Static).update(text)

    def _changed(self) -> None:
        self._show_chosen()
        self.post_message(self.Changed(self, self.selected))

    # --- toggling -----------------------------------------------------------------------------
    def toggle(self, tag: str) -> None:
        self.chosen ^= {tag}
        tag_list = self.query_one("#tag-list", OptionList)
        if any(option.id == tag for option in tag_list.options):
            tag_list.replace_option_prompt(tag, self._prompt(tag))
        self._changed()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "tag-filter":
            event.stop()
            self._rebuild()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "tag-filter":
            return
        event.stop()
        best = self.best_match()
        if best is None:
            if event.value.strip():
                self.notify(f"No tag matches {event.value.strip()!r}.", markup=False)
            return
        self.toggle(best)
        event.input.value = ""  # ready for the next tag

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.toggle(event.option.id)

    def on_key(self, event: events.Key) -> None:
        tag_list = self.query_one("#tag-list", OptionList)
        tag_filter = self.query_one("#tag-filter", Input)
        if event.key == "down" and tag_filter.has_focus:
            event.stop()
            tag_list.focus()
        elif event.key == "space" and tag_list.has_focus:
            event.stop()
            option = tag_list.highlighted_option
            if option is not None and option.id is not None:
                self.toggle(option.id)
        elif event.key == "up" and tag_list.has_focus and self._at_top(tag_list):
            event.stop()
            tag_filter.focus()

    @staticmethod
    def _at_top(tag_list: OptionList) -> bool:
        first = next((i for i, o in enumerate(tag_list.options) if not o.disabled), None)
        return tag_list.highlighted is None or tag_list.highlighted == first
