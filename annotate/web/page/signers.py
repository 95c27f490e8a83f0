"""The page's two signatures: the session cookie (who signed in, the CSRF token) and the ticket
that carries the item on the screen with its answer. Both are HMACs of the server's secret
bound to the study it serves (`study_key`), so a tampered cookie or ticket is refused, processes
serving one study with one secret take each other's, and no other study's or store's are taken."""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime
from typing import Any

from itsdangerous import Signer, TimestampSigner, URLSafeSerializer
from itsdangerous.encoding import base64_encode
from starlette.middleware.sessions import SessionMiddleware
from starlette.types import ASGIApp

COOKIE = "annotate_session"
COOKIE_MAX_AGE = 14 * 24 * 3600
TICKET_SALT = "annotate.item"


def study_key(secret: str, study_id: int, name: str, created_at: datetime) -> str:
    """The key that signs one study's cookies and tickets: `secret` (ANNOTATE_WEB_SECRET, often
    one value for a lab's every server) bound to the study in its store. Signed with the bare
    secret, a cookie said only a name ("w01", "ana"), and another store's server with the same
    secret let it in as its own, different, person of that name; another study's kept its
    consent. The study's row (its number, name and when it was made) tells stores apart, and
    is the same for every process and host serving it."""
    study = f"annotate.study\0{study_id}\0{name}\0{created_at.isoformat()}"
    return hmac.new(secret.encode(), study.encode(), hashlib.sha256).hexdigest()


class KeyDerivedOnce:
    """itsdangerous derives the same HMAC key from the secret on every signature it makes
    or checks (three per answer: the session cookie and the item's ticket): derived once."""

    def derive_key(self, secret_key: str | bytes | None = None) -> bytes:
        derived: dict[Any, bytes] = self.__dict__.setdefault("_derived", {})
        key = derived.get(secret_key)
        if key is None:
            key = derived[secret_key] = super().derive_key(secret_key)  # type: ignore[misc]
        return key


class TicketSigner(KeyDerivedOnce, Signer):
    pass


class CookieSigner(KeyDerivedOnce, TimestampSigner):
    pass


class Sessions(SessionMiddleware):
    """Starlette's signed-cookie sessions, with a signer that derives its key once."""

    def __init__(self, app: ASGIApp, secret_key: str, **options: Any) -> None:
        super().__init__(app, secret_key, **options)
        self.signer = CookieSigner(secret_key)


class TicketSerializer(URLSafeSerializer):
    """itsdangerous's URL-safe serializer, less its zlib compression: a ticket is some 100
    bytes of JSON, which zlib shortens by a sixth for 40 microseconds (setting up its
    compressor), on every item shown. Reading takes either form, so tickets signed before
    this change still read."""

    def dump_payload(self, obj: Any) -> bytes:
        return base64_encode(self.serializer.dumps(obj, **self.serializer_kwargs).encode())


def ticket_serializer(secret: str) -> URLSafeSerializer:
    """Signs and reads the item tickets (`tickets.py` says what they hold)."""
    return TicketSerializer(secret, salt=TICKET_SALT, signer=TicketSigner)


def session_options(secret: str, *, secure: bool, framed: bool = False) -> dict[str, Any]:
    """The `Sessions` middleware's options: a SameSite=Lax cookie for two weeks, Secure behind
    https. Lax, not Strict: a crowd worker clicks the study link on the platform's site, and
    the arrival answers with a redirect to "/"; that navigation began on another site, so a
    Strict cookie set by the arrival is not sent with it, and the worker was asked to open
    their link (every time). Lax is sent on such a top-level GET and on no cross-site POST;
    the Origin check (guard.py) and the CSRF token refuse forms from anywhere else. A page
    framed by another site (MTurk's) is a third party there, where a Lax cookie is neither
    set nor sent: behind https its cookie is SameSite=None and partitioned (kept for that one
    top-level site only)."""
    third_party = framed and secure
    return {
        "secret_key": secret,
        "session_cookie": COOKIE,
        "same_site": "none" if third_party else "lax",
        "https_only": secure,
        "partitioned": third_party,
        "max_age": COOKIE_MAX_AGE,
    }
