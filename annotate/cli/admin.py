"""Commands that look after a store and serve it: migrate, backup, check, serve."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from annotate.cli.context import Format, app, options
from annotate.cli.output import print_json, print_table, say, warn
from annotate.errors import UserError
from annotate.wording import count_of, plural, shell_word

if TYPE_CHECKING:
    from annotate.protocol.crowd_config import CrowdConfig
    from annotate.workspace import Workspace


@app.command("migrate")
def migrate_command(
    ctx: typer.Context,
    fmt: Format = typer.Option(Format.table, "--format", help="table (for people) or json"),
) -> None:
    """Upgrade a store made by an earlier annotate to this version's schema, in place.

    A SQLite store is first copied (consistently, under the write lock) to a file beside it,
    whose name is printed; PostgreSQL migrates inside one transaction. Nothing is lost: every
    study, label, decision and curation set is kept. What a migration merges (a curator's
    name stored two ways by an earlier release, and the review given twice that made) is
    printed."""
    from annotate.store.schema import migrate_store

    ws = options(ctx).workspace(any_schema=True)
    result = migrate_store(ws.engine, waiting=warn)
    if fmt is Format.json:
        print_json(
            {
                "store": result.store,
                "changed": result.changed,
                "from_schema": int(result.from_revision),
                "to_schema": int(result.to_revision),
                "backup": None if result.backup is None else str(result.backup),
                "notes": list(result.notes),
            }
        )
        return
    if not result.changed:
        say(f"{result.store} is at schema {int(result.to_revision)} already: nothing to do")
        return
    if result.backup is not None:
        say(f"backup of the store written to {result.backup}")
    say(
        f"migrated {result.store} from schema {int(result.from_revision)} to "
        f"{int(result.to_revision)}"
    )
    for note in result.notes:
        say(note)


@app.command("backup")
def backup_command(
    ctx: typer.Context,
    path: Path = typer.Argument(..., help="The file to write the copy to"),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace PATH if it exists"),
    fmt: Format = typer.Option(Format.table, "--format", help="table (for people) or json"),
) -> None:
    """Copy a SQLite store consistently, even while annotators are working on it.

    For a PostgreSQL store it says which pg_dump command to run."""
    from annotate.store.backup import backup_store

    ws = options(ctx).workspace(any_schema=True)  # an old store may be copied before migrating
    result = backup_store(ws.engine, path, overwrite=overwrite)
    if fmt is Format.json:
        print_json(
            {
                "store": ws.shown,
                "path": str(result.path),
                "bytes": result.size_bytes,
                "verified": True,
            }
        )
        return
    say(f"backup of {ws.shown} written to {result.path} ({result.size_bytes:,} bytes, verified)")


@app.command("check")
def check_command(ctx: typer.Context, fmt: Format = typer.Option(Format.table, "--format")) -> None:
    """Verify the store's invariants: at most k labels per test item, no test label without a
    passing gate decision, no duplicate labels (exit status 1 on any violation)."""
    from annotate.store.check import check_store

    ws = options(ctx).workspace()
    report = check_store(ws.engine)
    if fmt is Format.json:
        print_json(report.as_dict())
    if report.damaged:
        first = report.violations[0].detail
        more = (
            f" (and {len(report.violations) - 1} more problems)"
            if len(report.violations) > 1
            else ""
        )
        warn(
            f"error: the store {ws.shown} is damaged: {first}{more}. Restore it from a backup "
            '(docs: "Running a study", "Recovering from a backup").'
        )
    elif fmt is Format.json:
        pass
    elif report.ok:
        say(
            f"{ws.shown}: no violation ({count_of(len(report.checks), 'check')}, "
            f"{count_of(report.studies, 'study')}, {count_of(report.labels, 'label')})"
        )
    else:
        print_table(
            [vars(v) for v in report.violations],
            [
                ("check", "Check"),
                ("study", "Study"),
                ("item", "Item"),
                ("annotator", "Annotator"),
                ("detail", "Detail"),
            ],
            title=f"{len(report.violations)} violations in {ws.shown}",
        )
    if not report.ok:
        raise typer.Exit(1)


@app.command("serve")
def serve_command(
    ctx: typer.Context,
    study: str = typer.Argument(
        None, help="The study annotators will work on (with --console: the one to open first)"
    ),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Address to listen on (default: this machine only)"
    ),
    port: int = typer.Option(8000, "--port", min=1, max=65535),
    annotator: str = typer.Option(
        None, "--as", help="Open every page as this annotator (default: each page asks)"
    ),
    public_url: str = typer.Option(
        None,
        "--public-url",
        help="The address browsers use, when not http://HOST:PORT (a crowd study: default the "
        "one `study crowd --url` stored)",
    ),
    forwarded_allow_ips: str = typer.Option(
        None,
        "--forwarded-allow-ips",
        help="Behind a proxy (with --public-url): the proxy's addresses, comma-separated, "
        "whose X-Forwarded-For header gives the browser's address (sign-in limits count per "
        "address). Default: believe it from nobody",
    ),
    max_sessions: int = typer.Option(
        None,
        "--max-sessions",
        min=1,
        help="With --terminal or --console: pages open at once (each runs an app process; "
        "default 20)",
    ),
    terminal: bool = typer.Option(
        False,
        "--terminal",
        help="Serve the terminal app through textual-serve (one process per tab) instead of "
        "the HTML page",
    ),
    no_tokens: bool = typer.Option(
        False,
        "--no-tokens",
        help="Serve even though some annotators have no token (anyone who can open the page "
        "may then label as them)",
    ),
    console: bool = typer.Option(
        False,
        "--console",
        help="Serve the researcher console instead (loopback only: it has no login); --as "
        "then names the researcher its decisions are recorded under",
    ),
    workers: int = typer.Option(
        1,
        "--workers",
        min=1,
        help="Server processes for the HTML page, on one port (one per core holds the most "
        "workers; they share the store, the cookie key and the sign-in limits)",
    ),
) -> None:
    """Serve the annotator page to browsers (needs `pip install 'annotate-baselines[web]'`).

    One server process holds every worker, and the page resumes where each stopped. In a
    study of named annotators the page asks for the name and token; in a crowd study workers
    enter by their platform link (no sign-in), and the address stored by `study crowd --url`
    is the public one unless --public-url overrides it. With --terminal, each tab runs the
    terminal app instead (textual-serve); with --console, the researcher console."""
    from annotate.protocol import crowd
    from annotate.protocol.studies import get_annotator, load_study
    from annotate.protocol.tokens import annotators_without_token
    from annotate.web.server import DEFAULT_MAX_SESSIONS, is_loopback, make_server

    if workers > 1 and (terminal or console):
        raise UserError(
            "--workers is for the HTML page: --terminal and --console run a process per tab"
        )
    if forwarded_allow_ips and (terminal or console):
        raise UserError("--forwarded-allow-ips is for the HTML page, not --terminal or --console")
    if max_sessions is not None and not (terminal or console):
        raise UserError(
            "--max-sessions is for --terminal and --console (a process per tab): the HTML "
            "page holds every worker in one process"
        )
    max_sessions = max_sessions or DEFAULT_MAX_SESSIONS
    ws = options(ctx).workspace()
    if console:
        _serve_console(ws, study, host, port, annotator, public_url, max_sessions)
        return
    if study is None:
        raise UserError("name the study annotators will work on (or serve the --console)")
    load_study(ws.engine, study)  # a mistyped study or name fails now, not in each browser tab
    if annotator is not None:
        get_annotator(ws.engine, annotator)
    # A crowd study's workers enter by their platform link, never by name and token.
    crowd_config = crowd.config_of(load_study(ws.engine, study))
    is_crowd = crowd_config is not None
    _check_public_url(study, crowd_config, public_url)
    without = [] if is_crowd else annotators_without_token(ws.engine, annotator)
    if without and not no_tokens:
        raise UserError(
            f"{count_of(len(without), 'annotator')} {plural(len(without), 'has')} no token "
            f"({', '.join(without[:5])}"
            f"{', …' if len(without) > 5 else ''}): a browser could label as them without one. "
            "Give each a token (`annotate annotator token NAME`), or pass --no-tokens to serve "
            "anyway"
        )
    if no_tokens:
        warn(
            "warning: --no-tokens: anyone who can open the page may sign in as an annotator "
            "who has no token, with the name alone"
        )
    if not terminal:
        from annotate.web.page.serve import page_app, run_page, run_page_workers

        page_options = {
            "host": host,
            "port": port,
            "public_url": public_url,
            "annotator": annotator,
            "require_tokens": not no_tokens,
        }
        # Built before the warning, so a missing extra or a bad --public-url fails first.
        page = page_app(ws.engine, study, **page_options)
    else:
        server = make_server(
            ws.url,
            study,
            host=host,
            port=port,
            annotator=annotator,
            public_url=public_url or (crowd_config.public_url if crowd_config else None),
            max_sessions=max_sessions,
            require_tokens=not no_tokens,
        )
    if not is_loopback(host):
        warn(
            f"warning: serving on {host}, not only on this machine: anyone who can reach "
            f"{host}:{port} can open the page. There is no login beyond annotator tokens and "
            "no encryption; prefer the default 127.0.0.1 with an SSH tunnel "
            f"(ssh -L {port}:127.0.0.1:{port} THIS_MACHINE), or an HTTPS proxy and "
            "--public-url https://…"
        )
    if not terminal and workers > 1:
        ws.engine.dispose()  # each server process opens its own
        run_page_workers(
            workers, ws.url, study, forwarded_allow_ips=forwarded_allow_ips, **page_options
        )
        return
    if not terminal:
        run_page(page, host=host, port=port, forwarded_allow_ips=forwarded_allow_ips)
        return
    ws.engine.dispose()  # the tabs' processes open their own connections
    server.serve()


def _check_public_url(study: str, config: CrowdConfig | None, public_url: str | None) -> None:
    """Warn where the public address the links were made with is not the one served: every
    POST from the links' address would be refused by the origin check."""
    from urllib.parse import urlsplit

    def origin_of(url: str) -> str:
        parts = urlsplit(url)
        return f"{parts.scheme}://{parts.netloc}".lower()

    stored = config.public_url if config is not None else None
    if stored and public_url and origin_of(stored) != origin_of(public_url):
        warn(
            f"warning: --public-url {public_url} is not the address the study's links were "
            f"made with ({stored}, `study crowd --url`): POSTs from pages opened by those links "
            f"are refused. Run `annotate study crowd {shell_word(study)} --url {public_url}` "
            "if the address has changed"
        )
    if config is not None and config.platform == "mturk":
        effective = public_url or stored
        if not (effective or "").startswith("https://"):
            warn(
                "warning: MTurk shows the page in a frame on its https site: serve it behind "
                "https and give that address (`study crowd --url https://…` or --public-url)"
            )


