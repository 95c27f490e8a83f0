"""How many rows the blocks below the passage may take: their caps at 24 rows and more
(MultiRC's and ReCoRD's list 9, the training feedback 12), fewer on a shorter terminal, so the
passage keeps rows to be read. At 60x20 the caps of 80x24 left a ReCoRD article one line and a
MultiRC paragraph of a ten-answer question none. The pinned question or hypothesis keeps its
cap (8, app.tcss): it is what the answer is about, and seldom long."""

from __future__ import annotations

from textual.screen import Screen

FULL_HEIGHT = 24
"""The terminal height from which every block gets its whole cap."""

CAPS = {"#chooser": 9, "#feedback": 12}
"""Each block's most rows (at FULL_HEIGHT and more)."""

LEAST = 3
"""No cap goes below this: a question or a list still shows a few rows (each scrolls)."""


def cap(block: str, height: int) -> int:
    """The rows `block` may take on a terminal `height` rows high: its cap, less a row for
    each row the terminal lacks of FULL_HEIGHT."""
    return max(LEAST, CAPS[block] - max(0, FULL_HEIGHT - height))


def fit_blocks(screen: Screen) -> None:
    """Set the caps of `screen`'s blocks for its height (on mount and on every resize)."""
    for block in CAPS:
        for widget in screen.query(block):
            widget.styles.max_height = cap(block, screen.size.height)
