"""The item on the screen travels with its answer as a signed ticket: who it was served to,
the item, its phase and number, when and in which window it was shown, and what kind of
serving it was (a catch item, a refresher, a revision)."""

from __future__ import annotations

from datetime import datetime, timedelta

from itsdangerous import BadSignature

from annotate.protocol.session import AnnotatorSession, ItemView
from annotate.web.page.state import PageState


def ticket(
    page: PageState, session: AnnotatorSession, item: ItemView, kind: str, *, ready: bool = False
) -> str:
    """`ready`: the item went out with the feedback before it, to be shown later (its time
    is then moved on by what the page says: from_ticket)."""
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
            **({"d": 1} if ready else {}),
        }
    )


def from_ticket(
    page: PageState,
    session: AnnotatorSession,
    value: str,
    *,
    shown_after: str | None = None,
    by: datetime | None = None,
) -> tuple[ItemView, str] | None:
    """The item a ticket names, as the session served it (the catch or refresher item
    the session remembered then is remembered again), or None for a bad ticket.

    An item sent ready with the feedback before it was shown when "continue" was pressed:
    `shown_after` is the page's count of milliseconds from the feedback to that press, which
    moves the item's time on, never past `by` (when the answer came)."""
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
        _shown_at(datetime.fromisoformat(data["s"]), data.get("d"), shown_after, by),
        bool(data.get("r")),
    )
    kind = str(data.get("k", ""))
    if kind == "catch":
        session.catch_items.add(item.item_id)
    elif kind == "refresher":
        session.refresher_items.add(item.item_id)
    return item, kind


def _shown_at(
    served: datetime, ready: object, after_ms: str | None, by: datetime | None
) -> datetime:
    """When a ready item was shown: `after_ms` past its serving (the page's own count, so
    untrusted: a number of milliseconds, or ignored), at the latest `by`."""
    if not ready or by is None or not after_ms or not after_ms.isdigit() or len(after_ms) > 9:
        return served
    return min(served + timedelta(milliseconds=int(after_ms)), max(by, served))
