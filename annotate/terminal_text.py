"""`SafeText`: a `rich.text.Text` whose strings are made terminal-safe as they go in.

Renderers (CLI tables, reports, the TUIs) build every piece of text from data or people as a
`SafeText`, so a control character cannot reach the terminal by any of the ways a `Text` grows:
construction, `append`, `assemble`. Text is never parsed as markup either.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from annotate.text import terminal_safe


class SafeText(Text):
    def __init__(self, text: str = "", *args: Any, **kwargs: Any) -> None:
        super().__init__(terminal_safe(text), *args, **kwargs)

    def append(self, text: str | Text, style: Any = None) -> SafeText:  # type: ignore[override]
        if isinstance(text, str):
            text = terminal_safe(text)
        elif not isinstance(text, SafeText) and not text.plain.isprintable():
            # A Text built elsewhere: keep its styles only if its text needs no change.
            safe = terminal_safe(text.plain)
            if safe != text.plain:
                text = SafeText(text.plain, style=text.style)
        super().append(text, style)
        return self
