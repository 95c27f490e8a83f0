"""Cues for blocks that hold more than they show: the passage, the pinned question or
hypothesis, and the training feedback. Each can overflow at 80x24 (a MultiRC question with 14
candidates, a hypothesis of ten lines); each scrolls from the keyboard, and the border above
the pinned block or the feedback says so, with the key, while there is more below."""

from __future__ import annotations

from textual.screen import Screen
from textual.widget import Widget

PASSAGE_KEYS = "PgDn"
PINNED_KEYS = "Shift+↓"
FEEDBACK_KEYS = "↓"


def more_below(block: Widget | None) -> bool:
    """Whether `block` has lines under its visible part."""
    return block is not None and block.max_scroll_y > 0 and block.scroll_y < block.max_scroll_y


def cue(*parts: tuple[str, Widget | None, str]) -> str:
    """The border title saying what continues below, e.g. "passage continues: PgDn · more
    below: Shift+↓"; "" when everything is in view. `parts`: (what, block, key)."""
    said = [f"{what}: {key}" for what, block, key in parts if more_below(block)]
    return " · ".join(said)


def watch_overflow(screen: Screen, selector: str, show: object) -> None:
    """Call `show` whenever a block matching `selector` scrolls or changes its length, and
    once after the first layout (the screen also calls it on resize)."""
    for block in screen.query(selector):
        screen.watch(block, "scroll_y", show, init=False)  # type: ignore[arg-type]
        # A new length comes with the layout that gives the block its new height only after
        # this call: read both once that layout is done, not a height that is about to change.
        screen.watch(block, "virtual_size", lambda *_: screen.call_after_refresh(show), init=False)
    screen.call_after_refresh(show)  # type: ignore[arg-type]


def show_pinned_cue(screen: Screen) -> None:
    """The border above the pinned question or hypothesis: what continues below it (the
    passage, or the block itself), and with which key."""
    pinned = screen.query("#pinned")
    if pinned:
        pinned.first().border_title = cue(
            ("passage continues", screen.query_one("#body"), PASSAGE_KEYS),
            ("more below", pinned.first(), PINNED_KEYS),
        )


def scroll_pinned(screen: Screen, direction: int) -> None:
    for pinned in screen.query("#pinned"):
        pinned.scroll_relative(y=direction * 2, animate=False)
