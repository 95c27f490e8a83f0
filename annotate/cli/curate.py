"""`annotate curate SET …`: diagnostic sets, from import to authoring, review and export.

One command, one mode per call (chosen by its option); the TUI modes import Textual lazily.
"""

from __future__ import annotations

from pathlib import Path

import typer

from annotate.cli.context import app, options
from annotate.cli.output import console, print_json, say, warn
from annotate.store.curation_models import ensure_curation_tables
from annotate.workspace import Workspace

HELP = """Curate diagnostic sets: NLI pairs built by a minimal edit, labelled in both directions
and tagged with the GLUE taxonomy (4 categories, 33 tags).

\b
  annotate curate                                   list the sets
  annotate curate --tags                            the 33 tags, as spelt in the files
  annotate curate SET --create [--two-way]          an empty set (three-way labels by default)
  annotate curate SET --import FILE [--as NAME]     diagnostic-full.tsv or AX-b.jsonl as content
                                                    (creates SET; a file already in it is skipped)
  annotate curate SET --as NAME                     write new pairs (TUI)
  annotate curate SET --as NAME --review            blind second opinions on others' examples (TUI)
  annotate curate SET --as NAME --adjudicate        settle disagreements you may settle (TUI)
  annotate curate SET --list [--search TEXT] [--tag TAG] [--label L] [--author A] [--retired]
  annotate curate SET --show ID                     one example with its history
  annotate curate SET --edit ID --as NAME --set KEY=VALUE …
                     (KEY: premise, hypothesis, label, tags as "A;B", domain, note)
  annotate curate SET --retire ID --as NAME [--reason TEXT]   (never deleted; --restore ID)
  annotate curate SET --queue                       the disagreement queue
  annotate curate SET [--stats] [--format json]     counts per category and tag, labels,
                                                    domains, review coverage and agreement
  annotate curate SET --export PATH [--format glue|superglue]

\b
Authoring keys: Tab moves between fields; labels with 1/2/3 or e/n/c; in the tag filter,
type and press Enter to toggle the best match (↓ into the list, Space toggles); Ctrl+S saves,
Ctrl+R clears, Ctrl+Q quits. A pair needs both sentences (different, not already in the set),
both directions labelled and at least one tag; more than 40% of words changed gets a warning.
Pasted line breaks are joined with a space.

\b
Second opinions are blind (you see only the sentences). A disagreement is settled by the
example's author, or by someone who neither wrote nor reviewed it; history is kept.
--export writes the active examples in the original layout (GLUE: CRLF TSV, tags in their
category columns; SuperGLUE: AX-b JSON lines, two-way labels); import the file back with
`annotate import glue/ax PATH --split test` (or superglue/axb) to run a human study on it."""


def _chosen_mode(modes: dict[str, object]) -> str | None:
    # `is`, not `in`: 0 == False, and --show 0 must count as chosen (and then fail clearly).
    chosen = [name for name, value in modes.items() if value is not None and value is not False]
    if len(chosen) > 1:
        raise typer.BadParameter(f"choose one of {', '.join(chosen)} per call")
    return chosen[0] if chosen else None


def _output_format(fmt: str | None) -> str:
    fmt = fmt or "table"
    if fmt not in ("table", "json"):
        raise typer.BadParameter(
            "use table or json (glue|superglue go with --export)", param_hint="--format"
        )
    return fmt


def _need_name(name: str | None, mode: str) -> str:
    if not name:
        raise typer.BadParameter(f"{mode} records who did it: add --as NAME")
    return name


def _parse_settings(settings: list[str]) -> dict[str, object]:
    from annotate.curation.taxonomy import parse_tag_list

    changes: dict[str, object] = {}
    for setting in settings:
        key, sep, value = setting.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"expected KEY=VALUE, got {setting!r}", param_hint="--set")
        key = key.strip()
        changes[key] = parse_tag_list(value) if key == "tags" else value
    return changes


def _workspace(ctx: typer.Context, create: bool = False) -> Workspace:
    ws = options(ctx).workspace(create=create)
    ensure_curation_tables(ws.engine)  # a store made before curation existed
    return ws


