"""The header line: the task's title, then the study and the annotator, fitted to the width.

At 80 columns "ReCoRD: Reading Comprehension with Commonsense Reasoning — study · annotator"
does not fit, and Textual's header would cut off the end: the names, which say whose session
this is. The title gives way first: its short form (the part before the colon), then an ellipsis.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual import events
from textual.content import Content
from textual.widgets import Header, Static

SIDE_CELLS = 18
"""Cells the header keeps for its icon (8) and the space on the right (10)."""

SEPARATOR = " — "
ELLIPSIS = "…"


def ellipsize(text: str, cells: int) -> str:
    """`text` cut to at most `cells` terminal cells, with … when cut."""
    if cell_len(text) <= cells:
        return text
    if cells <= 0:
        return ""
    while text and cell_len(text) + 1 > cells:
        text = text[:-1]
    return text.rstrip() + ELLIPSIS


def short_title(title: str) -> str:
    """ "ReCoRD: Reading Comprehension …" -> "ReCoRD" (a title without a colon stays)."""
    head, colon, _ = title.partition(":")
    return head.strip() if colon and head.strip() else title


def fit_title(title: str, sub_title: str, cells: int) -> tuple[str, str]:
    """(title, sub_title) that fit in `cells` together (with the separator between them); the
    sub-title (study and annotator) is kept whole as long as anything of the title fits."""
    if cells <= 0 or not sub_title:
        return (ellipsize(title, cells) if cells > 0 else title), sub_title
    room = cells - cell_len(SEPARATOR) - cell_len(sub_title)
    for candidate in (title, short_title(title)):
        if cell_len(candidate) <= room:
            return candidate, sub_title
    if room >= 4:
        return ellipsize(short_title(title), room), sub_title
    return "", ellipsize(sub_title, cells)


class FittedHeader(Header):
    """Textual's header, with the title and sub-title fitted to the width (see `fit_title`)."""

    def format_title(self) -> Content:
        width = self.size.width
        title, sub_title = self.screen_title, self.screen_sub_title
        if width:
            title, sub_title = fit_title(title, sub_title, width - SIDE_CELLS)
        if not title:
            return Content(sub_title).stylize("dim")
        return self.app.format_title(title, sub_title)

    def on_resize(self, event: events.Resize) -> None:
        self.query_one("HeaderTitle", Static).update(self.format_title())
