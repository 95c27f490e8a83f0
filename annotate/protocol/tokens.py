"""Annotator tokens: a secret an annotator gives before labelling, so that on a shared store
(or a browser page) nobody labels under someone else's name.

Tokens are optional: an annotator registered with one (`annotate annotator add NAME --token`)
must give it; others need none. The store keeps only a salted scrypt hash, so reading the
store (or a backup of it) does not reveal a token; a refused token is counted on the annotator.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from sqlalchemy import Engine, select, update
from sqlmodel import Session

from annotate.errors import UserError
from annotate.protocol.studies import add_annotator, get_annotator
from annotate.store.engine import write_session
from annotate.store.models import Annotator

SCHEME = "scrypt"
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
"""scrypt cost: ~50 ms and 16 MB per check, the interactive-login figures of the scrypt paper;
slow enough to make guessing costly, fast enough not to be felt at a prompt."""
SALT_BYTES = 16
KEY_BYTES = 32
TOKEN_BYTES = 18
"""Random bytes in a new token (24 URL-safe characters)."""


SIGN_IN_REFUSED = "Unknown name or wrong token (the refusal is recorded). Try again."
"""What every way in says to a refused sign-in (`annotate label`'s prompt, the HTML page, a
textual-serve tab): one sentence for an unknown name and a wrong token, so none tells which
names exist. A wrong token of a known name is counted on the annotator, and the pages count
every refusal in their limiter, so "recorded" is always true."""


class TokenRefused(UserError):
    """A wrong or missing token (the refusal has been counted): SIGN_IN_REFUSED."""


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def _derive(token: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(
        token.encode("utf-8"), salt=salt, n=n, r=r, p=p, dklen=KEY_BYTES, maxmem=64 * 2**20
    )


def hash_token(token: str, *, salt: bytes | None = None) -> str:
    """`scrypt$N$r$p$SALT$KEY` (hex): the parameters travel with the hash, so they can be
    raised later without breaking the tokens already issued."""
    salt = salt if salt is not None else secrets.token_bytes(SALT_BYTES)
    key = _derive(token, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
    return f"{SCHEME}${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${salt.hex()}${key.hex()}"


def verify_token(token: str, stored: str) -> bool:
    """Whether `token` matches the stored hash (constant-time; a malformed hash never does)."""
    try:
        scheme, n, r, p, salt, key = stored.split("$")
        if scheme != SCHEME:
            return False
        expected = bytes.fromhex(key)
        actual = _derive(token, bytes.fromhex(salt), int(n), int(r), int(p))
    except (ValueError, MemoryError):
        return False
    return hmac.compare_digest(actual, expected)


def needs_token(engine: Engine, name: str) -> bool:
    """Whether annotator `name` exists and has a token (an unknown name needs none here: the
    session refuses it with its own message)."""
    with Session(engine) as session:
        stored = session.scalar(select(Annotator.token_hash).where(Annotator.name == name))
    return stored is not None


def authenticate(engine: Engine, name: str, token: str | None) -> None:
    """Let `name` in when they need no token or gave the right one; otherwise count the
    refusal on the annotator and raise TokenRefused."""
    with Session(engine) as session:
        stored = session.scalar(select(Annotator.token_hash).where(Annotator.name == name))
    check_token(engine, name, token, stored)


def check_token(engine: Engine, name: str, token: str | None, stored: str | None) -> None:
    """`authenticate` with the annotator's token hash (`stored`) already read."""
    if stored is None:
        return
    if token and verify_token(token.strip(), stored):
        return
    with write_session(engine) as session:
        session.execute(
            update(Annotator)
            .where(Annotator.name == name)
            .values(failed_logins=Annotator.failed_logins + 1)
        )
    raise TokenRefused(SIGN_IN_REFUSED)


def add_annotator_with_token(engine: Engine, name: str) -> tuple[Annotator, str]:
    """Register an annotator with a new token; the token is returned once and never stored."""
    token = new_token()
    return add_annotator(engine, name, token_hash=hash_token(token)), token


def reset_token(engine: Engine, name: str) -> str:
    """Give an existing annotator a new token (the old one stops working)."""
    token = new_token()
    with write_session(engine) as session:
        result = session.execute(
            update(Annotator).where(Annotator.name == name).values(token_hash=hash_token(token))
        )
        if result.rowcount != 1:
            raise UserError(f"no annotator named {name!r}")
    return token


def annotators_without_token(engine: Engine, only: str | None = None) -> list[str]:
    """Real annotators who could sign in with their name alone (not simulate's, nor crowd
    workers, who enter by their link only: signed_in): `only` that one when given."""
    query = select(Annotator.name).where(
        Annotator.token_hash.is_(None),  # type: ignore[union-attr]
        Annotator.synthetic.is_(False),  # type: ignore[attr-defined]
        Annotator.platform.is_(None),  # type: ignore[union-attr]
    )
    if only is not None:
        query = query.where(Annotator.name == only)
    with Session(engine) as session:
        return list(session.scalars(query.order_by(Annotator.name)))


def labelling_as(engine: Engine, name: str) -> None:
    """Refuse `annotate label --as NAME` for a name that is nobody to label as: one of
    `annotate simulate`'s annotators (a person's answers would be stored as synthetic) or a
    crowd worker (who answers through their link and is paid for what is stored under their
    pseudonym). An unknown name is left to the app, which says how to add it."""
    try:
        annotator = get_annotator(engine, name)
    except UserError:
        return
    own = "label under your own name (`--as YOUR_NAME --create`)"
    if annotator.synthetic:
        raise UserError(
            f"{name!r} is one of `annotate simulate`'s annotators, whose answers are marked "
            f"synthetic: {own}"
        )
    if annotator.platform is not None:
        raise UserError(
            f"{name!r} is a crowd worker ({annotator.platform}), who answers through the "
            f"study's link and is paid for the answers stored under that name: {own}"
        )


def sign_in_check(engine: Engine, name: str, token: str, *, require_token: bool) -> bool:
    """Whether a page (the HTML page, a textual-serve tab) may sign `name` in with `token`: a
    real annotator of this store with the right token or, when tokens are not required, none
    to give. A wrong token of a known name is counted on the annotator (`authenticate`)."""
    return signed_in(engine, name, token, require_token=require_token) is not None


_UNKNOWN_NAME_HASH = hash_token("", salt=b"\0" * SALT_BYTES)
"""Checked against for a name that is nobody to sign in as, so that a refusal takes as long
whether the name exists or not (a quick refusal would tell which names do)."""


def signed_in(engine: Engine, name: str, token: str, *, require_token: bool) -> Annotator | None:
    """The annotator `sign_in_check` lets in, or None. Simulate's annotators and crowd workers
    (who enter by their platform link, under a pseudonym anyone could guess) are nobody to
    sign in as."""
    try:
        annotator = get_annotator(engine, name)
    except UserError:
        annotator = None
    if annotator is None or annotator.synthetic or annotator.platform is not None:
        verify_token(token or "-", _UNKNOWN_NAME_HASH)  # as long as a known name's refusal
        return None
    if require_token and annotator.token_hash is None:
        return None
    try:
        check_token(engine, name, token, annotator.token_hash)
    except TokenRefused:
        return None
    return annotator
