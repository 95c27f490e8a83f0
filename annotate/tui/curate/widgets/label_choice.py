"""Choose one NLI label, keyboard first: its number, its first letter, or ←/→ to step."""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from annotate.terminal_text import SafeText as Text


def label_text(label: str) -> str:
    return label.replace("_", " ")


class LabelChoice(Widget, can_focus=True):
    """One label out of the set's labels (or none yet)."""

    DEFAULT_CSS = """
    LabelChoice { height: auto; padding: 0 1; border: round $panel-lighten-2; }
    LabelChoice:focus { border: round $accent; }
    """

    value: reactive[str | None] = reactive(None)

    class Changed(Message):
        def __init__(self, choice: LabelChoice, value: str | None) -> None:
            super().__init__()
            self.choice = choice
            self.value = value

        @property
        def control(self) -> LabelChoice:
            return self.choice

    def __init__(
        self, title: str, labels: tuple[str, ...], value: str | None = None, *, id: str
    ) -> None:
        super().__init__(id=id)
        self.labels = labels
        self.set_reactive(LabelChoice.value, value)
        self.border_title = title
        # A first letter chooses only when no other label starts with it.
        firsts = [label[0] for label in labels]
        self.letters = {
            f: label for f, label in zip(firsts, labels, strict=True) if firsts.count(f) == 1
        }

    def render(self) -> Text:
        text = Text()
        for n, label in enumerate(self.labels, start=1):
            chosen = label == self.value
            # A marker, not only reverse video: a monochrome or screen-reader view sees it too.
            text.append("✓" if chosen else " ", style="bold green")
            text.append(f"{n} ", style="bold reverse" if chosen else "bold")
            text.append(f"{label_text(label)} ", style="bold reverse" if chosen else "")
            text.append(" ")
        if self.value is None:
            text.append("(not chosen)", style="dim italic")
        return text

    def watch_value(self, value: str | None) -> None:
        self.post_message(self.Changed(self, value))

    def on_key(self, event: events.Key) -> None:
        chosen: str | None = None
        if event.character and event.character.isdigit():
            n = int(event.character)
            if 1 <= n <= len(self.labels):
                chosen = self.labels[n - 1]
        elif event.character and event.character.lower() in self.letters:
            chosen = self.letters[event.character.lower()]
        elif event.key in ("left", "right"):
            step = 1 if event.key == "right" else -1
            current = self.labels.index(self.value) if self.value in self.labels else -step
            chosen = self.labels[(current + step) % len(self.labels)]
        if chosen is not None:
            event.stop()
            self.value = chosen
