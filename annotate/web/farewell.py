"""A browser tab's last words, from its app process to the page (`annotate serve --terminal`).

textual-serve closes a tab's page when its app exits, and the page then says only "Session
ended.": an annotator who quit was not told that their answers are saved, nor whether to come
back, as `annotate label` tells them once its screen closes. The app sends those words as a
meta packet of its own type (Textual's web driver carries any), the server passes them to the
page as a text message (textual-serve's page script ignores types it does not know), and the
page shows them in place of "Session ended." (templates/app_index.html). Kept apart from the
app and the server so that each imports only this."""

from __future__ import annotations

import json

GOODBYE = "goodbye"
"""The meta packet's type, and the page message's."""
MAX_CHARS = 2000
"""The most of the words passed on (they are two short lines)."""


def page_message(meta: dict[str, object]) -> str | None:
    """The page's text message for a goodbye packet from the app, None for any other."""
    if meta.get("type") != GOODBYE:
        return None
    lines = meta.get("lines")
    if not isinstance(lines, list):
        return None
    text = "\n".join(str(line) for line in lines)[:MAX_CHARS]
    return json.dumps([GOODBYE, text])
