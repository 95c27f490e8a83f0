"""The base of the messages screens send to the app."""

from __future__ import annotations

from textual.message import Message
from textual.screen import Screen


class ScreenMessage(Message):
    """A request from a screen, which the app acts on only while that screen is on top: a timer
    tick or a second keypress can arrive after the screen was already replaced, and acting on
    it would skip a screen (or replace one still being mounted)."""

    def __init__(self, origin: Screen) -> None:
        super().__init__()
        self.origin = origin