@app.command("curate", help=HELP)
def curate(
    ctx: typer.Context,
    set_name: str = typer.Argument(None, metavar="SET", help="The diagnostic set"),
    create: bool = typer.Option(False, "--create", help="Create an empty set"),
    two_way: bool = typer.Option(
        False, "--two-way", help="With --create: entailment / not_entailment labels (AX-b)"
    ),
    import_path: Path = typer.Option(
        None, "--import", metavar="FILE", help="diagnostic-full.tsv or AX-b.jsonl"
    ),
    name: str = typer.Option(None, "--as", metavar="NAME", help="Your curator name"),
    review: bool = typer.Option(False, "--review", help="Blind second opinions (TUI)"),
    adjudicate: bool = typer.Option(False, "--adjudicate", help="Settle disagreements (TUI)"),
    list_: bool = typer.Option(False, "--list", help="List examples (filters below)"),
    search: str = typer.Option(
        None, "--search", metavar="TEXT", help="Text in premise, hypothesis or note"
    ),
    tag: str = typer.Option(None, "--tag", metavar="TAG", help="A fine tag or a coarse category"),
    label: str = typer.Option(None, "--label", metavar="LABEL", help="A label of the set"),
    author: str = typer.Option(None, "--author", metavar="NAME", help="Examples by this curator"),
    retired: bool = typer.Option(False, "--retired", help="List retired examples instead"),
    show: int = typer.Option(None, "--show", metavar="ID", help="One example and its history"),
    edit: int = typer.Option(None, "--edit", metavar="ID", help="Change an example (--set)"),
    settings: list[str] = typer.Option(
        [], "--set", metavar="KEY=VALUE", help="KEY=VALUE for --edit (repeatable)"
    ),
    retire: int = typer.Option(None, "--retire", metavar="ID", help="Retire an example"),
    restore: int = typer.Option(None, "--restore", metavar="ID", help="Bring one back"),
    reason: str = typer.Option("", "--reason", metavar="TEXT", help="Why (kept in the history)"),
    queue: bool = typer.Option(False, "--queue", help="The disagreement queue"),
    stats: bool = typer.Option(False, "--stats", help="Statistics of the set"),
    export_path: Path = typer.Option(None, "--export", metavar="PATH", help="Write the set"),
    fmt: str = typer.Option(
        None, "--format", metavar="FORMAT", help="table|json; with --export: glue|superglue"
    ),
    tags: bool = typer.Option(False, "--tags", help="Print the taxonomy"),
) -> None:
    filters = any(v is not None for v in (search, tag, label, author)) or retired
    mode = _chosen_mode(
        {
            "--create": create,
            "--import": import_path,
            "--list": list_ or filters,
            "--show": show,
            "--edit": edit,
            "--retire": retire,
            "--restore": restore,
            "--queue": queue,
            "--stats": stats,
            "--export": export_path,
            "--review": review,
            "--adjudicate": adjudicate,
            "--tags": tags,
        }
    )
    if mode == "--tags":
        from annotate.curation.render import taxonomy_table

        console().print(taxonomy_table())
        return
    if set_name is None:
        if mode is not None:
            raise typer.BadParameter(f"{mode} needs a set name", param_hint="SET")
        _list_sets(ctx, _output_format(fmt))
        return
    if mode == "--export":
        _export(ctx, set_name, export_path, fmt)
        return
    if mode in ("--review", "--adjudicate") or (mode is None and name):
        _run_tui(ctx, set_name, _need_name(name, mode or "writing"), mode)
        return
    out = _output_format(fmt)
    if mode == "--create":
        _create(ctx, set_name, two_way, name or "")
    elif mode == "--import":
        _import(ctx, set_name, import_path, name or "", out)
    elif mode == "--list":
        _list(ctx, set_name, search, tag, label, author, retired, out)
    elif mode == "--show":
        _show(ctx, set_name, show, out)
    elif mode == "--edit":
        _edit(ctx, set_name, edit, _need_name(name, "--edit"), settings, reason, out)
    elif mode in ("--retire", "--restore"):
        example_id = retire if mode == "--retire" else restore
        _retire(ctx, set_name, example_id, _need_name(name, mode), mode == "--retire", reason)
    elif mode == "--queue":
        _queue(ctx, set_name, out)
    else:  # --stats, and a bare `annotate curate SET`
        _stats(ctx, set_name, out)


# --- the modes ---------------------------------------------------------------------------------


def _list_sets(ctx: typer.Context, out: str) -> None:
    from annotate.curation.render import sets_table
    from annotate.curation.sets import set_rows

    rows = set_rows(_workspace(ctx).engine)
    if out == "json":
        print_json(rows)
    elif not rows:
        say("no curation sets yet: `annotate curate SET --create` or `--import FILE`")
    else:
        console().print(sets_table(rows))


def _create(ctx: typer.Context, set_name: str, two_way: bool, by: str) -> None:
    from annotate.curation.sets import create_set

    scheme = "two-way" if two_way else "three-way"
    info = create_set(_workspace(ctx, create=True).engine, set_name, scheme=scheme, created_by=by)
    say(f"set {info.name!r} created ({', '.join(info.labels)})")


