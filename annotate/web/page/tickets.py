"""The item on the screen travels with its answer as a signed ticket: who it was served to,
the item, its phase and number, when and in which window it was shown, and what kind of
serving it was (a catch item, a refresher, a revision)."""

from __future__ import annotations

from datetime import datetime

from itsdangerous import BadSignature

from annotate.protocol.session import AnnotatorSession, ItemView
from annotate.web.page.state import PageState


def ticket(page: PageState, session: AnnotatorSession, item: ItemView, kind: str) -> str:
    return page.tickets.dumps(
        {
            "a": session.annotator_id,
            "i": item.item_id,
            "p": item.phase,
            "n": item.number,
            "s": item.shown_at.isoformat(),
            "k": kind,
            "r": item.refresher,
            "src": item.source_id,
            "w": session.visit_id,
        }
    )


def from_ticket(
    page: PageState, session: AnnotatorSession, value: str
) -> tuple[ItemView, str] | None:
    """The item a ticket names, as the session served it (the catch or refresher item
    the session remembered then is remembered again), or None for a bad ticket."""
    try:
        data = page.tickets.loads(value)
    except BadSignature:
        return None
    if data.get("a") != session.annotator_id:
        return None
    if data.get("w"):
        session.attach_window(int(data["w"]))  # the window the item was shown in
    fields = page.item_fields(int(data["i"]))
    if fields is None:
        return None
    item = ItemView(
        int(data["i"]),
        str(data["src"]),
        str(data["p"]),
        dict(fields),
        int(data["n"]),
        datetime.fromisoformat(data["s"]),
        bool(data.get("r")),
    )
    kind = str(data.get("k", ""))
    if kind == "catch":
        session.catch_items.add(item.item_id)
    elif kind == "refresher":
        session.refresher_items.add(item.item_id)
    return item, kind