def _serve_console(
    ws: Workspace,
    study: str | None,
    host: str,
    port: int,
    researcher: str | None,
    public_url: str | None,
    max_sessions: int,
) -> None:
    """`serve --console`: the same server and guards (the page's own origin only, at most
    max_sessions tabs), running the console. It can close the gate and exclude items with no
    login, so it is never bound beyond this machine (reach it through an SSH tunnel), and it
    answers only a browser that brings the key in the address it prints."""
    import secrets

    from annotate.protocol.studies import load_study
    from annotate.settings import settings
    from annotate.web.server import is_loopback, make_server

    if not is_loopback(host):
        raise UserError(
            f"the console has no login, so it is served on this machine only, not on {host}; "
            f"use the default 127.0.0.1 and an SSH tunnel (ssh -L {port}:127.0.0.1:{port} "
            "THIS_MACHINE)"
        )
    if study is not None:
        load_study(ws.engine, study)  # a mistyped study fails now, not in each browser tab
    # The loopback keeps other machines out, not other users or programs of this one: the
    # console answers only a browser that brings the key, printed to the researcher alone.
    key = settings().console_key or secrets.token_urlsafe(24)
    server = make_server(
        ws.url,
        study,
        host=host,
        port=port,
        annotator=researcher,
        public_url=public_url,
        max_sessions=max_sessions,
        console=True,
        access_key=key,
    )
    ws.engine.dispose()  # the tabs' processes open their own connections
    server.serve()