def _import(ctx: typer.Context, set_name: str, path: Path, by: str, out: str) -> None:
    from annotate.curation.importing import import_diagnostic

    summary = import_diagnostic(_workspace(ctx, create=True).engine, set_name, path, by)
    if out == "json":
        print_json(summary.__dict__)
    elif summary.already_imported:
        warn(f"{path}: already imported into set {set_name!r} (same sha256); skipped")
    else:
        labels = ", ".join(f"{n} {label}" for label, n in summary.labels.items())
        created = " (new set)" if summary.created else ""
        say(
            f"set {set_name!r}{created}: {summary.rows} examples ({summary.pairs} pairs; "
            f"{labels}) imported from {path}"
        )


def _list(
    ctx: typer.Context,
    set_name: str,
    search: str | None,
    tag: str | None,
    label: str | None,
    author: str | None,
    retired: bool,
    out: str,
) -> None:
    from annotate.curation.examples import ExampleQuery, find_examples
    from annotate.curation.render import examples_table

    query = ExampleQuery(text=search, tag=tag, label=label, author=author, retired=retired)
    found = find_examples(_workspace(ctx).engine, set_name, query)
    if out == "json":
        print_json([e.as_dict() for e in found])
        return
    what = ("retired " if retired else "") + ("example" if len(found) == 1 else "examples")
    console().print(examples_table(found, f"{len(found)} {what} in {set_name}"))


def _show(ctx: typer.Context, set_name: str, example_id: int, out: str) -> None:
    from annotate.curation.examples import example_history, get_example
    from annotate.curation.render import example_tables

    engine = _workspace(ctx).engine
    example = get_example(engine, set_name, example_id)
    history = example_history(engine, set_name, example_id)
    if out == "json":
        print_json({"example": example.as_dict(), "history": history})
        return
    for table in example_tables(example, history):
        console().print(table)


def _edit(
    ctx: typer.Context,
    set_name: str,
    example_id: int,
    by: str,
    settings: list[str],
    reason: str,
    out: str,
) -> None:
    from annotate.curation.examples import edit_example

    if not settings:
        raise typer.BadParameter("say what to change: --set KEY=VALUE", param_hint="--set")
    engine = _workspace(ctx).engine
    example = edit_example(engine, set_name, example_id, by, _parse_settings(settings), reason)
    if out == "json":
        print_json(example.as_dict())
        return
    say(f"example {example.id} is at version {example.version}")


def _retire(
    ctx: typer.Context, set_name: str, example_id: int, by: str, retire: bool, reason: str
) -> None:
    from annotate.curation.examples import set_retired

    example = set_retired(_workspace(ctx).engine, set_name, example_id, by, retire, reason)
    state = "retired (kept in the store; --restore brings it back)" if retire else "active again"
    say(f"example {example.id} {state}")


def _queue(ctx: typer.Context, set_name: str, out: str) -> None:
    from annotate.curation.render import queue_table
    from annotate.curation.review import disagreement_queue

    entries = disagreement_queue(_workspace(ctx).engine, set_name)
    if out == "json":
        print_json(
            [
                {
                    "example": e.example.as_dict(),
                    "disputed": e.disputed,
                    "opinions": [o.__dict__ for o in e.opinions],
                }
                for e in entries
            ]
        )
        return
    console().print(queue_table(entries, f"{len(entries)} open disagreement(s) in {set_name}"))


def _stats(ctx: typer.Context, set_name: str, out: str) -> None:
    from annotate.curation.render import stats_tables
    from annotate.curation.stats import set_statistics

    stats = set_statistics(_workspace(ctx).engine, set_name)
    if out == "json":
        print_json(stats)
        return
    for table in stats_tables(stats):
        console().print(table)


def _export(ctx: typer.Context, set_name: str, path: Path, fmt: str | None) -> None:
    from annotate.curation.export import export_set

    if fmt is not None and fmt not in ("glue", "superglue"):
        raise typer.BadParameter("with --export use glue or superglue", param_hint="--format")
    summary = export_set(_workspace(ctx).engine, set_name, path, fmt)
    say(
        f"{summary.rows} examples of set {set_name!r} written to {path} ({summary.format} "
        f"layout); to run a human study on them: annotate import {summary.task} {path} "
        "--split test"
    )


def _run_tui(ctx: typer.Context, set_name: str, name: str, mode: str | None) -> None:
    # Textual costs ~0.3 s to import: only the screen modes pay for it.
    from annotate.tui.curate.app import create_curate_app

    engine = _workspace(ctx).engine
    tui = create_curate_app(
        engine, set_name, name, review=mode == "--review", adjudicate=mode == "--adjudicate"
    )
    tui.run()
    say(tui.summary())
