"""`annotate annotator add`, `annotator token` and `annotator list`: register annotators and
their secret tokens (`annotator show` is in annotate/cli/crowd.py)."""

from __future__ import annotations

import typer

from annotate.cli.context import Format, options
from annotate.cli.groups import annotator_app
from annotate.cli.output import print_json, print_table, say


@annotator_app.command("add")
def annotator_add(
    ctx: typer.Context,
    name: str,
    token: bool = typer.Option(
        False,
        "--token",
        help="Give the annotator a secret token, printed once, asked for by `annotate label`",
    ),
    fmt: Format = typer.Option(Format.table, "--format", help="table (for people) or json"),
) -> None:
    """Register an annotator by name (with --token: and a secret they must give to label)."""
    from annotate.protocol.studies import add_annotator

    engine = options(ctx).workspace(create=True).engine
    if not token:
        annotator = add_annotator(engine, name)
        if fmt is Format.json:
            print_json({"annotator": annotator.name, "token": None})
            return
        say(f"annotator {annotator.name!r} added")
    else:
        from annotate.protocol.tokens import add_annotator_with_token

        annotator, secret = add_annotator_with_token(engine, name)
        _print_token_once(
            f"annotator {annotator.name!r} added with a token", annotator.name, secret, fmt
        )
    _warn_lookalikes(engine, annotator.name)


def _warn_lookalikes(engine, name: str) -> None:  # type: ignore[no-untyped-def]
    """Two names one to the eye (Cyrillic "аna", Latin "ana"): say so, and how they differ."""
    from sqlalchemy import select
    from sqlmodel import Session

    from annotate.cli.output import warn
    from annotate.protocol.names import confusable_with, spelled_out
    from annotate.store.models import Annotator

    with Session(engine) as session:
        others = list(session.scalars(select(Annotator.name)))
    for other in confusable_with(name, others):
        apart = "; ".join(s for s in (spelled_out(name, other), spelled_out(other, name)) if s)
        warn(
            f"warning: {name!r} looks like the existing annotator {other!r}"
            + (f" (they differ in: {apart})" if apart else "")
        )


@annotator_app.command("token")
def annotator_token(
    ctx: typer.Context,
    name: str,
    fmt: Format = typer.Option(Format.table, "--format", help="table (for people) or json"),
) -> None:
    """Give an annotator a new token (the old one stops working); printed once."""
    from annotate.protocol.tokens import reset_token

    secret = reset_token(options(ctx).workspace().engine, name)
    _print_token_once(f"new token for annotator {name!r}", name, secret, fmt)


def _print_token_once(what: str, name: str, secret: str, fmt: Format) -> None:
    # The store keeps only a salted hash: this is the one time anybody sees the token.
    if fmt is Format.json:
        print_json({"annotator": name, "token": secret})
        return
    say(f"{what}. Their token (shown only now; pass it on privately):")
    say(secret)


@annotator_app.command("list")
def annotator_list(
    ctx: typer.Context, fmt: Format = typer.Option(Format.table, "--format")
) -> None:
    """List the annotators (whether each has a token, and refused logins; never the token)."""
    from sqlalchemy import select
    from sqlmodel import Session

    from annotate.protocol.names import look_alikes
    from annotate.store.models import Annotator

    with Session(options(ctx).workspace().engine) as session:
        everyone = list(session.scalars(select(Annotator).order_by(Annotator.name)))
        alike = look_alikes(a.name for a in everyone)
        rows = [
            {
                "id": a.id,
                "name": a.name,
                "looks_like": alike[a.name],
                "token": a.token_hash is not None,
                "failed_logins": a.failed_logins,
                "created_at": a.created_at.isoformat(timespec="seconds"),
                "synthetic": a.synthetic,
                "platform": a.platform,  # never the platform id: `annotator show NAME` has it
            }
            for a in everyone
        ]
    if fmt is Format.json:
        print_json(rows)
        return
    print_table(
        rows,
        [
            ("id", "Id"),
            ("name", "Name"),
            ("token", "Token"),
            ("failed_logins", "Refused logins"),
            ("created_at", "Added"),
            ("synthetic", "Synthetic"),
            ("platform", "Platform"),
            ("looks_like", "Looks like"),
        ],
        title="Annotators",
    )
